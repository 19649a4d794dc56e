"""Doubt first: whether a vote is spent on an answer, read from the one call that made it.

The signal is the answer's token probability, the geometric mean over its tokens (exp of the mean
token log-probability the model reports). On the development split of ComQA (118 natural answers of
the default model, `research/doubt_signals.py`) it ranked right answers above wrong ones with AUROC
0.88; the least probable token did about as well (0.89), the tokens that do not restate the question
worse (0.84), and whether a short answer to the same wording agreed far worse (0.68): the simplest
signal stands.
"""

from __future__ import annotations

import math

from selfpara.result import Answer, Doubt


def doubt_of(original: Answer, sure_above: float | None) -> Doubt:
    """Whether a vote is spent on `original`, the original wording's answer, and why.

    Args:
        original: the original's answer, with its mean token log-probability where the model reported one.
        sure_above: the probability at or above which the answer is returned without a vote (None: always vote).
    """
    if sure_above is None:
        return Doubt(voted=True, reason="vote on every question (doubt first off)")
    if not original.ok:
        return Doubt(voted=True, sure_above=sure_above, reason="the original's answer call failed: the vote decides")
    if original.logprob is None:
        return Doubt(voted=True, sure_above=sure_above, reason="no token probabilities from the model: the vote ran")
    p = math.exp(min(0.0, original.logprob))
    if p >= sure_above:
        return Doubt(
            voted=False, probability=p, sure_above=sure_above, reason=f"answer sure: p = {p:.2f} >= {sure_above:.2f}"
        )
    return Doubt(voted=True, probability=p, sure_above=sure_above, reason=f"in doubt: p = {p:.2f} < {sure_above:.2f}")


def over_budget(doubt: Doubt, per_answer: float, credit: float) -> Doubt:
    """`doubt` (in doubt) held back by the vote budget (`selfpara.pipeline.budget`): the original's answer stands."""
    return doubt.model_copy(
        update={
            "voted": False,
            "budget": per_answer,
            "reason": f"{doubt.reason}, but the vote budget is spent ({credit:+.1f} calls of credit at "
            f"{per_answer:g} calls per answer)",
        }
    )
