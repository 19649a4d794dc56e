"""Batched decoding: one llama.cpp context decodes several requests' tokens in one step.

Decoding is mostly bound by reading the weights, so a step that decodes one token for each
of four sequences costs little more than a step for one (measured by
benchmarks/bench_batch.py). `BatchScheduler` is the engine's worker loop: requests that
arrive while others decode join at the next step, each keeps its own sampler (so a seeded
request draws from its own generator), log-probabilities, `finish_reason` and
cancellation, and a finished one frees its slot for the next. `SlotContext` is the
llama.cpp side: one KV stream per slot, so a sequence's attention never depends on where
another's tokens sit in the cache, and each slot keeps its last prompt so that the same
prompt prefix (the paraphrase instructions, a repeated question) is not computed twice.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from selfpara.errors import UpstreamError
from selfpara.models.engines.params import GenRequest
from selfpara.models.engines.prefix import reusable_prefix
from selfpara.models.engines.queued import refuse_waiting
from selfpara.models.engines.sampling import TokenSampler
from selfpara.result import Completion

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

CHUNK = 64
"""Prompt bodies are evaluated in chunks of this many tokens, so a shared prefix is kept in
whole chunks (see `selfpara.models.engines.prefix`): the paraphrase prompt's fixed ~250-token
instructions are kept but for the last partial chunk."""


class Decoder(Protocol):
    """What the scheduler needs of a model context with `n_slots` independent sequences."""

    n_slots: int
    n_ctx_slot: int

    def reuse(self, slot: int, tokens: Sequence[int]) -> int:
        """How many leading tokens of `tokens` slot `slot` holds computed alike (0 if none)."""
        ...

    def held(self, slot: int) -> int:
        """How many tokens the slot's cache holds."""
        ...

    def prefill(self, slot: int, tokens: Sequence[int]) -> None:
        """Make the slot hold all of `tokens` but the last (evaluated in chunks, reusing what it can)."""
        ...

    def decode(self, rows: Sequence[tuple[int, int, int]]) -> list[np.ndarray]:
        """Evaluate one token per (slot, token, position) row in one step; the logits after each row."""
        ...

    def forget(self, slot: int) -> None:
        """Drop what the slot holds (after a failure its cache can no longer be trusted)."""
        ...


@dataclass
class _Live:
    """A request being decoded in a slot."""

    req: GenRequest
    slot: int
    prompt_tokens: int
    budget: int
    sampler: TokenSampler
    pending: int  # the token to evaluate at the next step
    pos: int  # its position in the sequence
    out: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    finish: str | None = None


class BatchScheduler:
    """The worker loop of a batched engine: admits requests into free slots, steps them together.

    Args:
        decoder: the model context (see `Decoder`).
        requests: the engine's queue; None wakes the loop to stop.
        closing: set when the engine shuts down (generations in progress end at their next token).
        tokenize: a request's prompt tokens (raises UpstreamError 400 for messages the template rejects).
        is_end: whether a token ends generation (end of turn / end of text).
        detokenize: the text of generated tokens.
        title: the model's name, for errors.
        clock: seconds, what a request's start (`GenRequest.started_s`) is read from.
    """

    def __init__(
        self,
        decoder: Decoder,
        requests: queue.SimpleQueue[GenRequest | None],
        closing: threading.Event,
        *,
        tokenize: Callable[[GenRequest], list[int]],
        is_end: Callable[[int], bool],
        detokenize: Callable[[list[int]], str],
        title: str,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.decoder = decoder
        self.requests = requests
        self.closing = closing
        self.tokenize = tokenize
        self.is_end = is_end
        self.detokenize = detokenize
        self.title = title
        self.clock = clock
        self.peak = 0  # most sequences decoded in one step (for tests and benchmarks)

    def run(self) -> None:
        """Serve requests until None arrives or `closing` is set. Never dies on a bad request."""
        active: dict[int, _Live] = {}
        free = list(range(self.decoder.n_slots))
        stopping = False
        while True:
            while free and not stopping and not self.closing.is_set():
                try:
                    req = self.requests.get(block=not active)
                except queue.Empty:
                    break
                if req is None:
                    stopping = True
                    break
                live = self._admit(req, free)
                if live is not None:
                    free.remove(live.slot)
                    active[live.slot] = live
            if not active:
                if stopping or self.closing.is_set():
                    break
                continue
            for live in self._step(list(active.values())):
                del active[live.slot]
                free.append(live.slot)
        refuse_waiting(self.requests, self.title)

    def _admit(self, req: GenRequest, free: list[int]) -> _Live | None:
        """Start `req` in the free slot that holds most of its prompt; None if it ends at once."""
        if not req.future.set_running_or_notify_cancel():
            return None  # its caller was cancelled while it waited
        req.started_s = self.clock()
        slot = free[0]
        try:
            tokens = self.tokenize(req)
            budget = min(req.max_tokens, self.decoder.n_ctx_slot - len(tokens))
            if budget < 1:
                raise UpstreamError(
                    f"the prompt has {len(tokens)} tokens; {self.title} runs with a context of "
                    f"{self.decoder.n_ctx_slot} per sequence",
                    status=400,
                )
            # The slot holding most of the prompt; else the one holding least, so that a long
            # shared prefix (the paraphrase instructions) outlives short answers.
            slot = max(free, key=lambda s: (self.decoder.reuse(s, tokens), -self.decoder.held(s)))
            self.decoder.prefill(slot, tokens)
        except UpstreamError as exc:
            req.future.set_exception(exc)
            return None
        except Exception as exc:  # a llama.cpp failure: this caller gets a 502, the slot a fresh start
            self.decoder.forget(slot)
            req.future.set_exception(self._failure(exc))
            return None
        sampler = TokenSampler(req.temperature, req.top_p, req.seed)
        return _Live(req, slot, len(tokens), budget, sampler, pending=tokens[-1], pos=len(tokens) - 1)

    def _step(self, active: list[_Live]) -> list[_Live]:
        """Decode one token of every active request; returns those that finished (futures resolved)."""
        self.peak = max(self.peak, len(active))
        try:
            rows = self.decoder.decode([(live.slot, live.pending, live.pos) for live in active])
        except Exception as exc:  # every sequence of the step shares the failure
            for live in active:
                self.decoder.forget(live.slot)
                live.req.future.set_exception(self._failure(exc))
            return active
        done = []
        for live, logits in zip(active, rows, strict=True):
            token, lp = live.sampler.pick(logits)
            live.pos += 1
            if self.is_end(token):
                live.finish = "stop"
            else:
                live.out.append(token)
                live.logprobs.append(lp)
                live.pending = token
                if len(live.out) >= live.budget:
                    live.finish = "length"
                elif live.req.abandoned.is_set() or self.closing.is_set():
                    live.finish = "abandoned"
            if live.finish is not None:
                live.req.future.set_result(self._completion(live))
                done.append(live)
        return done

    def _completion(self, live: _Live) -> Completion:
        return Completion(
            text=self.detokenize(live.out).strip(),
            prompt_tokens=live.prompt_tokens,
            completion_tokens=len(live.out),
            cost=0.0,
            logprob=sum(live.logprobs) / len(live.logprobs) if live.logprobs else None,
            finish_reason=live.finish or "length",
            token_logprobs=token_logprobs(live.out, live.logprobs, self.detokenize),
        )

    def _failure(self, exc: Exception) -> UpstreamError:
        log.warning("llama.cpp generation failed: %s", exc, exc_info=True)
        return UpstreamError(f"{self.title} failed: {type(exc).__name__}: {str(exc)[:200]}", status=502)


class SlotContext:
    """A llama.cpp context with `n_slots` sequences, each in its own KV stream.

    Args:
        llm: the loaded llama_cpp.Llama whose model (weights, vocabulary) this context uses.
        n_slots: sequences decoded together at most.
        n_ctx_slot: context length of each sequence (prompt + answer), in tokens.
        threads: CPU threads llama.cpp uses.
    """

    def __init__(self, llm: Any, *, n_slots: int, n_ctx_slot: int, threads: int) -> None:
        import llama_cpp

        # Llama's own settings (attention kernel, cache types).
        params = llama_cpp.llama_context_params.from_buffer_copy(llm.context_params)
        params.n_ctx = n_slots * n_ctx_slot
        params.n_batch = params.n_ubatch = max(CHUNK, n_slots)
        params.n_seq_max = n_slots
        # One stream per sequence: with a shared (unified) cache, where another sequence's
        # cells fall changes a sequence's attention sums, and greedy answers drift.
        params.kv_unified = False
        params.n_threads = params.n_threads_batch = threads
        self.n_slots = n_slots
        self.n_ctx_slot = n_ctx_slot
        self._llama_cpp = llama_cpp
        ctx = llama_cpp.llama_init_from_model(llm.model, params)
        if ctx is None:
            raise RuntimeError(f"llama.cpp could not make a context of {n_slots} x {n_ctx_slot} tokens")
        self._ctx = ctx
        self._memory = llama_cpp.llama_get_memory(ctx)
        self._batch = llama_cpp.llama_batch_init(max(CHUNK, n_slots), 0, 1)
        self._n_vocab = llm.n_vocab()
        self._cached: list[list[int]] = [[] for _ in range(n_slots)]  # tokens each slot's stream holds
        self._body: list[int] = [0] * n_slots  # how many of them were a prompt body

    def reuse(self, slot: int, tokens: Sequence[int]) -> int:
        return reusable_prefix(self._cached[slot], self._body[slot], tokens, CHUNK)

    def held(self, slot: int) -> int:
        return len(self._cached[slot])

    def prefill(self, slot: int, tokens: Sequence[int]) -> None:
        body = len(tokens) - 1
        keep = self.reuse(slot, tokens)
        self._llama_cpp.llama_memory_seq_rm(self._memory, slot, keep, -1)
        self._cached[slot] = list(tokens[:keep])
        self._body[slot] = keep
        for start in range(keep, body, CHUNK):
            chunk = tokens[start : min(start + CHUNK, body)]
            self._run([(slot, t, start + i, False) for i, t in enumerate(chunk)])
            self._cached[slot].extend(chunk)
        self._body[slot] = body

    def decode(self, rows: Sequence[tuple[int, int, int]]) -> list[np.ndarray]:
        import numpy as np

        self._run([(slot, token, pos, True) for slot, token, pos in rows])
        out = []
        for i, (slot, token, _pos) in enumerate(rows):
            self._cached[slot].append(token)
            logits = self._llama_cpp.llama_get_logits_ith(self._ctx, i)
            out.append(np.ctypeslib.as_array(logits, shape=(self._n_vocab,)).copy())
        return out

    def forget(self, slot: int) -> None:
        self._llama_cpp.llama_memory_seq_rm(self._memory, slot, 0, -1)
        self._cached[slot] = []
        self._body[slot] = 0

    def _run(self, rows: Sequence[tuple[int, int, int, bool]]) -> None:
        batch = self._batch
        batch.n_tokens = len(rows)
        for i, (slot, token, pos, logits) in enumerate(rows):
            batch.token[i] = token
            batch.pos[i] = pos
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = slot
            batch.logits[i] = logits
        code = self._llama_cpp.llama_decode(self._ctx, batch)
        if code != 0:
            raise RuntimeError(f"llama_decode returned {code}")

    def close(self) -> None:
        """Free the batch and the context (before the model they use)."""
        if self._batch is not None:
            self._llama_cpp.llama_batch_free(self._batch)
            self._batch = None
        if self._ctx is not None:
            self._llama_cpp.llama_free(self._ctx)
            self._ctx = None


def token_logprobs(
    tokens: list[int], logprobs: list[float], detokenize: Callable[[list[int]], str]
) -> list[dict[str, Any]]:
    """Each generated token's text and log-probability, as OpenAI's `choices[0].logprobs.content` holds them:
    what a doubt signal reads (how sure the model was of the tokens that carry the answer)."""
    return [{"token": detokenize([t]), "logprob": lp} for t, lp in zip(tokens, logprobs, strict=True)]
