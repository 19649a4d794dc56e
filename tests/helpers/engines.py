"""What the tests of the embedded engines' queue share: a request queue whose puts can be waited on."""

from __future__ import annotations

import queue
import threading

from selfpara.models.engines.params import GenRequest


class CountingQueue(queue.SimpleQueue[GenRequest | None]):
    """An engine's request queue that counts the requests put on it (under `state`, notified at each).

    Set it as an engine's `_queue`: a fake generation can then wait until a number of callers
    wait in the queue, so what the callers read from the engine's clock is fixed.
    """

    def __init__(self) -> None:
        super().__init__()
        self.state = threading.Condition()
        self.puts = 0

    def put(self, item: GenRequest | None, block: bool = True, timeout: float | None = None) -> None:
        super().put(item, block, timeout)
        if item is not None:
            with self.state:
                self.puts += 1
                self.state.notify_all()

    def wait_for_puts(self, n: int, timeout_s: float = 30.0) -> None:
        """Return once `n` requests were put; AssertionError after `timeout_s` (a bound on a hang)."""
        with self.state:
            assert self.state.wait_for(lambda: self.puts >= n, timeout_s), f"{self.puts} of {n} calls were queued"
