"""Over-generation: of more candidates than the vote has slots, keep k.

Kept self-paraphrases that are close copies of the question repeat its answer and add no
independent evidence (METHOD §2.6). When several paraphrase calls pool their survivors
(`WrapConfig.paraphrase_calls`), `most_different` gives the vote those that differ most in
wording, from the question and from each other; `first_in_order` lets the later calls only
fill the slots the first left. Measured on GSM8K with the default model, neither makes the
extra calls pay: most of what they add has drifted (docs/results/qwen-gsm8k-overgen.md).
"""

from __future__ import annotations

from selfpara.result import RejectedParaphrase
from selfpara.text import overlap


def first_in_order(question: str, candidates: list[str], k: int) -> tuple[list[str], list[RejectedParaphrase]]:
    """The first `k` of `candidates` (the first call's survivors before the next call's); the rest as surplus."""
    surplus = [
        RejectedParaphrase(text=c, reason="surplus", detail="after the k kept, in call order") for c in candidates[k:]
    ]
    return list(candidates[:k]), surplus


def choose(pick: str, question: str, candidates: list[str], k: int) -> tuple[list[str], list[RejectedParaphrase]]:
    """The `k` candidates a vote gets under `pick` (`WrapConfig.paraphrase_pick`): (kept, surplus rejected)."""
    return PICKS[pick](question, candidates, k)


def most_different(question: str, candidates: list[str], k: int) -> tuple[list[str], list[RejectedParaphrase]]:
    """Choose up to `k` of `candidates` (all already filtered), greedily by distance, and reject the rest.

    Each step takes the candidate whose highest word overlap (`selfpara.text.overlap`) with the
    question and the candidates chosen so far is lowest; ties go to the earlier candidate. With
    at most `k` candidates, all are kept in their order.

    Args:
        question: the original wording.
        candidates: survivors of the filters, in the order the calls gave them.
        k: how many to keep.

    Returns (chosen, in the order chosen; the others, rejected as `surplus` with the overlap that lost them).
    """
    if len(candidates) <= k:
        return list(candidates), []
    closest = [overlap(c, question) for c in candidates]  # each candidate's highest overlap with the chosen
    chosen: list[int] = []
    while len(chosen) < k:
        best = min((i for i in range(len(candidates)) if i not in chosen), key=lambda i: (closest[i], i))
        chosen.append(best)
        for i, cand in enumerate(candidates):
            if i not in chosen:
                closest[i] = max(closest[i], overlap(cand, candidates[best]))
    surplus = [
        RejectedParaphrase(text=c, reason="surplus", detail=f"overlap {closest[i]:.2f} with a wording kept")
        for i, c in enumerate(candidates)
        if i not in chosen
    ]
    return [candidates[i] for i in chosen], surplus


PICKS = {"different": most_different, "order": first_in_order}
"""How over-generation chooses k of its survivors, by `WrapConfig.paraphrase_pick`."""
