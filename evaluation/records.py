"""The values evaluation passes around: items with their variant sets, and per-sample records."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Label = Literal["correct", "incorrect", "not_attempted"]
LABELS: tuple[Label, ...] = ("correct", "incorrect", "not_attempted")
"""The three correctness labels, in METHOD §4's tie-break order."""

ItemKind = Literal["factual", "math", "truthful"]


class ItemVariant(BaseModel):
    """One wording of an item: id 0 is the original. A variant may change the context instead."""

    id: int
    question: str
    context: str | None = None

    @property
    def is_original(self) -> bool:
        return self.id == 0


class Item(BaseModel):
    """A question with its gold answers and its variant set (original first)."""

    id: str
    kind: ItemKind = "factual"
    gold: list[str] = Field(description="Acceptable answers (aliases; true references for TruthfulQA).")
    incorrect: list[str] = Field(default_factory=list, description="False references (TruthfulQA).")
    variants: list[ItemVariant] = Field(description="variants[0] is the original.")
    category: str = ""
    meta: dict[str, Any] = Field(default_factory=dict)

    @property
    def original(self) -> ItemVariant:
        return self.variants[0]


class SampleRecord(BaseModel):
    """One arm's answer to one variant of one item: a line of the per-sample log."""

    item_id: str
    variant_id: int
    is_original: bool
    arm: str
    answer: str | None
    label: Label
    error: str | None = None
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    latency_s: float = 0.0
    model_s: float | None = Field(
        None,
        description="Seconds the model worked on the calls this answer made, summed over them (they may overlap, "
        "so it can exceed latency_s): their time in the backend less queue_s, a call shared with another arm "
        "charged what it took that arm (runs before 2026-12-05 charged it 0). None in runs before it was recorded.",
    )
    queue_s: float | None = Field(
        None,
        description="Seconds this answer's calls waited in a local engine's queue behind other calls, summed.",
    )
    cached_calls: int = Field(
        0,
        description="Model calls of this answer served from the call cache of an earlier run; its latency is "
        "then not a measurement.",
    )
    shared_calls: int = Field(
        0,
        description="Model calls of this answer that another arm made earlier in this run (identical greedy or "
        "seeded calls are made once); counted in calls and tokens as spent, done before this answer was timed.",
    )
    details: dict[str, Any] = Field(
        default_factory=dict, description="Arm-specific extras (selfpara: k_kept, vote_share, ...)."
    )

    @property
    def skipped_paraphrases(self) -> int:
        """Paraphrases adaptive k kept but did not answer, the vote being settled (0 for other arms)."""
        evidence = self.details.get("evidence")
        skipped = evidence.get("skipped_paraphrases") if isinstance(evidence, dict) else None
        return len(skipped) if isinstance(skipped, list) else 0

    @property
    def kept_paraphrases(self) -> int:
        """Paraphrases the filter kept for this wording: those answered (`k_kept`) and those adaptive k
        left unanswered. The one definition of "kept" every table of the report uses."""
        return int(self.details.get("k_kept", 0)) + self.skipped_paraphrases
