"""The bench's call cache: reruns are free and arms share identical calls.

It is selfpara's call cache (`selfpara.models.cache`: one key scheme, CallCache over a
SQLiteStore) placed *under* each arm's ModelClient as a Backend (`CachingBackend`), so
that the whole path above it runs unchanged on a hit and usage (calls, tokens, cost) is
counted as the arm spent it; hits are counted apart (`tally_calls`).

Keys: a deterministic call (temperature 0, or seeded) is keyed by what it is (model,
messages, parameters), so arms share it: the selfpara arm's greedy answer to the original
wording is the raw arm's call, and self-consistency's samples are keyed by their seeds.
An unseeded sampled call is a fresh draw per arm: it is keyed by the arm's label too, and
replayed only to that arm on a rerun. Only successful calls are stored.

File: `bench-calls-v2.sqlite` in the cache folder.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from selfpara.errors import ConfigError
from selfpara.models import Backend, CallCache, ModelClient, SQLiteStore, cacheable, call_key
from selfpara.result import Completion, Message
from selfpara.util import cache_dir

CACHE_FILE = "bench-calls-v2.sqlite"


def default_cache_path() -> Path:
    """The bench's call cache file: `bench-calls-v2.sqlite` in `cache_dir()`."""
    return cache_dir() / CACHE_FILE


@dataclass
class BenchCache:
    """The bench's cache: a CallCache over one SQLite file.

    Attributes:
        calls: the cache.
        made: keys of the calls made since `new_run` (a hit on one is a call shared within the run), each
            with the model-seconds it took, so an answer that shares it is charged what it cost.
    """

    calls: CallCache
    made: dict[str, float] = field(default_factory=dict)

    def new_run(self) -> None:
        """Start counting shared calls afresh: a hit on a call of an earlier run is a replay."""
        self.made.clear()

    @property
    def path(self) -> Path:
        store = self.calls.store
        assert isinstance(store, SQLiteStore)
        return store.path

    def __len__(self) -> int:
        store = self.calls.store
        assert isinstance(store, SQLiteStore)
        return len(store)


_SAMPLE_TALLY: contextvars.ContextVar[CallTally | None] = contextvars.ContextVar("selfpara_sample_tally", default=None)


@dataclass
class CallTally:
    """Calls of one sample: made (`calls`), answered from the cache (`hits`), and of those,
    made by another arm earlier in the same run (`shared`)."""

    calls: int = 0
    hits: int = 0
    shared: int = 0
    call_s: float = 0.0
    """Seconds the calls it made spent in the model's backend, summed (they may overlap)."""
    queue_s: float = 0.0
    """Of those, seconds spent waiting in a local engine's queue (Completion.queue_s), summed."""
    shared_s: float = 0.0
    """Model-seconds the shared calls took when the arm that made them made them, summed."""

    def timed(self, seconds: float, result: Completion) -> None:
        """Add one call the backend answered in `seconds`."""
        self.call_s += seconds
        self.queue_s += result.queue_s or 0.0


@contextlib.contextmanager
def tally_calls() -> Iterator[CallTally]:
    """Count the calls made inside this block (and the tasks it starts) that go through a CachingBackend.

    The tally lives in a context variable, so concurrent samples each count their own.
    """
    tally = CallTally()
    token = _SAMPLE_TALLY.set(tally)
    try:
        yield tally
    finally:
        _SAMPLE_TALLY.reset(token)


class CachingBackend:
    """A Backend that answers from a BenchCache and otherwise asks the backend `client` picks for the model.

    Args:
        client: the ModelClient whose backends make real calls (`client.backend_for(model)`).
        cache: where completions are kept; None disables caching (calls pass through).
        namespace: what keeps one arm's unseeded sampled calls apart, e.g. {"arm": label, "sample": 0}.
    """

    def __init__(self, client: ModelClient, cache: BenchCache | None, namespace: dict[str, Any] | None = None) -> None:
        self.client = client
        self.cache = cache
        self.namespace = namespace or {}
        self.hits = 0
        self.calls = 0

    async def complete(self, model: str, messages: list[Message], params: dict[str, Any]) -> Completion:
        backend: Backend = self.client.backend_for(model)
        tally = _SAMPLE_TALLY.get()
        cache = self.cache
        if cache is None:
            self.client.require_credentials(model)  # a missing key stops the run before anything is sent
            self.calls += 1
            if tally is not None:
                tally.calls += 1
            started = self.client.clock()
            result = await backend.complete(model, messages, params)
            if tally is not None:
                tally.timed(self.client.clock() - started, result)
            return result
        key = call_key(model, messages, params, None if cacheable(params) else self.namespace)
        called = False

        async def call() -> Completion:
            nonlocal called
            self.client.require_credentials(model)  # only a call that goes out needs the key: replays do not
            started = self.client.clock()
            result = await backend.complete(model, messages, params)
            seconds = self.client.clock() - started
            if tally is not None:
                tally.timed(seconds, result)
            called = True
            # before waiters on this call resume: theirs is a shared hit, charged what the call cost
            cache.made[key] = seconds - (result.queue_s or 0.0)
            return result

        result, hit = await cache.calls.fetch(key, call)
        if called:
            self.calls += 1
            if tally is not None:
                tally.calls += 1
        else:
            self.hits += 1
            if tally is not None:
                tally.hits += 1
                if hit and key in cache.made:
                    tally.shared += 1
                    tally.shared_s += cache.made[key]
        return result


def caching_client(
    base: ModelClient,
    cache: BenchCache | None,
    namespace: dict[str, Any] | None = None,
    *,
    api_key: str | None = None,
    concurrency: int | None = None,
) -> tuple[ModelClient, CachingBackend]:
    """A ModelClient with `base`'s settings whose calls go through a CachingBackend over `base`'s backends.

    `api_key` is sent with every call (None: the provider's environment variable).
    """
    backend = CachingBackend(base, cache, namespace)
    client = ModelClient(
        api_base=base.api_base,
        api_key=api_key,
        timeout_s=base.timeout_s,
        retries=base.retries,
        concurrency=concurrency or base.concurrency,
        backoff_s=base.backoff_s,
        backend=backend,
        clock=base.clock,
    )
    return client, backend


def open_cache(path: str | Path | None = None, enabled: bool = True) -> BenchCache | None:
    """The bench's call cache at `path` (default `default_cache_path()`), or None when disabled.

    Raises ConfigError when the file cannot be opened.
    """
    if not enabled:
        return None
    try:
        return BenchCache(CallCache(SQLiteStore(default_cache_path() if path is None else path)))
    except ConfigError as exc:
        raise ConfigError(f"{exc}; pass another --cache or --no-cache") from None
