"""What a grader is, and the labelling rule every match-based grader shares."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from evaluation.records import Item, Label
from selfpara.pipeline.offline import is_abstention


def label_by_match(answer: str | None, gold: list[str], matches: Any) -> Label:
    """correct if `matches(answer, gold)`; not_attempted if empty or an abstention; else incorrect.

    A hedge that still gives the gold answer counts as correct (SimpleQA convention).
    """
    if answer is None or not answer.strip():
        return "not_attempted"
    if matches(answer, gold):
        return "correct"
    return "not_attempted" if is_abstention(answer) else "incorrect"


@runtime_checkable
class Grader(Protocol):
    """Labels one answer to one item."""

    name: str

    async def grade(self, item: Item, answer: str | None) -> Label: ...


def declines(answer: str | None) -> bool:
    """No answer, an empty one, or an abstention ("I don't know")."""
    return answer is None or not answer.strip() or is_abstention(answer)
