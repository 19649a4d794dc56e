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
from selfpara.models.engines.batched import CHUNK, BatchScheduler, SlotContext, token_logprobs
from selfpara.models.engines.embedded import EmbeddedModel
from selfpara.models.engines.params import GenRequest
from selfpara.models.engines.prefix import reusable_prefix
from selfpara.models.engines.probe import check_engine
from selfpara.models.engines.queued import EngineCache, QueuedEngine, refuse_waiting
from selfpara.models.engines.sampling import logprob
from selfpara.result import Completion
from selfpara.util.extras import requires_extra

log = logging.getLogger(__name__)

N_CTX = 8192
"""Context length of a model answering one request at a time (prompt + answer), in tokens."""

PARALLEL = 4
"""Requests decoded together by default. On 2 cores four sequences decode about 1.9x the
tokens per second of one (benchmarks/bench_batch.py); each keeps `N_CTX_SLOT` tokens."""

N_CTX_SLOT = 4096
"""Context length of each sequence when several are decoded together, in tokens."""


class LlamaCppModel(QueuedEngine):
    """Backend for one GGUF model: loads once, and on its own thread decodes up to `parallel` requests together
    (batched; one at a time where `parallel` is 1).

    Args:
        spec: the model to load (see `selfpara.models.engines.embedded.resolve`).
        n_ctx: context length in tokens.
        threads: CPU threads for llama.cpp (default: `idle_cores()` when the model loads).
        parallel: requests decoded together (1: one at a time, each with a context of `n_ctx`).
        n_ctx_slot: context length of each request when `parallel` > 1.
    """

    def __init__(
        self,
        spec: EmbeddedModel,
        *,
        n_ctx: int = N_CTX,
        threads: int | None = None,
        parallel: int = PARALLEL,
        n_ctx_slot: int = N_CTX_SLOT,
    ) -> None:
        super().__init__(spec)
        if parallel < 1:
            raise ConfigError(f"parallel must be at least 1, not {parallel}")
        self.thread_name = f"selfpara-llamacpp-{spec.title}"
        self.n_ctx = n_ctx
        self.threads = threads
        self.parallel = parallel
        self.n_ctx_slot = n_ctx_slot
        self._slots: SlotContext | None = None
        self.path: str | None = None
        self._llm: Any = None
        self._last_prompt: list[int] = []  # the prompt whose KV cache the context holds (worker thread only)
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
            batched = self.parallel > 1
            try:
                llm = Llama(
                    model_path=str(path),
                    # Batched, Llama's own context only tokenizes: the slots get their own.
                    n_ctx=CHUNK if batched else self.n_ctx,
                    n_threads=threads,
                    n_threads_batch=threads,
                    verbose=False,  # llama.cpp would print its load log to stderr
                )
                if batched:
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
        """Worker loop: batched when the model has slots, else one request at a time, in arrival order."""
        if self._slots is not None:
            import llama_cpp

            llm = self._llm
            BatchScheduler(
                self._slots,
                self._queue,
                self._closing,
                tokenize=self._prompt_tokens,
                is_end=lambda token: bool(llama_cpp.llama_vocab_is_eog(llm._model.vocab, token)),
                detokenize=lambda tokens: llm.detokenize(tokens).decode("utf-8", errors="ignore"),
                title=self.spec.title,
                clock=self.clock,
            ).run()
            return
        while not self._closing.is_set():
            req = self._queue.get()
            if req is None:
                break
            if not req.future.set_running_or_notify_cancel():
                continue  # its caller was cancelled while it waited
            req.started_s = self.clock()  # its wait in the queue ends here
            try:
                result = self._generate(req)
            except UpstreamError as exc:
                req.future.set_exception(exc)
            except Exception as exc:  # a llama.cpp failure: this caller gets a 502, the next one a fresh try
                log.warning("llama.cpp generation failed: %s", exc, exc_info=True)
                req.future.set_exception(
                    UpstreamError(f"{self.spec.title} failed: {type(exc).__name__}: {str(exc)[:200]}", status=502)
                )
            else:
                req.future.set_result(result)
        refuse_waiting(self._queue, self.spec.title)

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

    def _generate(self, req: GenRequest) -> Completion:
        """Decode one answer; records each chosen token's log-probability under the model's raw distribution."""
        import llama_cpp
        import numpy as np

        llm = self._llm
        tokens = self._prompt_tokens(req)
        budget = min(req.max_tokens, llm.n_ctx() - len(tokens))
        if budget < 1:
            raise UpstreamError(
                f"the prompt has {len(tokens)} tokens; {self.spec.title} runs with a context of {llm.n_ctx()}",
                status=400,
            )
        _prepare_prompt(llm, tokens, self._last_prompt)
        self._last_prompt = tokens
        # Sampling draws from this seed; llama.cpp's default seed means "random".
        llm.set_seed(req.seed if req.seed is not None else llama_cpp.LLAMA_DEFAULT_SEED)
        vocab, n_vocab = llm._model.vocab, llm.n_vocab()
        out: list[int] = []
        logprobs: list[float] = []
        finish = "length"
        # top_k 0, min_p 0, no repeat penalty: plain temperature + top-p, as an OpenAI server would.
        generator = llm.generate(
            tokens, temp=req.temperature, top_p=req.top_p, top_k=0, min_p=0.0, repeat_penalty=1.0, reset=True
        )
        try:
            for token in generator:
                if llama_cpp.llama_vocab_is_eog(vocab, token):
                    finish = "stop"
                    break
                # The logits the token was drawn from are still the context's last row.
                logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm.ctx, -1), shape=(n_vocab,))
                logprobs.append(logprob(logits, token))
                out.append(token)
                if len(out) >= budget:
                    break
                if req.abandoned.is_set() or self._closing.is_set():
                    finish = "abandoned"
                    break
        finally:
            generator.close()
        return Completion(
            text=llm.detokenize(out).decode("utf-8", errors="ignore").strip(),
            prompt_tokens=len(tokens),
            completion_tokens=len(out),
            cost=0.0,
            logprob=float(np.mean(logprobs)) if logprobs else None,
            finish_reason=finish,
            token_logprobs=token_logprobs(
                out, logprobs, lambda ts: llm.detokenize(ts).decode("utf-8", errors="ignore")
            ),
        )


def _prepare_prompt(llm: Any, tokens: list[int], last_prompt: list[int]) -> None:
    """Evaluate all of `tokens` but the last, so that every call computes its prompt alike.

    llama-cpp-python reuses the longest cached prefix of the prompt and evaluates the rest,
    or replays the last token alone, so one prompt's logits depended on the call before it;
    here only what `reusable_prefix` allows is kept (batches of `n_batch` tokens), the rest
    but the last token is evaluated, and `generate` then evaluates the last token alone.

    Args:
        llm: the llama_cpp.Llama context (its KV cache holds the previous call's tokens).
        tokens: this call's prompt.
        last_prompt: the previous call's prompt.
    """
    cached, body = int(llm.n_tokens), len(tokens) - 1
    # What lies past n_tokens is dropped from the KV cache by the next evaluation.
    llm.n_tokens = reusable_prefix(llm.input_ids[:cached].tolist(), len(last_prompt) - 1, tokens, int(llm.n_batch))
    if llm.n_tokens < body:
        llm.eval(tokens[llm.n_tokens : body])


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
