"""The vote budget: doubt first's cap on what its votes cost over a wrapper's life, in calls per answer.

The threshold (`sure_probability`) says which answers are in doubt, but how many are depends on the
questions: at 0.55 the default model doubted 11% of NQ-open's development questions and 18% of its held-out
ones, so the held-out answers cost 1.63 calls where the curve had promised 1.38. A threshold cannot hold a
cost; an account can. Every request earns `per_answer - 1` calls of credit; a request in doubt votes only
while the credit is not negative, reserving what a vote usually costs (`k + 1` calls: the list call and k
answers) and settling the difference when its vote is done. Over n requests the calls stay within
`per_answer * n` plus what the votes in flight at the end had reserved. The credit banked by a long run of sure
answers is capped at what BANKED_ANSWERS requests earn, so that it cannot pay for a burst of votes later.

The account lives in the runner (`SelfParaphraser`), one per wrapper: the library instance, the proxy, one
arm of a bench run. A one-off `ask` starts at zero credit, so its doubtful question votes.
"""

from __future__ import annotations

import threading

BANKED_ANSWERS = 20
"""The credit never exceeds what this many requests earn."""


class VoteBudget:
    """The calls doubt first may still spend on votes (thread-safe: a wrapper may serve several event loops)."""

    def __init__(self) -> None:
        self._credit = 0.0
        self._lock = threading.Lock()

    @property
    def credit(self) -> float:
        """Calls the votes may still spend (negative: the votes so far spent more than the requests earned)."""
        return self._credit

    def admit(self, per_answer: float, *, doubtful: bool, reserve: int, needed: bool = False) -> bool:
        """Count one request's earning, and say whether its vote may run (reserving `reserve` calls if so).

        Args:
            per_answer: the budget, in mean calls per answer (1: no vote at all).
            doubtful: whether doubt first wants a vote for this request.
            reserve: the calls a vote is expected to cost beyond the original's one.
            needed: the vote runs whatever the credit (the original's call failed: the vote is the only
                answer); it is charged all the same.
        """
        with self._lock:
            earned = per_answer - 1.0
            self._credit = min(self._credit + earned, BANKED_ANSWERS * earned)
            if not needed and (not doubtful or self._credit < 0 or earned <= 0):
                return False
            self._credit -= reserve
            return True

    def settle(self, reserved: int, spent: int) -> None:
        """Charge a finished vote what it spent (calls beyond the original's one), against what it reserved."""
        with self._lock:
            self._credit += reserved - spent
