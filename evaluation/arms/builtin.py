"""The five arms of METHOD §6: raw, selfpara, sc, single_call, rar."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from evaluation.arms import prompts
from evaluation.arms.base import Arm, ArmOutput, as_bool, as_float, as_int, sample_seed
from evaluation.schema import ItemKind, ItemVariant
from selfpara.config import DEPRECATED_NAMES, MAX_K, WrapConfig, build_config, is_embedded
from selfpara.errors import ConfigError, UpstreamError
from selfpara.result import Answer, Usage


class RawArm(Arm):
    """One greedy call on the question as worded."""

    name = "raw"
    description = "one greedy call on the wording as given"
    options: dict[str, Any] = {}

    async def answer(self, variant: ItemVariant, kind: ItemKind | str = "factual", *, seed: int = 0) -> ArmOutput:
        usage = Usage()
        started = time.perf_counter()
        try:
            out = await self.client.complete(
                self.model, prompts.answer_messages(variant.question, kind, variant.context),
                usage=usage, temperature=0.0, max_tokens=self.max_tokens,
            )
        except UpstreamError as exc:
            return ArmOutput(answer=None, error=str(exc), usage=usage, latency_s=time.perf_counter() - started)
        return ArmOutput(
            answer=out.text.strip(), usage=usage, latency_s=time.perf_counter() - started,
            details={"finish_reason": out.finish_reason},
        )


# WrapConfig fields the run itself sets for every arm; not arm settings.
_RUN_FIELDS = {"model", "api_base", "api_key"}


_FAILURE_FLAGS = ("paraphrase_failed", "partial_failure", "original_failed")


class SelfParaArm(Arm):
    """The selfpara pipeline itself (`SelfParaphraser.aanswer`), with any WrapConfig settings."""

    name = "selfpara"
    description = "the selfpara pipeline: k paraphrases, answer all, clustered majority vote"
    # Deprecated names (agreement) are still accepted in arm specs; WrapConfig renames them.
    options: dict[str, Any] = {f: None for f in [*WrapConfig.model_fields, *DEPRECATED_NAMES] if f not in _RUN_FIELDS}

    def validate(self) -> None:
        from selfpara.pipeline import SelfParaphraser

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
        described["config"] = self.config.public_dict()
        return described

    async def answer(self, variant: ItemVariant, kind: ItemKind | str = "factual", *, seed: int = 0) -> ArmOutput:
        started = time.perf_counter()
        messages = prompts.answer_messages(variant.question, kind, variant.context)
        try:
            wrapped = await self.paraphraser.aanswer(messages)
        except UpstreamError as exc:
            return ArmOutput(answer=None, error=str(exc), latency_s=time.perf_counter() - started)
        # A model call that failed inside the pipeline degrades the answer for reasons that are
        # not the method's: keep the answer, but mark the sample failed so a resumed run retries it.
        failed = [f for f in wrapped.flags if f in _FAILURE_FLAGS]
        return ArmOutput(
            answer=wrapped.answer,
            error=f"model call failed inside the pipeline ({', '.join(failed)})" if failed else None,
            usage=wrapped.usage,
            latency_s=time.perf_counter() - started,
            details={
                "k_kept": wrapped.k_kept,
                "vote_share": wrapped.vote_share,
                "entropy": round(wrapped.entropy, 4),
                "original_won": wrapped.original_won,
                "abstained": wrapped.abstained,
                "flags": list(wrapped.flags),
                "paraphrases": [v.text for v in wrapped.variants[1:]],
                "rejected": len(wrapped.rejected),
                "answers": [a.text if a.ok else None for a in wrapped.answers],
                "clusters": [a.cluster for a in wrapped.answers],
            },
        )


class SelfConsistencyArm(Arm):
    """k+1 samples of the same wording at temperature > 0, clustered majority vote (selfpara.vote)."""

    name = "sc"
    description = "self-consistency: k+1 samples of the same wording, majority vote with selfpara's clustering"
    options: dict[str, Any] = {
        "k": 3, "temperature": 0.7, "equivalence": "auto", "judge_model": None, "nli_model": None,
        "agreement": None,  # deprecated alias of equivalence
    }

    def validate(self) -> None:
        from selfpara.pipeline import SelfParaphraser

        s = self.settings
        s["k"] = as_int(self.label, "k", s["k"], 1, MAX_K)
        s["temperature"] = as_float(self.label, "temperature", s["temperature"], 0.01, 2.0)
        try:
            # Only the equivalence settings matter here: the vote uses the pipeline's own Equivalence.
            self.config = build_config(
                model=self.model, api_base=self.api_base, k=s["k"], equivalence=s.pop("agreement", None) or s["equivalence"],
                judge_model=s["judge_model"], nli_model=s["nli_model"],
            )
        except ConfigError as exc:
            raise ConfigError(f"arm {self.label!r}: {exc}") from None
        self.paraphraser = SelfParaphraser(self.config, client=self.client)

    async def _sample(self, messages: list[dict[str, Any]], index: int, seed: int, usage: Usage) -> Answer:
        t = time.perf_counter()
        try:
            out = await self.client.complete(
                self.model, messages, usage=usage, temperature=self.settings["temperature"],
                max_tokens=self.max_tokens, seed=sample_seed(seed, index),
            )
        except UpstreamError as exc:
            return Answer(variant=index, error=str(exc), latency_s=time.perf_counter() - t)
        return Answer(variant=index, text=out.text.strip(), logprob=out.logprob, latency_s=time.perf_counter() - t)

    async def answer(self, variant: ItemVariant, kind: ItemKind | str = "factual", *, seed: int = 0) -> ArmOutput:
        from selfpara.vote import vote

        usage = Usage()
        started = time.perf_counter()
        messages = prompts.answer_messages(variant.question, kind, variant.context)
        n = self.settings["k"] + 1
        if is_embedded(self.model):
            # One after another: concurrent questions then send the same sample index (the same
            # seed) at the same time, and the embedded model batches only calls of equal seed.
            answers = [await self._sample(messages, j, seed, usage) for j in range(n)]
        else:
            answers = list(await asyncio.gather(*(self._sample(messages, j, seed, usage) for j in range(n))))
        ok = [a for a in answers if a.ok]
        if not ok:
            errors = "; ".join(sorted({a.error or "" for a in answers}))
            return ArmOutput(answer=None, error=f"every sample failed: {errors}", usage=usage,
                             latency_s=time.perf_counter() - started)
        equivalence = self.paraphraser.equivalence_for(self.config)
        outcome = await vote(variant.question, answers, equivalence, usage)
        chosen = next(a.text for a in answers if a.variant == outcome.chosen)
        failed = len(answers) - len(ok)
        return ArmOutput(
            answer=chosen,
            error=f"{failed} of {n} samples failed" if failed else None,  # retried on resume
            usage=usage,
            latency_s=time.perf_counter() - started,
            details={
                "samples": n,
                "seeds": [sample_seed(seed, j) for j in range(n)],
                "vote_share": outcome.vote_share,
                "entropy": round(outcome.entropy, 4),
                "answers": [a.text if a.ok else None for a in answers],
                "clusters": [a.cluster for a in answers],
                "failed": len(answers) - len(ok),
            },
        )


class SingleCallArm(Arm):
    """One call that writes k rewordings, uses them to understand the intent, and gives one final answer."""

    name = "single_call"
    description = "one call: write k paraphrases, then one final answer"
    options: dict[str, Any] = {"k": 3, "extra_tokens_per_paraphrase": 40}

    def validate(self) -> None:
        s = self.settings
        s["k"] = as_int(self.label, "k", s["k"], 1, MAX_K)
        s["extra_tokens_per_paraphrase"] = as_int(self.label, "extra_tokens_per_paraphrase",
                                                  s["extra_tokens_per_paraphrase"], 0, 1000)

    async def answer(self, variant: ItemVariant, kind: ItemKind | str = "factual", *, seed: int = 0) -> ArmOutput:
        usage = Usage()
        started = time.perf_counter()
        k = self.settings["k"]
        try:
            out = await self.client.complete(
                self.model, prompts.single_call_messages(variant.question, kind, k, variant.context),
                usage=usage, temperature=0.0,
                max_tokens=self.max_tokens + k * self.settings["extra_tokens_per_paraphrase"],
            )
        except UpstreamError as exc:
            return ArmOutput(answer=None, error=str(exc), usage=usage, latency_s=time.perf_counter() - started)
        final, found = prompts.parse_final_answer(out.text)
        return ArmOutput(
            answer=final, usage=usage, latency_s=time.perf_counter() - started,
            details={"final_line_found": found, "reply": out.text},
        )


class RephraseRespondArm(Arm):
    """Rephrase-and-respond: rewrite the question more clearly, then answer the rewrite (original beside it)."""

    name = "rar"
    description = "rephrase-and-respond: rewrite the question, then answer the rewrite with the original beside it"
    options: dict[str, Any] = {"with_original": True, "rephrase_max_tokens": 96}

    def validate(self) -> None:
        s = self.settings
        s["with_original"] = as_bool(self.label, "with_original", s["with_original"])
        s["rephrase_max_tokens"] = as_int(self.label, "rephrase_max_tokens", s["rephrase_max_tokens"], 8, 4096)

    async def answer(self, variant: ItemVariant, kind: ItemKind | str = "factual", *, seed: int = 0) -> ArmOutput:
        usage = Usage()
        started = time.perf_counter()
        try:
            reply = await self.client.complete(
                self.model, prompts.rephrase_messages(variant.question, kind), usage=usage, temperature=0.0,
                max_tokens=self.settings["rephrase_max_tokens"],
            )
            rephrased = prompts.parse_rephrased(reply.text)
            question = prompts.respond_question(variant.question, rephrased, self.settings["with_original"])
            out = await self.client.complete(
                self.model, prompts.answer_messages(question, kind, variant.context), usage=usage,
                temperature=0.0, max_tokens=self.max_tokens,
            )
        except UpstreamError as exc:
            return ArmOutput(answer=None, error=str(exc), usage=usage, latency_s=time.perf_counter() - started)
        return ArmOutput(
            answer=out.text.strip(), usage=usage, latency_s=time.perf_counter() - started,
            details={"rephrased": rephrased},
        )
