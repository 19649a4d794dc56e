"""The raw arm: one greedy call on the wording as given (the baseline every other arm is measured against).

Its confidence, where the backend reports token log-probabilities (the embedded engines always do),
is the answer's geometric-mean token probability, exp(mean token log-probability).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from evaluation.arms import templates
from evaluation.arms.base import Arm, ArmOutput
from evaluation.arms.registry import register_arm
from evaluation.records import ItemKind, ItemVariant
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
                templates.answer_messages(variant.question, kind, variant.context),
                usage=usage,
                temperature=0.0,
                max_tokens=self.max_tokens,
            )
        except UpstreamError as exc:
            return ArmOutput(answer=None, error=str(exc), usage=usage, latency_s=self.client.clock() - started)
        details: dict[str, Any] = {"finish_reason": out.finish_reason}
        if out.logprob is not None:
            details["logprob"] = out.logprob
            details["confidence"] = math.exp(min(0.0, out.logprob))
        return ArmOutput(answer=out.text.strip(), usage=usage, latency_s=self.client.clock() - started, details=details)
