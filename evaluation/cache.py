"""An on-disk cache of model calls, so that reruns of a benchmark are free.

The cache sits under ModelClient as a Backend (`CachingBackend`): every call an arm
makes, the pipeline's own calls included, is looked up by a key made of the arm's
label (so arms never share answers), the model, the exact messages (the prompt), every
generation parameter (temperature, max_tokens, the sample's seed, ...) and the sample
index. Only successful calls are stored. Because the whole path above the backend runs
unchanged on a hit, usage (calls, tokens, cost) is still counted as the arm spent it;
hits are counted separately.

Storage is one SQLite file (WAL mode), safe for several processes at once.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from selfpara.errors import ConfigError
from selfpara.llm import Backend, ModelClient
from selfpara.result import Completion, Message

# Params that do not change what the model says.
_IGNORED_PARAMS = {"timeout", "api_key"}

DEFAULT_CACHE_ENV = "SELFPARA_CACHE_DIR"


def default_cache_path() -> Path:
    """`$SELFPARA_CACHE_DIR/bench-calls.sqlite`, else `$XDG_CACHE_HOME/selfpara/...`, else `~/.cache/selfpara/...`."""
    root = os.environ.get(DEFAULT_CACHE_ENV)
    if root:
        return Path(root).expanduser() / "bench-calls.sqlite"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "selfpara" / "bench-calls.sqlite"


def call_key(namespace: dict[str, Any], model: str, messages: list[Message], params: dict[str, Any]) -> str:
    """SHA-256 over everything that determines a call's output."""
    payload = {
        "ns": namespace,
        "model": model,
        "messages": messages,
        "params": {k: v for k, v in sorted(params.items()) if k not in _IGNORED_PARAMS},
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


class CallCache:
    """A key -> Completion store in one SQLite file.

    Args:
        path: the database file (its folder is created).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), timeout=30, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, completion TEXT NOT NULL, "
                "created REAL DEFAULT (julianday('now')))"
            )
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(
                f"{self.path}: cannot open the call cache ({exc}); pass another --cache or --no-cache"
            ) from None
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> Completion | None:
        with self._lock:
            row = self._db.execute("SELECT completion FROM calls WHERE key = ?", (key,)).fetchone()
        if row is None:
            self.misses += 1
            return None
        try:
            completion = Completion.model_validate_json(row[0])
        except ValueError:
            self.misses += 1
            return None
        self.hits += 1
        return completion

    def put(self, key: str, completion: Completion) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO calls (key, completion) VALUES (?, ?)", (key, completion.model_dump_json())
            )

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM calls").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


_SAMPLE_TALLY: contextvars.ContextVar[CallTally | None] = contextvars.ContextVar("selfpara_sample_tally", default=None)


@dataclass
class CallTally:
    """Calls of one sample: made (`calls`) and answered from the cache (`hits`)."""

    calls: int = 0
    hits: int = 0


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
    """A Backend that answers from a CallCache and otherwise asks the backend `client` picks for the model.

    Args:
        client: the ModelClient whose backends make real calls (`client.backend_for(model)`).
        cache: where completions are kept; None disables caching (calls pass through).
        namespace: extra key parts, e.g. {"arm": label, "sample": 0}.
    """

    def __init__(self, client: ModelClient, cache: CallCache | None, namespace: dict[str, Any] | None = None) -> None:
        self.client = client
        self.cache = cache
        self.namespace = namespace or {}
        self.hits = 0
        self.calls = 0

    async def complete(self, model: str, messages: list[Message], params: dict[str, Any]) -> Completion:
        backend: Backend = self.client.backend_for(model)
        tally = _SAMPLE_TALLY.get()
        if self.cache is None:
            self.calls += 1
            if tally is not None:
                tally.calls += 1
            return await backend.complete(model, messages, params)
        key = call_key(self.namespace, model, messages, params)
        found = self.cache.get(key)
        if found is not None:
            self.hits += 1
            if tally is not None:
                tally.hits += 1
            return found
        self.calls += 1
        if tally is not None:
            tally.calls += 1
        result = await backend.complete(model, messages, params)
        self.cache.put(key, result)
        return result


def caching_client(
    base: ModelClient,
    cache: CallCache | None,
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
    )
    return client, backend


def open_cache(path: str | Path | None, enabled: bool = True) -> CallCache | None:
    """The call cache at `path` (default location when None), or None when disabled."""
    if not enabled:
        return None
    return CallCache(path or default_cache_path())
