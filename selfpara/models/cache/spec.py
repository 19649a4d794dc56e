"""The `cache` setting: which store keeps model calls across requests, read and checked once.

    off                               no cache
    memory                            this process only (an LRU bounded by `cache_size`)
    redis://[:PASSWORD@]HOST[:PORT][/DB]   Redis: shared by processes and proxy replicas
    rediss://...                      Redis over TLS; unix:///path/redis.sock for a socket
    sqlite:///PATH                    one SQLite file (the evaluation package's kind of cache)

A value that is none of these is a ConfigError at startup; a password in a URL is never
repeated in a message (`masked`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal
from urllib.parse import SplitResult, urlsplit, urlunsplit

CacheKind = Literal["off", "memory", "redis", "sqlite"]

REDIS_SCHEMES = ("redis", "rediss", "unix")
OFF_WORDS = ("off", "none", "no", "false", "0")
USAGE = "off, memory, redis://HOST:PORT/DB (rediss:// for TLS, unix:///path.sock) or sqlite:///PATH"


@dataclass(frozen=True)
class CacheSpec:
    """A parsed `cache` setting.

    Attributes:
        kind: off, memory, redis or sqlite.
        target: the Redis URL or the SQLite file path; None for off and memory.
    """

    kind: CacheKind
    target: str | None = None


def masked(url: str) -> str:
    """`url` with any password replaced by ***, safe to log or show."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


def parse_cache(value: str) -> CacheSpec:
    """The store `value` names; raises ValueError (with the password masked) when it names none."""
    text = value.strip()
    if text.lower() in OFF_WORDS:
        return CacheSpec("off")
    if text.lower() == "memory":
        return CacheSpec("memory")
    try:
        parts = urlsplit(text)
    except ValueError:
        raise ValueError(f"cache: not a URL; use {USAGE}") from None
    scheme = parts.scheme.lower()
    if scheme == "sqlite":
        path = text[len("sqlite://") :]
        if not path.strip("/"):
            raise ValueError("cache: sqlite:// needs a file path, e.g. sqlite:///home/me/.cache/selfpara/calls.sqlite")
        return CacheSpec("sqlite", path)
    if scheme not in REDIS_SCHEMES:
        raise ValueError(f"cache: {masked(text)!r} is not a cache; use {USAGE}")
    _check_redis(text, parts)
    return CacheSpec("redis", text)


def _check_redis(text: str, parts: SplitResult) -> None:
    """Raise ValueError for a Redis URL that redis-py would refuse or misread."""
    shown = masked(text)
    if parts.scheme.lower() == "unix":
        if not parts.path:
            raise ValueError(f"cache: {shown!r} names no socket path (unix:///path/to/redis.sock)")
        return
    if not parts.hostname:
        raise ValueError(f"cache: {shown!r} names no host (redis://HOST:PORT/DB)")
    try:
        parts.port  # noqa: B018 (urlsplit checks the port only when it is read)
    except ValueError:
        raise ValueError(f"cache: {shown!r} has a port that is not a number from 0 to 65535") from None
    db = parts.path.strip("/")
    if db and not db.isdigit():
        raise ValueError(f"cache: {shown!r}: the path must be a database number (/0), not {db!r}")
