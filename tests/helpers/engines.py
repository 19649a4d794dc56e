"""What the tests of the embedded engines' queue share: a request queue whose puts can be waited on,
and a llama.cpp engine whose worker answers by a fake `_generate`, one request at a time."""

from __future__ import annotations

import queue
import threading

from selfpara.models.engines.embedded import resolve
from selfpara.models.engines.llamacpp import LlamaCppModel
from selfpara.models.engines.params import GenRequest
from selfpara.models.engines.queued import refuse_waiting
from selfpara.result import Completion


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


class SerialEngine(LlamaCppModel):
    """The SmolLM2 engine's queue, thread, cancellation and close, with no model: its worker takes
    requests in arrival order and answers each by `_generate` (which subclasses define)."""

    def __init__(self) -> None:
        super().__init__(resolve("local/smollm2"))
        self._llm = object()  # counts as loaded
        self.requests = self._queue = CountingQueue()

    def _generate(self, req: GenRequest) -> Completion:
        raise NotImplementedError

    def _run(self) -> None:
        while not self._closing.is_set():
            req = self._queue.get()
            if req is None:
                break
            if not req.future.set_running_or_notify_cancel():
                continue  # its caller was cancelled while it waited
            req.started_s = self.clock()
            try:
                req.future.set_result(self._generate(req))
            except Exception as exc:
                req.future.set_exception(exc)
        refuse_waiting(self._queue, self.spec.title)
