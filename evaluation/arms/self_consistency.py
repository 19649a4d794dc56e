"""The sc arm: self-consistency built from the pipeline's own answer and vote steps.

The original wording is answered k+1 times at temperature > 0 (one seed per sample) by
`SelfParaphraser.aanswer(..., paraphrases=[question] * k, seeds=...)`, so the samples
are clustered exactly as the selfpara arm's paraphrase answers are, and voted by plain
majority (overrule margin 1): sample 0 is not the user's original and gets no protection.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from evaluation.arms import templates
from evaluation.arms.base import Arm, ArmOutput, as_float, as_int, sample_seed
from evaluation.arms.evidence import vote_details
from evaluation.arms.registry import register_arm
from evaluation.records import ItemKind, ItemVariant
from selfpara.config import MAX_K, WrapConfig, build_config
from selfpara.errors import ConfigError, UpstreamError

if TYPE_CHECKING:
    from selfpara import SelfParaphraser


def sampling_options(temperature: float) -> dict[str, Any]:
    """The settings of an arm that samples at `temperature` (its default) and votes with selfpara's clustering."""
    return {"temperature": temperature, "equivalence": "auto", "judge_model": None, "nli_model": None}


def plain_majority_pipeline(arm: Arm, k: int) -> tuple[WrapConfig, SelfParaphraser]:
    """The pipeline a sampling arm votes with: `k` paraphrase slots, the arm's temperature, equivalence and
    judges, plain majority. ConfigError naming the arm on a bad setting.

    No sample is the original: the overrule margin that protects a user's own wording would let sample 0
    (drawn at T > 0) beat a 2-vote majority.
    """
    from selfpara import SelfParaphraser

    s = arm.settings
    s["temperature"] = as_float(arm.label, "temperature", s["temperature"], 0.01, 2.0)
    try:
        config = build_config(
            model=arm.model,
            api_base=arm.api_base,
            k=k,
            temperature=s["temperature"],
            max_tokens=arm.max_tokens,
            equivalence=s["equivalence"],
            overrule_margin=1,
            judge_model=s["judge_model"],
            nli_model=s["nli_model"],
        )
    except ConfigError as exc:
        raise ConfigError(f"arm {arm.label!r}: {exc}") from None
    return config, SelfParaphraser(config, client=arm.client)


@register_arm("sc", "self-consistency", "self_consistency", "selfconsistency")
class SelfConsistencyArm(Arm):
    """k+1 samples of the same wording at temperature > 0, voted with the selfpara pipeline's clustering.

    Settings: k (the run's --k unless given) or n = k + 1, the samples in all (`sc[n=5]`); not both.
    """

    k_settings = ("k", "n")
    description = "self-consistency: k+1 samples of the same wording, majority vote with selfpara's clustering"
    options: ClassVar[dict[str, Any]] = {
        "k": 3,
        "n": None,  # samples in all (k + 1): sc[n=5] is sc[k=4]
        **sampling_options(0.7),
    }

    def validate(self) -> None:
        s = self.settings
        if s["n"] is not None:
            # n is the call budget written the way a comparison at equal calls states it: k + 1 samples.
            s["k"] = as_int(self.label, "n", s["n"], 2, MAX_K + 1) - 1
            s["n"] = s["k"] + 1
        s["k"] = as_int(self.label, "k", s["k"], 1, MAX_K)
        self.build(s["k"] + 1)

    def build(self, samples: int) -> None:
        """Set `samples` (the answer calls per question) and the pipeline that draws and votes them."""
        self.samples = samples
        self.config, self.paraphraser = plain_majority_pipeline(self, samples - 1)

    async def answer(self, variant: ItemVariant, kind: ItemKind | str = "factual", *, seed: int = 0) -> ArmOutput:
        started = self.client.clock()
        messages = templates.answer_messages(variant.question, kind, variant.context)
        n = self.samples
        seeds = [sample_seed(seed, j) for j in range(n)]
        question = messages[-1]["content"]
        assert isinstance(question, str)
        try:
            wrapped = await self.paraphraser.aanswer(messages, paraphrases=[question] * (n - 1), seeds=seeds)
        except UpstreamError as exc:
            return ArmOutput(answer=None, error=f"every sample failed: {exc}", latency_s=self.client.clock() - started)
        failed = sum(1 for a in wrapped.answers if not a.ok)
        return ArmOutput(
            answer=wrapped.answer,
            error=f"{failed} of {n} samples failed" if failed else None,  # retried on resume
            usage=wrapped.usage,
            latency_s=self.client.clock() - started,
            details={
                "samples": n,
                "seeds": seeds,
                "failed": failed,
                **vote_details(wrapped),
            },
        )
