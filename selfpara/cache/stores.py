"""Where cached calls are kept: the CallStore protocol and the in-process store.

A store maps a key (a hash, see `selfpara.cache.keys`) to the JSON text of a Completion.
It knows nothing of models: what may be cached, hit counting and what to do when a store
fails are `CallCache`'s. Stores: MemoryStore (here, the default), RedisStore
(`selfpara.cache.redis_store`, shared by processes), SQLiteStore
(`selfpara.cache.sqlite_store`, one file; the evaluation package's call cache).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Protocol


class CacheStoreError(Exception):
    """A store could not be read or written (unreachable, refused, full). The message holds no secret."""


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


class MemoryStore:
    """A least-recently-used store in this process's memory.

    Args:
        max_entries: entries kept; the least recently used is dropped beyond it.
        ttl_s: seconds an entry is served after it was stored; None: until dropped.
    """

    name = "memory"

    def __init__(self, max_entries: int = 10_000, ttl_s: float | None = None) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.max_entries = max_entries
        self.ttl_s = ttl_s
        self._entries: OrderedDict[str, tuple[float | None, str]] = OrderedDict()

    async def get(self, key: str) -> str | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        expires, value = entry
        if expires is not None and time.monotonic() >= expires:
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return value

    async def put(self, key: str, value: str) -> None:
        expires = time.monotonic() + self.ttl_s if self.ttl_s is not None else None
        self._entries[key] = (expires, value)
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)

    async def aclose(self) -> None:
        """Nothing to release: the entries stay for the next event loop."""
