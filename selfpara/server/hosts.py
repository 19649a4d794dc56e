"""Request heads refused before any route: a `Host` the proxy does not serve (`allowed_hosts`: the
guard against DNS rebinding), and a body framed two ways (request smuggling).

A web page on attacker.example can make its DNS name resolve to 127.0.0.1 and then send
requests to a proxy on loopback from the visitor's browser, as if same-origin, and read
the answers (`/metrics`, `/ready`, completions on the operator's upstream key). Such
requests carry the page's name in `Host`, so a proxy reached on a loopback address
serves only loopback names by default: `localhost` (and `*.localhost`), `127.x.y.z`,
`::1`. On other interfaces any name is served unless `allowed_hosts` lists them.

A request with both `Transfer-Encoding` and `Content-Length` is refused (400 `ambiguous_body_length`)
and its connection closed (RFC 9112 §6.3): the server here reads the chunked body, but a front proxy
that went by Content-Length would take the rest of it for the next request on the connection.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from selfpara.server.logs import printable
from selfpara.util.hosts import is_loopback

log = logging.getLogger("selfpara.server")


def host_name(header: str) -> str:
    """The name in a `Host` header value, lower case, without the port or IPv6 brackets."""
    text = header.strip().lower()
    if text.startswith("["):
        return text[1:].split("]", 1)[0]
    if text.count(":") == 1:
        text = text.split(":", 1)[0]
    return text.rstrip(".")


def allowed(name: str, patterns: Sequence[str]) -> bool:
    """Whether `name` matches one of `patterns`: exact names, `*.example.com` (its subdomains), `*`."""
    for pattern in patterns:
        p = host_name(pattern) if pattern != "*" else "*"
        if p == "*" or p == name or (p.startswith("*.") and name.endswith(p[1:])):
            return True
    return False


def host_ok(header: str | None, local_address: str | None, patterns: Sequence[str] | None) -> bool:
    """Whether a request with `Host: header`, arriving on the proxy's `local_address`, is served.

    Args:
        header: the request's Host header (None when it sent none: refused).
        local_address: the address the connection reached (the server's side); None: unknown.
        patterns: `allowed_hosts`; None: loopback names on a loopback address, any name elsewhere.
    """
    if header is None:
        return False
    name = host_name(header)
    if patterns is not None:
        return allowed(name, patterns)
    if local_address is None or not is_loopback(local_address):
        return True
    return is_loopback(name)


class HostCheckMiddleware:
    """Refuses, before any route runs, a request whose Host header `host_ok` refuses (400 `invalid_host`)
    and one with both Transfer-Encoding and Content-Length (400 `ambiguous_body_length`, connection closed)."""

    def __init__(self, app: Any, patterns: Sequence[str] | None) -> None:
        self.app = app
        self.patterns = None if patterns is None else list(patterns)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = (scope.get("state") or {}).get("request_id", "-")
        names = {k for k, _ in scope["headers"]}
        if b"transfer-encoding" in names and b"content-length" in names:
            log.warning(
                "request_id=%s status=400 refused a body framed two ways (Transfer-Encoding and Content-Length)", rid
            )
            message = "send Transfer-Encoding or Content-Length, not both (the body's length would be ambiguous)"
            await _refuse(send, "ambiguous_body_length", message, close=True)
            return
        header = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), None)
        server = scope.get("server")
        local = str(server[0]) if server else None
        if host_ok(header, local, self.patterns):
            await self.app(scope, receive, send)
            return
        log.warning("request_id=%s status=400 refused Host %s (allowed_hosts)", rid, printable(header, 200))
        message = (
            "this proxy does not serve this Host name (allowed_hosts; a loopback proxy serves "
            "localhost, 127.0.0.1 and ::1 by default)"
        )
        await _refuse(send, "invalid_host", message)


async def _refuse(send: Any, code: str, message: str, *, close: bool = False) -> None:
    """A 400 with `code` in the OpenAI error format; `close`: and the connection closed after it."""
    body = {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}}
    headers = [(b"content-type", b"application/json"), *([(b"connection", b"close")] if close else [])]
    await send({"type": "http.response.start", "status": 400, "headers": headers})
    await send({"type": "http.response.body", "body": json.dumps(body).encode()})
