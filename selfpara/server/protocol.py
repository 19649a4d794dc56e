"""uvicorn's HTTP protocol with a header read timeout, and a shutdown that reads before it closes.

uvicorn bounds idle keep-alive connections but not a client that opens a connection
and sends its request head slowly (or never): each such connection is held forever,
which lets a few hundred slow clients tie up the server. These protocols close a
connection whose request head has not fully arrived within `header_timeout_s` of the
connection opening or of the previous response ending. The body has its own limit in
the app (`body_timeout_s`, answered with 408). At shutdown, a connection is judged idle only once
what its client already sent has been read, so a request sent just before SIGTERM is answered, not
dropped with its connection.

    uvicorn.run(app, **uvicorn_options(settings))

The classes are found by name (`H11_10000` = h11 with 10 s), so `--workers` can pass
them to its worker processes.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

_NAME = re.compile(r"^(H11|HttpTools)_(\d+)$")
SHUTDOWN_READ_S = 0.01
"""How long after the server's shutdown began a connection is judged idle (and closed) or busy (answered)."""
_CLASSES: dict[str, type] = {}


def _with_header_timeout(base: type, timeout_s: float, name: str) -> type:
    class HeaderTimeout(base):
        header_timeout_s = timeout_s

        def connection_made(self, transport: asyncio.Transport) -> None:
            super().connection_made(transport)
            self._arm_header_timer()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm_header_timer()

        def shutdown(self) -> None:
            # uvicorn closes a connection it sees idle at once, and with it a request the client sent just
            # before the shutdown that still waits unread in the socket (under load: dozens, each a client's
            # error). Decide once the loop has read what is there: that request is then answered.
            self.loop.call_later(SHUTDOWN_READ_S, super().shutdown)

        def connection_lost(self, exc: Exception | None) -> None:
            timer = getattr(self, "_header_timer", None)
            if timer is not None:
                timer.cancel()
            super().connection_lost(exc)

        def _arm_header_timer(self) -> None:
            timer = getattr(self, "_header_timer", None)
            if timer is not None:
                timer.cancel()
            self._armed_cycle = self.cycle
            self._header_timer = self.loop.call_later(self.header_timeout_s, self._header_timeout)

        def _header_timeout(self) -> None:
            # No new request head since the timer was armed, and none in progress: close.
            idle = self.cycle is None or self.cycle.response_complete
            if self.cycle is self._armed_cycle and idle and not self.transport.is_closing():
                self.transport.close()

    HeaderTimeout.__name__ = HeaderTimeout.__qualname__ = name
    HeaderTimeout.__module__ = __name__
    return HeaderTimeout


def __getattr__(name: str) -> type:
    """`H11_<ms>` / `HttpTools_<ms>`: the protocol class with that header timeout (made once)."""
    match = _NAME.match(name)
    if match is None:
        raise AttributeError(name)
    if name not in _CLASSES:
        if match.group(1) == "H11":
            from uvicorn.protocols.http.h11_impl import H11Protocol as base
        else:
            from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as base  # type: ignore[assignment]
        _CLASSES[name] = _with_header_timeout(base, int(match.group(2)) / 1000, name)
    return _CLASSES[name]


def protocol_class(header_timeout_s: float) -> type:
    """uvicorn's default HTTP protocol (httptools when installed, else h11) with a header timeout."""
    try:
        import httptools  # noqa: F401

        kind = "HttpTools"
    except ImportError:
        kind = "H11"
    return __getattr__(f"{kind}_{round(header_timeout_s * 1000)}")


def uvicorn_options(settings: Any) -> dict[str, Any]:
    """uvicorn settings the proxy's limits need: the header timeout protocol."""
    return {"http": protocol_class(settings.header_timeout_s)}
