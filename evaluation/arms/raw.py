"""The raw arm: one greedy call on the wording as given (the baseline every other arm is measured against)."""

from __future__ import annotations

from typing import Any, ClassVar

from evaluation.arms import prompts
from evaluation.arms.base import Arm, ArmOutput
from evaluation.arms.registry import register_arm
from evaluation.schema import ItemKind, ItemVariant
from selfpara.errors import UpstreamError
from selfpara.result import Usage


@register_arm("raw")
class RawArm(Arm):
    """One greedy call on the question as worded."""

    description = "one greedy call on the wording as given"
    options: ClassVar[dict[str, Any]] = {}

    async def answer(self, variant: ItemVariant, kind: ItemKind | str = "factual", *, seed: int = 0) -> ArmOutput:
        usage = Usage()
        started = self.client.clock()
        try:
            out = await self.client.complete(
                self.model,
                prompts.answer_messages(variant.question, kind, variant.context),
                usage=usage,
                temperature=0.0,
                max_tokens=self.max_tokens,
            )
        except UpstreamError as exc:
            return ArmOutput(answer=None, error=str(exc), usage=usage, latency_s=self.client.clock() - started)
        return ArmOutput(
            answer=out.text.strip(),
            usage=usage,
            latency_s=self.client.clock() - started,
            details={"finish_reason": out.finish_reason},
        )
