"""Where cached calls are kept: the CallStore protocol and the in-process store.

A store maps a key (a hash, see `selfpara.models.cache.keys`) to the JSON text of a Completion.
It knows nothing of models: what may be cached, hit counting and what to do when a store
fails are `CallCache`'s. Stores: MemoryStore (here, the default), RedisStore
(`selfpara.models.cache.redis_store`, shared by processes), SQLiteStore
(`selfpara.models.cache.sqlite_store`, one file; the evaluation package's call cache).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol


class CacheStoreError(Exception):
    """A store could not be read or written (unreachable, refused, full). The message holds no secret."""


class CacheBusyError(CacheStoreError):
    """The store is reachable but every connection to it stayed busy for the pool's wait limit:
    the lookup is skipped, the store is not switched off (CallCache reports it as degraded)."""


class CallStore(Protocol):
    """Keeps cached calls by key. `get` and `put` raise CacheStoreError when the store fails.

    Attributes:
        name: how logs and reports name the store (no password: URLs are masked).
    """

    name: str

    async def get(self, key: str) -> str | None:
        """The value stored under `key`, or None."""
        ...

    async def put(self, key: str, value: str) -> None:
        """Store `value` under `key`, replacing what was there."""
        ...

    async def aclose(self) -> None:
        """Release connections or files held for the running event loop."""
        ...


DEFAULT_MAX_BYTES = 256 * 2**20
"""The memory store's default byte bound (256 MiB of stored values)."""


class MemoryStore:
    """A least-recently-used store in this process's memory.

    Args:
        max_entries: entries kept; the least recently used is dropped beyond it.
        ttl_s: seconds an entry is served after it was stored; None: until dropped.
        max_bytes: bytes of values kept (UTF-8); the least recently used are dropped beyond
            it, and a value larger than it alone is not stored. None: no byte bound.
        clock: monotonic seconds that `ttl_s` is counted in (tests pass a fake one).
    """

    name = "memory"

    def __init__(
        self,
        max_entries: int = 10_000,
        ttl_s: float | None = None,
        *,
        max_bytes: int | None = DEFAULT_MAX_BYTES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        if max_bytes is not None and max_bytes < 1:
            raise ValueError("max_bytes must be at least 1")
        self.max_entries = max_entries
        self.ttl_s = ttl_s
        self.max_bytes = max_bytes
        self.clock = clock
        self.bytes = 0  # of the values kept now
        self._entries: OrderedDict[str, tuple[float | None, str, int]] = OrderedDict()

    async def get(self, key: str) -> str | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        expires, value, _ = entry
        if expires is not None and self.clock() >= expires:
            self._drop(key)
            return None
        self._entries.move_to_end(key)
        return value

    async def put(self, key: str, value: str) -> None:
        size = len(value.encode("utf-8", "surrogatepass"))
        self._drop(key)
        if self.max_bytes is not None and size > self.max_bytes:
            return  # one answer larger than the whole cache: not kept, never an error
        expires = self.clock() + self.ttl_s if self.ttl_s is not None else None
        self._entries[key] = (expires, value, size)
        self.bytes += size
        while len(self._entries) > self.max_entries or (self.max_bytes is not None and self.bytes > self.max_bytes):
            self._drop(next(iter(self._entries)))

    def _drop(self, key: str) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self.bytes -= entry[2]

    def __len__(self) -> int:
        return len(self._entries)

    async def aclose(self) -> None:
        """Nothing to release: the entries stay for the next event loop."""
