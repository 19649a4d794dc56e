"""One number for how far to trust a returned answer, from the vote and the model's own token probabilities.

The vote share alone says nothing about how much evidence stands behind it: an answer whose
paraphrases were all rejected has a vote share of 1 from one answer, the same as four
wordings that agree. The confidence counts the evidence (Laplace's rule of succession: the
chance that one more wording would agree, (w + 1) / (n + 2)) and, where the backend reports
log-probabilities, how sure the model was of the winner's tokens (their geometric-mean
probability, exp of the mean token log-probability). Answers that no equivalence function
could compare with the winner's are not counted as evidence against it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from selfpara.result import Cluster


def agreement_estimate(agreeing: int, voted: int) -> float:
    """The chance that a further wording's answer would agree with the winner: (agreeing + 1) / (voted + 2).

    Args:
        agreeing: answers in the winning cluster.
        voted: answers voted (all clusters).
    """
    if not 0 <= agreeing <= voted:
        raise ValueError(f"agreeing answers ({agreeing}) must be between 0 and the answers voted ({voted})")
    return (agreeing + 1) / (voted + 2)


def answer_confidence(agreeing: int, voted: int, mean_logprob: float | None) -> float:
    """How far to trust the winner, in [0, 1]: `agreement_estimate` times exp(`mean_logprob`) where known.

    Args:
        agreeing: answers in the winning cluster.
        voted: answers voted (all clusters).
        mean_logprob: the winning cluster's mean per-token log-probability; None where the
            backend reports none, and then the vote alone decides.
    """
    estimate = agreement_estimate(agreeing, voted)
    if mean_logprob is None:
        return estimate
    return estimate * math.exp(min(0.0, mean_logprob))


def winner_confidence(clusters: Sequence[Cluster], winner: int, unknown: Iterable[int] = ()) -> float:
    """`answer_confidence` of the cluster with id `winner` among `clusters`.

    Args:
        clusters: every cluster voted.
        winner: the winning cluster's id.
        unknown: ids of clusters that no equivalence function could tell apart from the
            winner (their pair was undecided). The vote counts them as different, but they
            are no evidence either way, so their answers are left out of the count here.
    """
    chosen = next((c for c in clusters if c.id == winner), None)
    if chosen is None:
        raise ValueError(f"no cluster has the winner's id {winner}")
    skip = set(unknown) - {winner}
    voted = sum(c.size for c in clusters if c.id not in skip)
    return answer_confidence(chosen.size, voted, chosen.mean_logprob)
