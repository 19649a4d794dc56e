"""What the embedded engines share: one model each, loaded lazily once, calls queued for one worker thread.

Callers put a `GenRequest` on a thread-safe queue and await its future, so the event loop
never blocks on the model and calls from successive `asyncio.run()` loops work. A caller
that is cancelled before its turn is skipped by the worker (its future is cancelled); one
cancelled mid-generation sets `abandoned`, which an engine may check between tokens.
"""

from __future__ import annotations

import asyncio
import atexit
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from selfpara.errors import UpstreamError
from selfpara.models.engines.embedded import EmbeddedModel, resolve
from selfpara.models.engines.params import GenRequest, make_request
from selfpara.result import Completion, Message


class QueuedEngine:
    """Base of the embedded engines. Subclasses implement `is_loaded`, `load` and `_run`.

    Args:
        spec: the model this engine serves (see `selfpara.models.engines.embedded.resolve`).

    Attributes:
        clock: seconds, what a call's wait in the queue is timed with (`Completion.queue_s`);
            `time.perf_counter`, tests set a fake one.
    """

    thread_name = "selfpara-engine"

    def __init__(self, spec: EmbeddedModel) -> None:
        self.spec = spec
        self.load_seconds: float | None = None
        self.clock: Callable[[], float] = time.perf_counter
        self._load_lock = threading.Lock()
        self._worker_lock = threading.Lock()
        self._queue: queue.SimpleQueue[GenRequest | None] = queue.SimpleQueue()
        self._worker: threading.Thread | None = None
        self._closing = threading.Event()

    @property
    def is_loaded(self) -> bool:
        """Whether the model is in memory (a readiness check)."""
        raise NotImplementedError

    def load(self, progress: Callable[[str], None] | None = None) -> None:
        """Load the model once (thread-safe); raises ConfigError when it cannot be found or loaded."""
        raise NotImplementedError

    async def prepare(self, model: str, params: dict[str, Any]) -> None:
        """Load the model (off the event loop) before a first call: loading is no part of any call's time."""
        if not self.is_loaded:
            await asyncio.to_thread(self.load)

    def _run(self) -> None:
        """The worker loop: take requests off `_queue` until None or `_closing`, resolve their futures."""
        raise NotImplementedError

    async def complete(self, model: str, messages: list[Message], params: dict[str, Any]) -> Completion:
        """Generate one answer; loads the model first if needed (off the event loop)."""
        if resolve(model).key != self.spec.key:
            raise UpstreamError(f"{model!r} is not served by the engine of {self.spec.key}", status=404)
        req = make_request(messages, params)
        await self.prepare(model, params)
        self._ensure_worker()
        queued = self.clock()
        self._queue.put(req)
        try:
            # wrap_future binds to the caller's loop only for this call, so any loop works.
            result = await asyncio.wrap_future(req.future)
        except asyncio.CancelledError:
            req.abandoned.set()  # a generation in progress may end at its next token
            raise
        if req.started_s is None:
            return result
        return result.model_copy(update={"queue_s": max(0.0, req.started_s - queued)})

    def close(self, timeout_s: float = 10.0) -> None:
        """Stop the worker: a generation in progress ends at its next token.

        Runs at interpreter exit, because a daemon thread killed inside native code
        (torch, llama.cpp) can abort the whole process.
        """
        self._closing.set()
        worker = self._worker
        if worker is not None and worker.is_alive():
            self._queue.put(None)  # wakes the worker to exit
            worker.join(timeout_s)

    def _ensure_worker(self) -> None:
        with self._worker_lock:
            if self._worker is None or not self._worker.is_alive():
                self._closing.clear()
                self._worker = threading.Thread(target=self._run, name=self.thread_name, daemon=True)
                self._worker.start()


def refuse_waiting(requests: queue.SimpleQueue[GenRequest | None], title: str) -> None:
    """Answer every request still queued with a 503 (the worker is stopping: they would wait forever)."""
    while True:
        try:
            req = requests.get_nowait()
        except queue.Empty:
            return
        if req is not None and req.future.set_running_or_notify_cancel():
            req.future.set_exception(UpstreamError(f"{title} is shutting down", status=503))


E = TypeVar("E", bound=QueuedEngine)


class EngineCache(Generic[E]):
    """The process-wide engines of one kind: one per model file, made on first use, closed at exit."""

    def __init__(self, factory: Callable[[EmbeddedModel], E]) -> None:
        self._factory = factory
        self._engines: dict[str, E] = {}
        self._lock = threading.Lock()

    def get(self, model: str) -> E:
        """The engine of `model` (a `local/...` string); UpstreamError 404 for an unknown name."""
        spec = resolve(model)
        with self._lock:
            engine = self._engines.get(spec.key)
            if engine is None:
                engine = self._engines[spec.key] = self._factory(spec)
                atexit.register(engine.close)
            return engine
