"""An upstream that could not be reached at all: no connection was made (refused, a name that does not
resolve, no route). Both transports report it alike, as "cannot connect to <URL> (<cause>)", at once:
nothing answered, so it is not retried as a server error is (a restarting server refuses for seconds,
not for the backoff's fraction of one); a router's pool still sends the call to another deployment.

The cause is read off the exception and what it wraps: aiohttp's ClientConnectorError (its `os_error`),
httpx's ConnectError, the OSError below them, and litellm's and openai's wrappings of those (kept as
their `__cause__` / `__context__`, or only in their text).
"""

from __future__ import annotations

import errno
import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

from selfpara.errors import UpstreamError
from selfpara.util.redaction import redact


class UpstreamUnreachable(UpstreamError):
    """No connection to the upstream could be made; not retried."""

    def __init__(self, message: str) -> None:
        super().__init__(message, status=502, retryable=False)


_CAUSES = {
    errno.ECONNREFUSED: "connection refused",
    errno.EHOSTUNREACH: "host unreachable",
    errno.ENETUNREACH: "network unreachable",
    errno.EADDRNOTAVAIL: "address not available",
}
# What the text of a wrapper says when it kept nothing else (litellm's own exceptions, say).
_TEXTS = (
    ("connection refused", "connection refused"),
    ("connect call failed", "connection refused"),
    ("name or service not known", "host not found"),
    ("nodename nor servname", "host not found"),
    ("temporary failure in name resolution", "host not found"),
    ("getaddrinfo failed", "host not found"),
    ("no route to host", "host unreachable"),
    ("network is unreachable", "network unreachable"),
)
_PLACEHOLDER = "https://api.openai.com"
# Exceptions raised only while connecting (by class name: aiohttp and httpx are imported where used).
_CONNECTING = ("ClientConnectorError", "ClientConnectorDNSError", "ConnectError")
# Wrappers of any transport failure: their text is read only for the causes above.
_WRAPPERS = ("APIConnectionError",)


def connect_failure(exc: BaseException) -> str | None:
    """Why no connection was made ("connection refused", "host not found", ...), or None when `exc`
    is not a failure to connect (a timeout, a reset mid-answer, an HTTP error)."""
    chain = list(_chain(exc))
    for item in chain:
        if isinstance(item, socket.gaierror):
            return "host not found"
        if isinstance(item, OSError) and item.errno in _CAUSES:
            return _CAUSES[item.errno]
    names = {c.__name__ for item in chain for c in type(item).__mro__}
    # asyncio's connect to a name of several addresses (localhost: ::1 and 127.0.0.1) that all failed
    several = any(isinstance(item, OSError) and str(item).startswith("Multiple exceptions:") for item in chain)
    if names.isdisjoint(_CONNECTING + _WRAPPERS) and not several:
        return None
    text = " ".join(str(item) for item in chain).lower()
    found = next((cause for needle, cause in _TEXTS if needle in text), None)
    if found is None and not names.isdisjoint(_CONNECTING):
        return "connection failed"
    return found


def unreachable(model: str, exc: BaseException, url: str | None) -> UpstreamUnreachable | None:
    """The error for `exc` when it is a failure to connect to `url` (None: the URL the exception names,
    else "the upstream"), else None. A password in the URL is masked."""
    cause = connect_failure(exc)
    if cause is None:
        return None
    found = _url_in(exc)
    if found == _PLACEHOLDER and not model.startswith("openai/") and "/" in model:
        found = None  # litellm's exceptions carry a request to api.openai.com whatever the provider
    where = url or found or "the upstream"
    return UpstreamUnreachable(f"{model}: cannot connect to {redact(where)} ({cause})")


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """`exc` and what it wraps: causes, contexts, aiohttp's `os_error`, litellm's `original_exception`."""
    seen: set[int] = set()
    todo = [exc]
    while todo:
        item = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        yield item
        for name in ("__cause__", "__context__", "os_error", "original_exception"):
            inner = getattr(item, name, None)
            if isinstance(inner, BaseException):
                todo.append(inner)


def _url_in(exc: BaseException) -> str | None:
    """The scheme, host and port of the request an exception of httpx or openai kept, if any."""
    for item in _chain(exc):
        try:
            url = str(getattr(getattr(item, "request", None), "url", "") or "")
        except Exception:  # httpx raises when an exception has no request
            continue
        parts = urlsplit(url)
        if parts.scheme and parts.hostname:
            return f"{parts.scheme}://{parts.netloc}"
    return None
