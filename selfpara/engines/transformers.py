"""The transformers engine: a local GGUF model dequantised into torch, kept for comparison.

Every `local/...` model runs on the llama.cpp engine (`selfpara.engines.llamacpp`), which
loads in a fraction of a second and decodes many times faster on a CPU. This engine
stays so that benchmarks can measure the two side by side on the same file; select it
explicitly: `ModelClient(backend=transformers_model("local/smollm2"))`.

The weights load lazily (first call or `load()`), once, under a lock. Concurrent calls are
batched: each call puts a request on a thread-safe queue and awaits its future; one worker
thread collects what arrives within a few milliseconds, groups requests that can share a
`generate` call, runs it, and resolves each future. Nothing here is bound to an event
loop, so calls from successive `asyncio.run()` loops work, and the loop is never blocked.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from selfpara.engines.embedded import EmbeddedModel
from selfpara.engines.queued import EngineCache, QueuedEngine
from selfpara.engines.request import GenRequest
from selfpara.errors import UpstreamError
from selfpara.extras import requires_extra
from selfpara.result import Completion

log = logging.getLogger(__name__)

MAX_BATCH = 16
BATCH_WAIT_S = 0.005


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


class TransformersModel(QueuedEngine):
    """Backend for one GGUF model on transformers: loads once, batches concurrent calls.

    Args:
        spec: the model to load (see `selfpara.engines.embedded.resolve`).
        max_batch: most requests in one `generate` call.
        batch_wait_s: how long the worker waits for more requests to join a batch.
        threads: torch threads (default: every core this process may run on).
    """

    def __init__(
        self,
        spec: EmbeddedModel,
        *,
        max_batch: int = MAX_BATCH,
        batch_wait_s: float = BATCH_WAIT_S,
        threads: int | None = None,
    ) -> None:
        super().__init__(spec)
        self.thread_name = "selfpara-transformers"
        self.max_batch = max_batch
        self.threads = threads
        self.batch_wait_s = batch_wait_s
        self.stats = BatchStats()  # observable batching, for tests and benchmarks
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
            path = self.spec.locate(say)
            log.info("loading %s on transformers from %s", self.spec.title, path)
            say(f"loading {self.spec.title} on transformers")
            started = time.perf_counter()
            with requires_extra("hf", "the transformers engine"):
                import gguf  # noqa: F401  (transformers reads GGUF files with it; missing, it fails mid-load)
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
            log.info("%s loaded on transformers in %.1fs", self.spec.title, self.load_seconds)
            say(f"{self.spec.title} ready ({self.load_seconds:.1f}s)")

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
                for r in group:
                    r.started_s = time.perf_counter()  # its wait in the queue ends with its batch's start
                try:
                    results = self._generate(group)
                except Exception as exc:  # torch/transformers failure: the callers get a 502
                    log.warning("transformers generate failed: %s", exc, exc_info=True)
                    error = UpstreamError(
                        f"{self.spec.title} failed on transformers: {type(exc).__name__}: {str(exc)[:200]}", status=502
                    )
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


_engines: EngineCache[TransformersModel] = EngineCache(TransformersModel)


def transformers_model(model: str) -> TransformersModel:
    """The process-wide transformers engine of `model` (a `local/...` string), made on first use."""
    return _engines.get(model)
