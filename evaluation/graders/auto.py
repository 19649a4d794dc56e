"""`auto`: each item graded by its kind (factual: match, math: numeric, truthful: truthful)."""

from __future__ import annotations

from evaluation.graders.base import Grader
from evaluation.graders.match import MatchGrader
from evaluation.graders.numeric import NumericGrader
from evaluation.graders.truthful import TruthfulGrader
from evaluation.records import Item, Label


class AutoGrader:
    """Grades each item by its kind: factual → alias match, math → numeric, truthful → truthful match."""

    name = "auto"

    def __init__(self, by_kind: dict[str, Grader] | None = None) -> None:
        self.by_kind: dict[str, Grader] = {
            "factual": MatchGrader(),
            "math": NumericGrader(),
            "truthful": TruthfulGrader(),
            **(by_kind or {}),
        }

    async def grade(self, item: Item, answer: str | None) -> Label:
        return await self.by_kind[item.kind].grade(item, answer)
