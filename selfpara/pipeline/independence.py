"""Which wordings of a request are independent of its paraphrase call.

The paraphrase call reads the user's question, so text in the question can steer what it writes:
a question carrying an instruction made a compliant paraphraser write four rewordings that kept
the question's words, passed every check, and were each answered Lyon against the original's
Paris (vote share 0.8). Every wording from that call can be steered at once; the vote guard
(`selfpara.pipeline.vote.guard_original`) therefore lets no challenger overrule the original's answer
unless at least one of its answers comes from a wording no model wrote from the question's text:
a renaming (`selfpara.pipeline.paraphrase.renamings`, made by rules), a sample of the original
(top-up, the user's own wording asked again), or a wording the caller gave. Measured in
docs/guards.md, "Injection".
"""

from __future__ import annotations

from collections.abc import Sequence

from selfpara.result import Variant


def independent_wordings(variants: Sequence[Variant], *, given: bool = False) -> set[int]:
    """Variant indices whose wording did not come from the paraphrase call (never the original's 0).

    Args:
        variants: the request's wordings.
        given: the caller gave every wording (no paraphrase call was made).
    """
    return {v.index for v in variants if not v.is_original and (given or v.top_up or is_renaming(v))}


def is_renaming(variant: Variant) -> bool:
    """Whether `variant` was made by the renamings table (no model wrote it)."""
    return (variant.source or "").startswith("renaming:")
