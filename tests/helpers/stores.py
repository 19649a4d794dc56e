"""Call-cache stores that fail on purpose, for the tests of a degraded cache."""

from __future__ import annotations

from selfpara.models.cache.stores import MemoryStore


class BrokenStore:
    name = "broken"

    def __init__(self) -> None:
        self.up = False
        self.inner = MemoryStore()

    async def get(self, key: str) -> str | None:
        if not self.up:
            from selfpara.models.cache import CacheStoreError

            raise CacheStoreError("cannot read broken store: connection refused")
        return await self.inner.get(key)

    async def put(self, key: str, value: str) -> None:
        if not self.up:
            raise ConnectionError("refused")
        await self.inner.put(key, value)

    async def aclose(self) -> None:
        pass


class BusyStore(BrokenStore):
    """A reachable store whose every connection is busy (CacheBusyError) until `up`; writes work."""

    name = "busy"

    async def get(self, key: str) -> str | None:
        if not self.up:
            from selfpara.models.cache.stores import CacheBusyError

            raise CacheBusyError("cannot read Redis at busy: all 4 connections stayed busy for 2s")
        return await self.inner.get(key)

    async def put(self, key: str, value: str) -> None:
        await self.inner.put(key, value)
