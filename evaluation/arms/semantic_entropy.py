"""The se arm: semantic entropy's cluster-count confidence (Farquhar et al., Nature 2024), as a baseline.

m samples of the original wording at temperature 1 (seeded), clustered by exactly the equivalence
chain the selfpara arm uses and voted by plain majority — the self-consistency arm's machinery
(`SelfConsistencyArm`), with its own budget and temperature. The answer is the largest cluster's
(ties broken as selfpara's vote breaks them: the cluster of sample 0, then the higher mean token
log-probability, then the earlier), and the confidence is that cluster's share of the samples,
m_largest / m; the discrete semantic entropy −Σ p_c ln p_c is recorded beside it.

Equal calls: selfpara at k makes one paraphrase call and at most k + 1 answer calls, so m = k + 2.
"""

from __future__ import annotations

from typing import Any, ClassVar

from evaluation.arms.base import ArmOutput, as_int
from evaluation.arms.registry import register_arm
from evaluation.arms.self_consistency import SelfConsistencyArm, sampling_options
from evaluation.records import ItemKind, ItemVariant
from selfpara.config import MAX_K


@register_arm("se", "semantic_entropy", "semantic-entropy")
class SemanticEntropyArm(SelfConsistencyArm):
    """m samples of one wording at temperature 1; confidence = the largest cluster's share.

    Settings: k (selfpara's k it matches in calls: m = k + 2; the run's --k unless given) or m, the
    samples in all (`se[m=6]`); not both.
    """

    k_settings = ("k", "m")
    description = "semantic entropy: m = k+2 samples at temperature 1, confidence = the largest cluster's share"
    options: ClassVar[dict[str, Any]] = {
        "k": 3,
        "m": None,  # samples in all; default k + 2, selfpara's calls at the same k
        **sampling_options(1.0),
    }

    def validate(self) -> None:
        s = self.settings
        if s["m"] is not None:
            s["m"] = as_int(self.label, "m", s["m"], 2, MAX_K + 1)
            s.pop("k", None)  # m alone sets the budget: the k a default left would misreport it
        else:
            s["k"] = as_int(self.label, "k", s["k"], 1, MAX_K - 1)
            s["m"] = s["k"] + 2
        self.build(s["m"])

    async def answer(self, variant: ItemVariant, kind: ItemKind | str = "factual", *, seed: int = 0) -> ArmOutput:
        out = await super().answer(variant, kind, seed=seed)
        if "vote_share" in out.details:
            # The pipeline's own confidence also counts the evidence and the token probability; semantic
            # entropy's is the largest cluster's share alone (the pipeline's stays in the evidence).
            out.details["confidence"] = out.details["vote_share"]
        return out
