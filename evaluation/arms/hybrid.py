"""The hybrid arm: rewordings and samples together (as SPUQ perturbs the input and samples the output).

At selfpara's budget for the run's k — one paraphrase call and k + 1 answer calls — each wording
is answered `samples` times at `temperature` (seeded): the original and the first
⌊(k + 1) / samples⌋ − 1 paraphrases that selfpara's own paraphrase call and filter keep (the same
call the selfpara arm makes, so both arms vote over the same rewordings). Vote slots a rejected
paraphrase leaves are filled with more samples of the original, so the arm always spends k + 2
calls (plus the paraphrase judge's, where one checks paraphrases). Every answer is sampled, so no
wording is protected: plain majority, clustered by the selfpara arm's equivalence chain, and the
confidence is the pipeline's own (`selfpara.pipeline.confidence`), as selfpara reports it.
"""

from __future__ import annotations

from typing import Any, ClassVar

from evaluation.arms import templates
from evaluation.arms.base import Arm, ArmOutput, as_int, sample_seed
from evaluation.arms.evidence import vote_details
from evaluation.arms.registry import register_arm
from evaluation.arms.self_consistency import plain_majority_pipeline, sampling_options
from evaluation.records import ItemKind, ItemVariant
from selfpara.config import MAX_K
from selfpara.errors import UpstreamError
from selfpara.result import Usage


def hybrid_wordings(question: str, kept: list[str], answer_calls: int, samples: int) -> tuple[list[str], int]:
    """(the wordings to answer after the original's first sample, in order; the paraphrases used).

    The original is answered `samples` times, then each used paraphrase `samples` times; the
    calls a missing paraphrase leaves go to further samples of the original, so that
    1 + len(wordings) == answer_calls.
    """
    used = kept[: max(0, answer_calls // samples - 1)]
    wordings = [question] * (samples - 1) + [p for p in used for _ in range(samples)]
    wordings += [question] * (answer_calls - 1 - len(wordings))
    return wordings, len(used)


@register_arm("hybrid", "spuq")
class HybridArm(Arm):
    """The original and selfpara's first kept paraphrases, each answered `samples` times; plain-majority vote.

    Settings: k (selfpara's k, whose calls it spends; the run's --k unless given), samples (answers
    per wording, 2), temperature (1.0), equivalence, judge_model, nli_model.
    """

    description = "rewordings x samples: each kept wording answered several times at temperature 1, selfpara's calls"
    options: ClassVar[dict[str, Any]] = {"k": 3, "samples": 2, **sampling_options(1.0)}

    def validate(self) -> None:
        s = self.settings
        s["k"] = as_int(self.label, "k", s["k"], 1, MAX_K)
        # at least two wordings: with one, this is the se arm with a wasted paraphrase call
        s["samples"] = as_int(self.label, "samples", s["samples"], 1, max(1, (s["k"] + 1) // 2))
        # k paraphrase slots: the paraphrase call is selfpara's own at this k (the same call, cached once)
        self.config, self.paraphraser = plain_majority_pipeline(self, s["k"])

    async def answer(self, variant: ItemVariant, kind: ItemKind | str = "factual", *, seed: int = 0) -> ArmOutput:
        started = self.client.clock()
        messages = templates.answer_messages(variant.question, kind, variant.context)
        question = messages[-1]["content"]
        assert isinstance(question, str)
        usage = Usage()
        try:
            kept, _, _ = await self.paraphraser.paraphrase(question, usage=usage)
        except UpstreamError as exc:
            latency = self.client.clock() - started
            return ArmOutput(answer=None, error=f"paraphrase call failed: {exc}", usage=usage, latency_s=latency)
        answer_calls = self.settings["k"] + 1
        wordings, used = hybrid_wordings(question, kept, answer_calls, self.settings["samples"])
        seeds = [sample_seed(seed, j) for j in range(answer_calls)]
        try:
            wrapped = await self.paraphraser.aanswer(messages, paraphrases=wordings, seeds=seeds)
        except UpstreamError as exc:
            return ArmOutput(
                answer=None, error=f"every answer failed: {exc}", usage=usage, latency_s=self.client.clock() - started
            )
        usage.add(wrapped.usage)
        failed = sum(1 for a in wrapped.answers if not a.ok)
        return ArmOutput(
            answer=wrapped.answer,
            error=f"{failed} of {answer_calls} answers failed" if failed else None,  # retried on resume
            usage=usage,
            latency_s=self.client.clock() - started,
            # not `k_kept` / `samples`: the report reads those as selfpara's and sc's answer layouts
            details={
                "paraphrases_kept": len(kept),
                "paraphrases": kept[:used],
                "wordings": 1 + used,
                "samples_per_wording": self.settings["samples"],
                "seeds": seeds,
                "failed": failed,
                **vote_details(wrapped),
            },
        )
