"""The one step from a vote to the answer returned: the chosen text, withheld or not, and its flags.

The live request (`selfpara.pipeline.request`) and the re-vote (`evaluation.revote`) both call
`decide_answer`, so a recorded run replayed offline returns what the live path would have returned.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel

from selfpara.config import WrapConfig
from selfpara.result import Answer, Flag


class Voted(Protocol):
    """What `decide_answer` reads of a vote: `selfpara.pipeline.vote.VoteOutcome` has both."""

    @property
    def returned(self) -> int:
        """Variant index of the answer the vote returns."""
        ...

    @property
    def vote_share(self) -> float:
        """The winning cluster's share of the answers voted, 0..1."""
        ...

    @property
    def confidence(self) -> float:
        """How far to trust the winner, 0..1 (`selfpara.pipeline.confidence`)."""
        ...


class Decision(BaseModel):
    """The answer returned for one vote.

    Attributes:
        answer: the text returned: the chosen answer, or `abstention_text` when withheld.
        withheld: the chosen answer's text when the low-vote-share policy withheld it, else None.
        flags: what the decision adds to the answer's flags (`low_vote_share` or `low_confidence`), in order.
    """

    answer: str
    withheld: str | None = None
    flags: list[Flag] = []


def policy_signal(outcome: Voted, cfg: WrapConfig) -> tuple[float, float, Flag]:
    """(score, threshold, flag) the low-vote-share policy reads for `outcome` under `cfg`.

    With `confidence_threshold` set (a calibrated threshold) it is the answer's confidence against it,
    flagged `low_confidence`; otherwise the vote share against `low_vote_share_threshold`.
    """
    if cfg.confidence_threshold is not None:
        return outcome.confidence, cfg.confidence_threshold, "low_confidence"
    return outcome.vote_share, cfg.low_vote_share_threshold, "low_vote_share"


def withhold_below(cfg: WrapConfig) -> float | None:
    """The vote share below which `decide_answer` withholds the answer under `cfg`; None when it never does
    or when it reads the confidence instead.

    Args:
        cfg: the request's settings (`low_vote_share`, `low_vote_share_threshold`, `confidence_threshold`).

    Adaptive k's stopping test takes this as its `share_threshold`: only a withholding policy
    changes the returned text, so only then does the share decide when to stop. A calibrated
    confidence threshold is not a vote share: adaptive k then stops as without a policy, and the
    calibration measured the confidence of answers that stopped so (the run's own adaptive k).
    """
    if cfg.low_vote_share != "abstain" or cfg.confidence_threshold is not None:
        return None
    return cfg.low_vote_share_threshold


def decide_answer(outcome: Voted, answers: Sequence[Answer], cfg: WrapConfig) -> Decision:
    """The answer returned for `outcome`, the vote over `answers`, under `cfg`'s low-vote-share policy.

    Args:
        outcome: the vote (its `returned` variant, the winner's `vote_share` and `confidence`).
        answers: the answers voted over; the one whose `variant` is `outcome.returned` gives the text
            (an answer with no text returns "").
        cfg: the settings read: `low_vote_share` (off: no flag; flag: flagged below the threshold;
            abstain: flagged, and `abstention_text` returned in place of the answer), the score and
            threshold `policy_signal` names, and `abstention_text`.

    Raises:
        ValueError: when no answer in `answers` has the variant `outcome.returned`.
    """
    chosen = next((a for a in answers if a.variant == outcome.returned), None)
    if chosen is None:
        raise ValueError(f"the vote chose variant {outcome.returned}, which is not among the answers")
    text = chosen.text or ""
    if cfg.low_vote_share == "off":
        return Decision(answer=text)
    score, threshold, flag = policy_signal(outcome, cfg)
    if score >= threshold:
        return Decision(answer=text)
    if cfg.low_vote_share == "abstain":
        return Decision(answer=cfg.abstention_text, withheld=text, flags=[flag])
    return Decision(answer=text, flags=[flag])
