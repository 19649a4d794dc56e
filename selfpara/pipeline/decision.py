"""The one step from a vote to the answer returned: the chosen text, withheld or not, and its flags.

The live request (`selfpara.pipeline.request`), the re-vote (`evaluation.revote`), adaptive k's replay
(`evaluation.adaptive_replay`) and `scripts/replay_top_up.py` all call `decide_answer`, so a
recorded run replayed offline returns what the live path would have returned.
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
    def chosen(self) -> int:
        """Variant index of the answer the vote returns."""
        ...

    @property
    def vote_share(self) -> float:
        """The winning cluster's share of the answers voted, 0..1."""
        ...


class Decision(BaseModel):
    """The answer returned for one vote.

    Attributes:
        answer: the text returned: the chosen answer, or `abstention_text` when withheld.
        withheld: the chosen answer's text when the low-vote-share policy withheld it, else None.
        flags: what the decision adds to the answer's flags (`low_vote_share`), in order.
    """

    answer: str
    withheld: str | None = None
    flags: list[Flag] = []


def withhold_below(cfg: WrapConfig) -> float | None:
    """The vote share below which `decide_answer` withholds the answer under `cfg`; None when it never does.

    Args:
        cfg: the request's settings (`low_vote_share`, `low_vote_share_threshold`).

    Adaptive k's stopping test takes this as its `share_threshold`: only a withholding policy
    changes the returned text, so only then does the share decide when to stop.
    """
    return cfg.low_vote_share_threshold if cfg.low_vote_share == "abstain" else None


def decide_answer(outcome: Voted, answers: Sequence[Answer], cfg: WrapConfig) -> Decision:
    """The answer returned for `outcome`, the vote over `answers`, under `cfg`'s low-vote-share policy.

    Args:
        outcome: the vote (its `chosen` variant and the winner's `vote_share`).
        answers: the answers voted over; the one whose `variant` is `outcome.chosen` gives the text
            (an answer with no text returns "").
        cfg: the settings read: `low_vote_share` (off: no flag; flag: flagged below the threshold;
            abstain: flagged, and `abstention_text` returned in place of the answer),
            `low_vote_share_threshold` and `abstention_text`.

    Raises:
        ValueError: when no answer in `answers` has the variant `outcome.chosen`.
    """
    chosen = next((a for a in answers if a.variant == outcome.chosen), None)
    if chosen is None:
        raise ValueError(f"the vote chose variant {outcome.chosen}, which is not among the answers")
    text = chosen.text or ""
    if cfg.low_vote_share == "off" or outcome.vote_share >= cfg.low_vote_share_threshold:
        return Decision(answer=text)
    if withhold_below(cfg) is not None:
        return Decision(answer=cfg.abstention_text, withheld=text, flags=["low_vote_share"])
    return Decision(answer=text, flags=["low_vote_share"])
