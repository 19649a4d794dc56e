"""The single_call arm: one call that writes k rewordings, then one final answer."""

from __future__ import annotations

from typing import Any, ClassVar

from evaluation.arms import templates
from evaluation.arms.base import Arm, ArmOutput, as_int
from evaluation.arms.registry import register_arm
from evaluation.records import ItemKind, ItemVariant
from selfpara.config import MAX_K
from selfpara.errors import UpstreamError
from selfpara.result import Usage


@register_arm("single_call", "single-call", "singlecall")
class SingleCallArm(Arm):
    """One call that writes k rewordings, uses them to understand the intent, and gives one final answer."""

    description = "one call: write k paraphrases, then one final answer"
    # extra_tokens_per_paraphrase None: 40, or 2 tokens per word of the question where that is more: each
    # rewording is about as long as the question, and a reply cut before its final line has no answer.
    options: ClassVar[dict[str, Any]] = {"k": 3, "extra_tokens_per_paraphrase": None}

    def validate(self) -> None:
        s = self.settings
        s["k"] = as_int(self.label, "k", s["k"], 1, MAX_K)
        if s["extra_tokens_per_paraphrase"] is not None:
            s["extra_tokens_per_paraphrase"] = as_int(
                self.label, "extra_tokens_per_paraphrase", s["extra_tokens_per_paraphrase"], 0, 1000
            )

    def budget(self, question: str) -> int:
        """Max tokens of the one call for `question`: the answer's, plus room for k rewordings."""
        per = self.settings["extra_tokens_per_paraphrase"]
        per = int(per) if per is not None else max(40, 2 * len(question.split()))
        return self.max_tokens + self.settings["k"] * per

    async def answer(self, variant: ItemVariant, kind: ItemKind | str = "factual", *, seed: int = 0) -> ArmOutput:
        usage = Usage()
        started = self.client.clock()
        k = self.settings["k"]
        try:
            out = await self.client.complete(
                self.model,
                templates.single_call_messages(variant.question, kind, k, variant.context),
                usage=usage,
                temperature=0.0,
                max_tokens=self.budget(variant.question),
            )
        except UpstreamError as exc:
            return ArmOutput(answer=None, error=str(exc), usage=usage, latency_s=self.client.clock() - started)
        final, found = templates.parse_final_answer(out.text)
        return ArmOutput(
            answer=final,
            usage=usage,
            latency_s=self.client.clock() - started,
            details={"final_line_found": found, "finish_reason": out.finish_reason, "reply": out.text},
        )
