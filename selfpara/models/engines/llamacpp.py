"""The llama.cpp engine: `llamacpp_model(model)` is the process-wide `LlamaCppModel` of a `local/...`
GGUF file, run in process by llama-cpp-python, ModelClient's backend for it. Loading, decoding and
batching: docs/models.md#the-engine; the queue to its one thread: `selfpara.models.engines.queued`.
"""

from __future__ import annotations

import atexit
import ctypes
import logging
import os
import time
from collections.abc import Callable
from typing import Any

from selfpara.errors import ConfigError, UpstreamError
from selfpara.models.engines.batched import CHUNK, BatchScheduler, SlotContext
from selfpara.models.engines.embedded import EmbeddedModel
from selfpara.models.engines.params import GenRequest
from selfpara.models.engines.probe import check_engine
from selfpara.models.engines.queued import EngineCache, QueuedEngine
from selfpara.util.extras import requires_extra

log = logging.getLogger(__name__)

PARALLEL = 4
"""Requests decoded together by default. On 2 cores four sequences decode about 1.9x the
tokens per second of one (benchmarks/bench_batch.py); each keeps `N_CTX_SLOT` tokens."""

N_CTX_SLOT = 4096
"""Context length of each sequence (prompt + answer), in tokens."""


class LlamaCppModel(QueuedEngine):
    """Backend for one GGUF model: loads once, and on its own thread decodes up to `parallel` requests together.

    Args:
        spec: the model to load (see `selfpara.models.engines.embedded.resolve`).
        threads: CPU threads for llama.cpp (default: `idle_cores()` when the model loads).
        parallel: requests decoded together (1: one at a time, in the same batched decoder).
        n_ctx_slot: context length of each request.
    """

    def __init__(
        self,
        spec: EmbeddedModel,
        *,
        threads: int | None = None,
        parallel: int = PARALLEL,
        n_ctx_slot: int = N_CTX_SLOT,
    ) -> None:
        super().__init__(spec)
        if parallel < 1:
            raise ConfigError(f"parallel must be at least 1, not {parallel}")
        self.thread_name = f"selfpara-llamacpp-{spec.title}"
        self.threads = threads
        self.parallel = parallel
        self.n_ctx_slot = n_ctx_slot
        self._slots: SlotContext | None = None
        self.path: str | None = None
        self._llm: Any = None
        self._format: Callable[..., Any] | None = None

    @property
    def is_loaded(self) -> bool:
        """Whether the model is in memory (a readiness check)."""
        return self._llm is not None

    def load(self, progress: Callable[[str], None] | None = None) -> None:
        """Find (or assemble) the GGUF file and load it, once; later calls return at once.

        Raises ConfigError when the file, its package or llama-cpp-python is missing, or
        when llama.cpp cannot load the file.
        """
        if self._llm is not None:
            return
        with self._load_lock:
            if self._llm is not None:
                return
            say = progress or (lambda _msg: None)
            path = self.spec.locate(say)
            with requires_extra(self.spec.extra, f"the model {self.spec.title}"):
                from llama_cpp import Llama
                from llama_cpp.llama_chat_format import Jinja2ChatFormatter
            # A build this CPU cannot run would kill the process on the first answer.
            check_engine(path, progress=say)
            _route_llama_log()
            say(f"loading {self.spec.title}")
            started = time.perf_counter()
            threads = self.threads or idle_cores()
            try:
                llm = Llama(
                    model_path=str(path),
                    n_ctx=CHUNK,  # Llama's own context only tokenizes: the slots get their own
                    n_threads=threads,
                    n_threads_batch=threads,
                    verbose=False,  # llama.cpp would print its load log to stderr
                )
                self._slots = SlotContext(llm, n_slots=self.parallel, n_ctx_slot=self.n_ctx_slot, threads=threads)
            except (ValueError, RuntimeError) as exc:
                raise ConfigError(f"llama.cpp could not load {path}: {exc}") from None
            template = llm.metadata.get("tokenizer.chat_template")
            if not template:
                raise ConfigError(f"{path} has no chat template (tokenizer.chat_template) to prompt it with")
            eos, bos = llm.token_eos(), llm.token_bos()
            self._format = Jinja2ChatFormatter(
                template=template,
                eos_token=llm._model.token_get_text(eos) if eos != -1 else "",
                bos_token=llm._model.token_get_text(bos) if bos != -1 else "",
            )
            self.path = str(path)
            self._llm = llm
            # Free it while the interpreter is whole: llama-cpp-python's own finaliser fails
            # (and prints a traceback) when it runs after module teardown.
            atexit.register(self.close)
            self.load_seconds = time.perf_counter() - started
            log.info(
                "loaded %s from %s in %.2fs (%d threads, %d sequences at once)",
                self.spec.title,
                path,
                self.load_seconds,
                threads,
                self.parallel,
            )
            # The thread count is fixed here for the process's life: a long run started while the
            # machine was busy keeps the few it got, so say it where the user sees it.
            say(f"{self.spec.title} ready ({self.load_seconds:.1f}s, {threads} thread{'s' * (threads != 1)})")

    def close(self, timeout_s: float = 10.0) -> None:
        """Stop the worker and free the model (reloaded by the next call); waiting callers get a 503."""
        super().close(timeout_s)
        worker = self._worker
        if worker is None or not worker.is_alive():  # never free a model a generation still uses
            slots, self._slots = self._slots, None
            if slots is not None:
                slots.close()
            llm, self._llm = self._llm, None
            free = getattr(llm, "close", None)
            if free is not None:
                free()

    def _run(self) -> None:
        """Worker loop: admits requests in arrival order and decodes up to `parallel` of them together."""
        import llama_cpp

        llm, slots = self._llm, self._slots
        assert slots is not None
        BatchScheduler(
            slots,
            self._queue,
            self._closing,
            tokenize=self._prompt_tokens,
            is_end=lambda token: bool(llama_cpp.llama_vocab_is_eog(llm._model.vocab, token)),
            detokenize=lambda tokens: llm.detokenize(tokens).decode("utf-8", errors="ignore"),
            title=self.spec.title,
            clock=self.clock,
        ).run()

    def _prompt_tokens(self, req: GenRequest) -> list[int]:
        """The request's messages in the model's chat template, as tokens; UpstreamError 400 if it rejects them."""
        llm, fmt = self._llm, self._format
        assert llm is not None and fmt is not None
        try:
            prompt = fmt(messages=req.messages).prompt
        except Exception as exc:  # the template rejects these messages (e.g. roles out of order)
            raise UpstreamError(
                f"the chat template of {self.spec.title} rejects these messages: {exc}", status=400
            ) from None
        # The template writes any BOS itself, as llama-cpp-python's own chat handler assumes.
        return list(llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True))


def idle_cores() -> int:
    """The cores this process may run on that other work does not already keep busy (at least 1).

    llama.cpp's threads meet at a barrier after every operation, spinning while they wait:
    when other processes keep the CPU busy, one descheduled thread stalls all the others.
    Measured on 2 cores at a load average of 7, SmolLM2 decoded 2.7 tokens/s with 2 threads
    and 20 with 1; on an idle machine every core helps.
    """
    cores = len(os.sched_getaffinity(0))
    busy = os.getloadavg()[0]
    return max(1, min(cores, int(cores - busy + 0.5)))


_engines: EngineCache[LlamaCppModel] = EngineCache(LlamaCppModel)


def llamacpp_model(model: str) -> LlamaCppModel:
    """The process-wide engine of `model` (a `local/...` string): one per model file, made on first use.

    Raises UpstreamError 404 for a name that is neither a named embedded model nor a .gguf path.
    """
    return _engines.get(model)


_log_callback: Any = None


def _route_llama_log() -> None:
    """Send llama.cpp's own log lines to the `llama_cpp` Python logger instead of stderr."""
    global _log_callback
    if _log_callback is not None:
        return
    import llama_cpp

    logger = logging.getLogger("llama_cpp")
    levels = {3: logging.WARNING, 4: logging.ERROR}  # ggml: 1 debug, 2 info, 3 warn, 4 error, 5 continued

    @llama_cpp.llama_log_callback
    def forward(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        logger.log(levels.get(level, logging.DEBUG), "%s", text.decode("utf-8", errors="replace").rstrip())

    _log_callback = forward  # kept referenced: llama.cpp holds only the C pointer
    llama_cpp.llama_log_set(forward, ctypes.c_void_p(0))
