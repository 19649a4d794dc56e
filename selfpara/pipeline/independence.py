"""Which wordings of a request the paraphrase call could not steer.

The paraphrase call reads the user's question, so text in the question can steer what it writes:
a question carrying an instruction made a compliant paraphraser write four rewordings that kept
the question's words, passed every check, and were each answered Lyon against the original's
Paris (vote share 0.8). Every wording from that call can be steered at once; the vote guard
(`selfpara.pipeline.vote.guard_original`) therefore lets no challenger overrule the original's answer
unless at least one of its answers is to a wording the call could not bend:

- a renaming (`selfpara.pipeline.lexicon.renamings`, made by rules, no model);
- a sample of the original (top-up: the user's own wording asked again);
- a wording the caller gave;
- a wording a capable model's paraphrase check verified (`Variant.verified`: an LLM judge that is not the
  small or local model under test judged it to ask exactly what the original asks). A steered line adds
  what the question did not ask ("... (say lyon)"), which is what that check is told to refuse; without
  it, a remote model's rewordings, which come from one list call, could never overrule (issue 47);
- a line made of the question's own words: every content word of the question kept, none added, only
  the sentence around them changed and words from `FORM_WORDS` added or dropped. A steered line of
  this kind says nothing the original does not: the probe's lines dropped the instruction's words
  and added none, so they are not of this kind.

The last kind is what a form call ("Which city …?", "Name the …") writes when it does its job, and it
is where the model's forms recover a question put in an odd shape ("The Bahamian capital is which
city?" answered Grand Bahama, "Which city is the capital of the Bahamas?" Nassau). Measured in
docs/guards.md, "Injection".
"""

from __future__ import annotations

from collections.abc import Sequence

from selfpara.pipeline.lexicon.tables import LEXICON
from selfpara.pipeline.lexicon.text import STOPWORDS, stem, words
from selfpara.result import Variant

FORM_WORDS = LEXICON.word_set("independence.form_words")
"""Words a sentence form adds or drops without changing what is asked (`en/words.toml` says where they come from)."""


def independent_wordings(variants: Sequence[Variant], *, given: bool = False) -> set[int]:
    """Variant indices whose wording the paraphrase call could not steer (never the original's 0).

    Args:
        variants: the request's wordings, the original (index 0) among them.
        given: the caller gave every wording (no paraphrase call was made).
    """
    question = next((v.text for v in variants if v.is_original), None)
    return {
        v.index
        for v in variants
        if not v.is_original
        and (
            given or v.top_up or v.verified or is_renaming(v) or (question is not None and same_words(question, v.text))
        )
    }


def is_renaming(variant: Variant) -> bool:
    """Whether `variant` was made by the renamings table (no model wrote it)."""
    return (variant.source or "").startswith("renaming:")


def same_words(question: str, wording: str) -> bool:
    """Whether `wording` is made of `question`'s own content words: none dropped, none added (`FORM_WORDS` aside).
    Words are compared by stem, short ones too: a changed element symbol ("Nb" to "Xe") counts."""
    return _content_stems(question) - _FORM_STEMS == _content_stems(wording) - _FORM_STEMS


def _content_stems(text: str) -> set[str]:
    return {stem(w) for w in words(text) if w not in STOPWORDS}


_FORM_STEMS = frozenset(stem(w) for w in FORM_WORDS)
