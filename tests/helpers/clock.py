"""A clock the test moves by hand, for code that takes `clock: Callable[[], float]`: time passes only
when the test says so, so nothing sleeps and no figure depends on the machine's load."""

from __future__ import annotations

import threading


class FakeClock:
    """Seconds that stand still until `advance` (or `now +=`) moves them; safe to read from any thread.

    Args:
        now: the reading to start from (any value: the code under test only subtracts readings).
    """

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now
        self._lock = threading.Lock()

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move the clock on by `seconds`."""
        with self._lock:
            self.now += seconds
