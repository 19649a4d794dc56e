"""A CallStore in Redis, so that processes and proxy replicas share cached calls (the `redis` extra).

Keys are `selfpara:call:<hash>`, values the JSON of a Completion, each with a time to
live. A Redis that is down must not slow requests down: connecting and every command
have a short timeout and one immediate retry on a fresh connection (CallCache stops
asking for a while after a failure and answers from upstream meanwhile).

Connections come from a blocking pool of `max_connections` per event loop: a lookup
beyond it waits up to `pool_timeout_s` for a free connection (redis-py's default pool
raises "Too many connections" at once instead, which a proxy with more calls in flight
than connections would take for an outage); a wait past that limit is a CacheBusyError,
which skips the cache for that call without switching it off.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import AsyncGenerator
from typing import Any

from selfpara.errors import ConfigError
from selfpara.models.cache.spec import masked
from selfpara.models.cache.stores import CacheBusyError, CacheStoreError
from selfpara.util.extras import requires_extra

log = logging.getLogger(__name__)

KEY_PREFIX = "selfpara:call:"


class RedisStore:
    """Cached calls in Redis.

    Args:
        url: redis://[:password@]host[:port][/db], rediss:// (TLS) or unix:///path.sock.
        ttl_s: seconds an entry lives; None: until Redis evicts it.
        timeout_s: limit of connecting and of each command.
        prefix: put before every key (separates caches that share one Redis database).
        max_connections: connections per event loop (size it to the calls in flight at once).
        pool_timeout_s: seconds a lookup waits for a free connection before it is skipped.

    Raises ConfigError when the `redis` package is missing or the URL is malformed
    (nothing connects before the first call).
    """

    def __init__(
        self,
        url: str,
        *,
        ttl_s: float | None = None,
        timeout_s: float = 1.0,
        prefix: str = KEY_PREFIX,
        max_connections: int = 64,
        pool_timeout_s: float = 2.0,
    ) -> None:
        if max_connections < 1:
            raise ConfigError("cache: the Redis pool needs at least one connection")
        with requires_extra("redis", "the Redis call cache"):
            import redis.asyncio  # noqa: F401  (checked now: a missing package fails at startup)
            from redis.asyncio.connection import parse_url
        self.name = masked(url)
        try:
            parse_url(url)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"cache: {self.name!r} is not a usable Redis URL ({exc})") from None
        self._url = url
        self.ttl_s = ttl_s
        self.timeout_s = timeout_s
        self.prefix = prefix
        self.max_connections = max_connections
        self.pool_timeout_s = pool_timeout_s
        # A client's connections belong to one event loop; the sync API runs a new loop per call.
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[Any, AsyncGenerator[None, None]]] = (
            weakref.WeakKeyDictionary()
        )

    async def _client(self) -> Any:
        loop = asyncio.get_running_loop()
        entry = self._clients.get(loop)
        if entry is not None:
            return entry[0]
        import redis.asyncio
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff

        pool = redis.asyncio.BlockingConnectionPool.from_url(
            self._url,
            max_connections=self.max_connections,
            timeout=self.pool_timeout_s,
            socket_timeout=self.timeout_s,
            socket_connect_timeout=self.timeout_s,
            retry=Retry(NoBackoff(), 1),  # once: a pooled connection may be stale after Redis restarted
        )
        client = redis.asyncio.Redis.from_pool(pool)  # closing the client closes its pool
        guard = _closer(client)
        await guard.__anext__()  # closed by this loop's shutdown_asyncgens (asyncio.run, uvicorn)
        self._clients[loop] = (client, guard)
        return client

    async def get(self, key: str) -> str | None:
        try:
            client = await self._client()
            value = await client.get(self.prefix + key)
        except Exception as exc:
            if _wrong_type(exc):  # a list or hash under the key: a miss for it (`put`'s SET replaces it); Redis is fine
                log.warning("call cache %s: an entry holds a Redis value that is not a string: a miss", self.name)
                return None
            raise self._error("read", exc) from None
        if not isinstance(value, bytes):
            return value
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:  # damaged or written by something else: a miss, and dropped; Redis is fine
            log.warning("call cache %s: dropped an entry that is not UTF-8 text", self.name)
            with contextlib.suppress(Exception):
                await client.delete(self.prefix + key)
            return None

    async def put(self, key: str, value: str) -> None:
        ttl_ms = max(1, round(self.ttl_s * 1000)) if self.ttl_s is not None else None
        try:
            client = await self._client()
            await client.set(self.prefix + key, value, px=ttl_ms)
        except Exception as exc:
            raise self._error("write", exc) from None

    def _error(self, what: str, exc: Exception) -> CacheStoreError:
        if isinstance(exc.__cause__, asyncio.TimeoutError) and "No connection available" in str(exc):
            return CacheBusyError(
                f"cannot {what} Redis at {self.name}: all {self.max_connections} connections stayed busy "
                f"for {self.pool_timeout_s:g}s"
            )
        text = str(exc).replace(self._url, self.name) or type(exc).__name__
        return CacheStoreError(f"cannot {what} Redis at {self.name}: {type(exc).__name__}: {text}")

    async def aclose(self) -> None:
        entry = self._clients.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            await entry[1].aclose()


def _wrong_type(exc: Exception) -> bool:
    """Whether Redis answered WRONGTYPE: the key holds another kind of value (a list, a hash, ...)."""
    from redis.exceptions import ResponseError

    return isinstance(exc, ResponseError) and str(exc).startswith("WRONGTYPE")


async def _closer(client: Any) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        await client.aclose()
