"""The oracle arm: a measuring instrument, not a method a deployed wrapper can use.

It answers each wording of an item exactly as the selfpara arm does (same pipeline, same
settings: clustering, equivalence, vote rule and overrule margin), except that the
"paraphrases" it votes with are the item's *other* wordings from the dataset (human-written
or saved, verified variants) instead of ones the model generates. So it measures the vote's
ceiling on this model and these questions: what selfpara would gain if its paraphrases were
as faithful and as independent as the dataset's own. A deployed wrapper never has these
wordings; the report labels the arm as an instrument and measures selfpara's efficiency
against it.

Which wordings: of an item's n wordings (in dataset order, the original first), wording j
votes with the min(k, n − 1) wordings that follow it cyclically, j+1, j+2, … (mod n). The
choice is deterministic and balanced: every wording serves as a paraphrase equally often.
Wordings whose context passage differs from wording j's are left out (the pipeline varies
the question only, and keeps one context for every wording).
"""

from __future__ import annotations

from typing import Any, ClassVar

from evaluation.arms.base import ArmOutput
from evaluation.arms.registry import register_arm
from evaluation.arms.selfpara_arm import SelfParaArm
from evaluation.records import Item, ItemKind, ItemVariant
from selfpara.errors import ConfigError

CHOICE = "cyclic-next"
"""How the other wordings are chosen (saved in the run config and the cache key: change it when the rule changes)."""


def other_wordings(item: Item, variant: ItemVariant, k: int) -> list[ItemVariant]:
    """The wordings of `item` that `variant` is voted with: up to `k`, the ones following it cyclically.

    Args:
        item: the item, its wordings in dataset order (original first).
        variant: the wording being answered (one of item.variants, matched by id).
        k: the most wordings to take.
    """
    ids = [v.id for v in item.variants]
    if variant.id not in ids:
        raise ConfigError(f"item {item.id!r} has no wording with id {variant.id}")
    j, n = ids.index(variant.id), len(ids)
    following = [item.variants[(j + step) % n] for step in range(1, n)]
    return [v for v in following if v.context == variant.context][:k]


@register_arm("oracle", "ceiling")
class OracleArm(SelfParaArm):
    """The selfpara pipeline voting each wording with the item's other wordings from the dataset."""

    description = (
        "measuring instrument: the selfpara vote over the dataset's other wordings of the item (the ceiling; "
        "a deployed wrapper never has them)"
    )
    options: ClassVar[dict[str, Any]] = dict(SelfParaArm.options)
    given_wordings = True

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "wordings": CHOICE}

    async def answer(self, variant: ItemVariant, kind: ItemKind | str = "factual", *, seed: int = 0) -> ArmOutput:
        raise ConfigError("the oracle arm votes with the item's other wordings: call answer_in(item, variant, ...)")

    async def answer_in(
        self, item: Item, variant: ItemVariant, kind: ItemKind | str = "factual", *, seed: int = 0
    ) -> ArmOutput:
        others = other_wordings(item, variant, self.config.k)
        out = await self.vote_on(variant, kind, paraphrases=[v.question for v in others])
        out.details["oracle_wordings"] = [v.id for v in others]
        return out
