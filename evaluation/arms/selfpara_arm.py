"""The selfpara arm: the pipeline itself (`SelfParaphraser.aanswer`), with any WrapConfig settings."""

from __future__ import annotations

from typing import Any, ClassVar

from evaluation.arms import templates
from evaluation.arms.base import Arm, ArmOutput
from evaluation.arms.evidence import vote_details
from evaluation.arms.registry import register_arm
from evaluation.records import ItemKind, ItemVariant
from selfpara.config import WrapConfig, build_config
from selfpara.errors import ConfigError, UpstreamError

# The call cache is the bench's own (--cache, under every arm): the library's settings would do nothing here.
_CACHE_FIELDS = {"cache", "cache_size", "cache_ttl_s"}
# WrapConfig fields the run itself sets for every arm; not arm settings.
_RUN_FIELDS = {"model", "api_base", "api_key", *_CACHE_FIELDS}


_FAILURE_FLAGS = ("paraphrase_failed", "partial_failure", "original_failed")


@register_arm("selfpara", "self-para", "self_para")
class SelfParaArm(Arm):
    """The selfpara pipeline itself (`SelfParaphraser.aanswer`), with any WrapConfig settings."""

    description = "the selfpara pipeline: k paraphrases, answer all, clustered majority vote"
    options: ClassVar[dict[str, Any]] = {f: None for f in WrapConfig.model_fields if f not in _RUN_FIELDS}

    def validate(self) -> None:
        from selfpara import SelfParaphraser

        values = {k: v for k, v in self.settings.items() if v is not None}
        values.setdefault("max_tokens", self.max_tokens)
        try:
            self.config: WrapConfig = build_config(model=self.model, api_base=self.api_base, **values)
        except ConfigError as exc:
            raise ConfigError(f"arm {self.label!r}: {exc}") from None
        self.settings = {k: v for k, v in values.items()}
        self.paraphraser = SelfParaphraser(self.config, client=self.client)

    def describe(self) -> dict[str, Any]:
        described = super().describe()
        described["config"] = {k: v for k, v in self.config.public_dict().items() if k not in _CACHE_FIELDS}
        return described

    async def answer(self, variant: ItemVariant, kind: ItemKind | str = "factual", *, seed: int = 0) -> ArmOutput:
        return await self.vote_on(variant, kind)

    async def vote_on(
        self, variant: ItemVariant, kind: ItemKind | str = "factual", paraphrases: list[str] | None = None
    ) -> ArmOutput:
        """Answer `variant` through the pipeline: with paraphrases it generates (None) or with `paraphrases`."""
        started = self.client.clock()
        messages = templates.answer_messages(variant.question, kind, variant.context)
        try:
            wrapped = await self.paraphraser.aanswer(messages, paraphrases=paraphrases)
        except UpstreamError as exc:
            return ArmOutput(answer=None, error=str(exc), latency_s=self.client.clock() - started)
        # A model call that failed inside the pipeline degrades the answer for reasons that are
        # not the method's: keep the answer, but mark the sample failed so a resumed run retries it.
        failed = [f for f in wrapped.flags if f in _FAILURE_FLAGS]
        return ArmOutput(
            answer=wrapped.answer,
            error=f"model call failed inside the pipeline ({', '.join(failed)})" if failed else None,
            usage=wrapped.usage,
            latency_s=self.client.clock() - started,
            details={
                "k_kept": wrapped.k_kept,
                "paraphrases": [v.text for v in wrapped.variants[1:]],
                "rejected": len(wrapped.rejected),
                **vote_details(wrapped),
            },
        )
