"""The rar arm: rephrase-and-respond (rewrite the question, then answer the rewrite)."""

from __future__ import annotations

from typing import Any, ClassVar

from evaluation.arms import templates
from evaluation.arms.base import Arm, ArmOutput, as_bool, as_int
from evaluation.arms.registry import register_arm
from evaluation.records import ItemKind, ItemVariant
from selfpara.errors import UpstreamError
from selfpara.result import Usage


@register_arm("rar", "rephrase-and-respond", "rephrase_and_respond")
class RephraseRespondArm(Arm):
    """Rephrase-and-respond: rewrite the question more clearly, then answer the rewrite (original beside it)."""

    description = "rephrase-and-respond: rewrite the question, then answer the rewrite with the original beside it"
    # rephrase_max_tokens None: 96, or 3 tokens per word of the question where that is more, so that
    # the rewrite of a multi-sentence word problem is not cut off mid-sentence.
    options: ClassVar[dict[str, Any]] = {"with_original": True, "rephrase_max_tokens": None}

    def validate(self) -> None:
        s = self.settings
        s["with_original"] = as_bool(self.label, "with_original", s["with_original"])
        if s["rephrase_max_tokens"] is not None:
            s["rephrase_max_tokens"] = as_int(self.label, "rephrase_max_tokens", s["rephrase_max_tokens"], 8, 4096)

    def rephrase_budget(self, question: str) -> int:
        """Max tokens of the rephrase call for `question`."""
        fixed = self.settings["rephrase_max_tokens"]
        return int(fixed) if fixed is not None else max(96, 3 * len(question.split()))

    async def answer(self, variant: ItemVariant, kind: ItemKind | str = "factual", *, seed: int = 0) -> ArmOutput:
        usage = Usage()
        started = self.client.clock()
        try:
            reply = await self.client.complete(
                self.model,
                templates.rephrase_messages(variant.question, kind),
                usage=usage,
                temperature=0.0,
                max_tokens=self.rephrase_budget(variant.question),
            )
            rephrased = templates.parse_rephrased(reply.text)
            question = templates.respond_question(variant.question, rephrased, self.settings["with_original"])
            out = await self.client.complete(
                self.model,
                templates.answer_messages(question, kind, variant.context),
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
            details={"rephrased": rephrased, "rephrase_finish": reply.finish_reason},
        )
