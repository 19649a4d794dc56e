"""CallCache: model calls answered from a CallStore, counted, and never a reason for a request to fail.

`fetch(key, call)` returns the stored Completion for `key`, or waits for an identical
call already in flight in this process, or makes the call and stores its result. Only
successes are stored. When the store fails (Redis down), the cache logs one warning,
sets `available` to False, and answers every call from upstream for `retry_after_s`
before trying the store again; requests never fail because of it. A store that is up
but too busy to answer in time (every pooled connection in use: CacheBusyError) skips
the cache for that call only; `state()` then reports the cache as degraded, and why.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from selfpara.errors import ConfigError
from selfpara.models.cache.spec import parse_cache
from selfpara.models.cache.stores import DEFAULT_MAX_BYTES, CacheBusyError, CacheStoreError, CallStore, MemoryStore
from selfpara.result import Completion, Usage

log = logging.getLogger(__name__)


@dataclass
class CacheStats:
    """What a CallCache did since it was made (for logs, reports and the proxy's metrics).

    Attributes:
        hits: calls answered from the store or by an identical call in flight.
        misses: cacheable calls that went upstream.
        stored: results written to the store.
        errors: store reads or writes that failed.
        skipped: calls made without the store while it was unavailable.
        busy: reads or writes skipped because the store was too busy (counted in `errors` too).
    """

    hits: int = 0
    misses: int = 0
    stored: int = 0
    errors: int = 0
    skipped: int = 0
    busy: int = 0


class CallCache:
    """Cached model calls over one CallStore.

    Args:
        store: where results are kept.
        retry_after_s: after a store failure, seconds to answer from upstream before
            trying the store again.
        clock: monotonic seconds that `retry_after_s` is counted in (tests pass a fake one).
    """

    def __init__(
        self, store: CallStore, *, retry_after_s: float = 30.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.store = store
        self.retry_after_s = retry_after_s
        self.clock = clock
        self.stats = CacheStats()
        self.available = True
        self._down_until = 0.0
        self.last_error: str | None = None  # the last failure, as shown in /ready (no secret)
        self._busy_at = -float("inf")  # when the store last was too busy
        # Futures belong to one event loop: key -> the call in flight, per loop.
        self._pending: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Future[Completion]]] = (
            weakref.WeakKeyDictionary()
        )

    @property
    def name(self) -> str:
        return self.store.name

    async def fetch(
        self, key: str, call: Callable[[], Awaitable[Completion]], usage: Usage | None = None
    ) -> tuple[Completion, bool]:
        """The result for `key` and whether it came from the cache (no upstream call made).

        Args:
            key: the call's key (`selfpara.models.cache.keys.call_key`).
            call: makes the call; awaited only on a miss. Its exceptions propagate, nothing is stored.
            usage: counts a hit in `cache_hits`, an unavailable store in `cache_errors`.
        """
        found, reachable = await self.get(key)
        if found is None:
            leader = self._in_flight().get(key)
            if leader is not None:
                await asyncio.wait([leader])  # an error of its own is not ours: then we call ourselves
                if not leader.cancelled():
                    found = leader.result()
        self.count(found, reachable, usage)
        if found is not None:
            return found, True
        pending = self._in_flight()
        future: asyncio.Future[Completion] | None = None
        if key not in pending:
            future = pending[key] = asyncio.get_running_loop().create_future()
        try:
            result = await call()
        except BaseException:
            if future is not None:
                future.cancel()  # errors are never shared: each waiter makes its own call
            raise
        finally:
            if future is not None and pending.get(key) is future:
                del pending[key]
        if future is not None:
            future.set_result(result)
        if reachable:
            await self.put(key, result)
        return result, False

    def count(self, found: Completion | None, reachable: bool, usage: Usage | None = None) -> None:
        """Count one lookup's outcome (`get`'s pair): a hit, a skip (store unavailable) or a miss."""
        if found is not None:
            self.stats.hits += 1
            if usage is not None:
                usage.add_hit(found)
        elif not reachable:
            self.stats.skipped += 1
            if usage is not None:
                usage.cache_errors += 1
        else:
            self.stats.misses += 1

    async def get(self, key: str) -> tuple[Completion | None, bool]:
        """(the stored result or None, whether the store could be asked)."""
        if not self._up():
            return None, False
        try:
            raw = await self.store.get(key)
        except Exception as exc:
            self._failed(exc)
            return None, False
        self._recovered()
        if raw is None:
            return None, True
        try:
            return Completion.model_validate_json(raw), True
        except ValueError:  # written by an incompatible version, or damaged: a miss, overwritten later
            return None, True

    async def put(self, key: str, result: Completion) -> None:
        """Store `result` under `key` (a failure only marks the store unavailable)."""
        if not self._up():
            return
        try:
            await self.store.put(key, result.model_dump_json())
        except Exception as exc:
            self._failed(exc)
            return
        self.stats.stored += 1

    def _in_flight(self) -> dict[str, asyncio.Future[Completion]]:
        loop = asyncio.get_running_loop()
        pending = self._pending.get(loop)
        if pending is None:
            pending = self._pending[loop] = {}
        return pending

    def _up(self) -> bool:
        return self.available or self.clock() >= self._down_until

    def state(self) -> tuple[str, str | None]:
        """("ok" | "degraded" | "unavailable", why): unavailable while the store is switched off
        after a failure, degraded when it was too busy for some calls within `retry_after_s`."""
        if not self.available:
            left = max(0.0, self._down_until - self.clock())
            return "unavailable", f"{self.last_error}; answering without it, retrying in {left:.0f}s"
        if self.clock() - self._busy_at < max(self.retry_after_s, 1.0):
            return "degraded", f"{self.last_error}; {self.stats.busy} calls so far went upstream without it"
        return "ok", None

    def _failed(self, exc: Exception) -> None:
        self.stats.errors += 1
        # A store error's text names the store with its password masked; others may hold anything.
        detail = str(exc) if isinstance(exc, CacheStoreError) else type(exc).__name__
        self.last_error = detail
        if isinstance(exc, CacheBusyError):  # up, but saturated: skip this call, keep asking
            self.stats.busy += 1
            if self.clock() - self._busy_at >= self.retry_after_s:
                log.warning("call cache %s is degraded (%s); those calls go upstream", self.name, detail)
            self._busy_at = self.clock()
            return
        self._down_until = self.clock() + self.retry_after_s
        if self.available:
            log.warning(
                "call cache %s unavailable (%s); answering from upstream without it, retrying in %gs",
                self.name,
                detail,
                self.retry_after_s,
            )
        self.available = False

    def _recovered(self) -> None:
        if not self.available:
            log.warning("call cache %s is reachable again", self.name)
            self.available = True

    async def aclose(self) -> None:
        """Release the store's connections of the running event loop."""
        await self.store.aclose()


def open_call_cache(
    spec: str,
    *,
    size: int = 10_000,
    ttl_s: float | None = None,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
    max_connections: int = 64,
    pool_timeout_s: float = 2.0,
) -> CallCache | None:
    """The CallCache a `cache` setting names (see `selfpara.models.cache.spec`), or None for off.

    Args:
        spec: off, memory, a Redis URL or sqlite:///PATH.
        size: entries the memory store keeps.
        ttl_s: seconds an entry lives; None: forever.
        max_bytes: bytes of values the memory store keeps; None: no byte bound.
        max_connections: Redis connections per event loop (the calls in flight at once).
        pool_timeout_s: seconds a Redis lookup waits for a free connection before it is skipped.

    Raises ConfigError for a malformed setting, a missing `redis` package or an unopenable file.
    """
    try:
        parsed = parse_cache(spec)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if parsed.kind == "off":
        return None
    if parsed.kind == "memory":
        return CallCache(MemoryStore(size, ttl_s, max_bytes=max_bytes))
    assert parsed.target is not None
    if parsed.kind == "sqlite":
        from selfpara.models.cache.sqlite_store import SQLiteStore

        return CallCache(SQLiteStore(parsed.target, ttl_s=ttl_s))
    from selfpara.models.cache.redis_store import RedisStore

    return CallCache(
        RedisStore(parsed.target, ttl_s=ttl_s, max_connections=max_connections, pool_timeout_s=pool_timeout_s)
    )
