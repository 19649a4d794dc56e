"""The filters a paraphrase candidate goes through (METHOD §2.2): near-copies and off-topic lines, the
drift checks, then the configured equivalence check."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from selfpara.pipeline.drift import DRIFT_CHECKS
from selfpara.pipeline.lexicon.text import overlap, shares_content, word_changes
from selfpara.result import RejectedParaphrase


def lexical_filter(
    question: str,
    candidates: list[str],
    max_overlap: float = 0.8,
    reject_unrelated: bool = False,
    min_word_changes: int | None = None,
) -> tuple[list[str], list[RejectedParaphrase]]:
    """Drop near-copies of `question` and of candidates already kept; keep the rest, in order.

    A candidate is a near-copy of a text when its word overlap with it reaches
    `max_overlap` and, if `min_word_changes` is set, it also adds and removes fewer than
    that many words (so that a short question's real rewording, which cannot change many
    words, survives: "What is 20 percent of 50?" vs "What is 20% of the number 50?" is 3
    changes at overlap 0.83). With `reject_unrelated`, candidates sharing no content word
    with `question` are dropped too: a weak model's off-topic output, not a rewording.
    """
    check = LexicalFilter(question, max_overlap, reject_unrelated, min_word_changes)
    rejected = [r for cand in candidates if (r := check(cand)) is not None]
    return check.kept, rejected


LEXICAL_REASONS = ("empty", "unrelated", "overlap")
"""The rejection reasons of the lexical filter (the drift checks and the equivalence check give the others)."""


class LexicalFilter:
    """`lexical_filter` one candidate at a time: call it on each in order; it remembers those it kept."""

    def __init__(
        self,
        question: str,
        max_overlap: float = 0.8,
        reject_unrelated: bool = False,
        min_word_changes: int | None = None,
    ) -> None:
        self.question, self.max_overlap = question, max_overlap
        self.reject_unrelated, self.min_word_changes = reject_unrelated, min_word_changes
        self.kept: list[str] = []

    def __call__(self, cand: str) -> RejectedParaphrase | None:
        """Why `cand` is rejected, or None (then it is kept, and later candidates are compared with it too)."""
        if not cand.strip():
            return RejectedParaphrase(text=cand, reason="empty")
        if self.reject_unrelated and not shares_content(cand, self.question):
            return RejectedParaphrase(text=cand, reason="unrelated", detail="no content word in common")
        copy = next(
            (
                d
                for other in [self.question, *self.kept]
                if (d := _near_copy(cand, other, self.max_overlap, self.min_word_changes))
            ),
            None,
        )
        if copy is not None:
            return RejectedParaphrase(text=cand, reason="overlap", detail=copy)
        self.kept.append(cand)
        return None


def _near_copy(cand: str, other: str, max_overlap: float, min_word_changes: int | None) -> str | None:
    """Why `cand` is a near-copy of `other` ("overlap 0.91, 1 word(s) changed"), or None."""
    score = overlap(cand, other)
    if score < max_overlap:
        return None
    if min_word_changes is None:
        return f"overlap {score:.2f}"
    changes = word_changes(cand, other)
    return f"overlap {score:.2f}, {changes} word(s) changed" if changes < min_word_changes else None


def drift_filter(question: str, candidates: list[str], checks: list[str]) -> tuple[list[str], list[RejectedParaphrase]]:
    """Keep candidates that pass every named drift check (`selfpara.pipeline.drift.DRIFT_CHECKS`).

    A rejected candidate carries the first failing check's reason (`numbers_changed`, ...)
    and what changed ("dropped 3").
    """
    verdicts = [(cand, drift_rejection(question, cand, checks)) for cand in candidates]
    return [c for c, r in verdicts if r is None], [r for _, r in verdicts if r is not None]


def drift_rejection(question: str, cand: str, checks: list[str]) -> RejectedParaphrase | None:
    """The first named drift check `cand` fails, as a rejection; None when it passes them all."""
    for name in checks:
        reason, check = DRIFT_CHECKS[name]
        detail = check(question, cand)
        if detail is not None:
            return RejectedParaphrase(text=cand, reason=reason, detail=detail)  # type: ignore[arg-type]
    return None


EquivalenceCheck = Callable[[str, str], Awaitable[tuple[bool, str]]]
"""(original, candidate) -> (keep?, detail). Raises to signal the check itself failed."""


async def equivalence_filter(
    question: str, candidates: list[str], check: EquivalenceCheck | None
) -> tuple[list[str], list[RejectedParaphrase]]:
    """Keep candidates the check judges to ask the same thing as `question` (all of them if no check).

    Checks run concurrently. A candidate whose check errors is rejected (reason
    `check_failed`) rather than kept unverified.
    """
    if check is None or not candidates:
        return list(candidates), []
    verdicts = await asyncio.gather(*(check(question, c) for c in candidates), return_exceptions=True)
    kept, rejected = [], []
    for cand, verdict in zip(candidates, verdicts, strict=True):
        if isinstance(verdict, BaseException):
            rejected.append(RejectedParaphrase(text=cand, reason="check_failed", detail=str(verdict)[:200]))
        elif verdict[0]:
            kept.append(cand)
        else:
            rejected.append(RejectedParaphrase(text=cand, reason="not_equivalent", detail=verdict[1]))
    return kept, rejected
