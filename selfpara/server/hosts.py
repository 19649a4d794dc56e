"""Which `Host` headers the proxy serves (`allowed_hosts`): the guard against DNS rebinding.

A web page on attacker.example can make its DNS name resolve to 127.0.0.1 and then send
requests to a proxy on loopback from the visitor's browser, as if same-origin, and read
the answers (`/metrics`, `/ready`, completions on the operator's upstream key). Such
requests carry the page's name in `Host`, so a proxy reached on a loopback address
serves only loopback names by default: `localhost` (and `*.localhost`), `127.x.y.z`,
`::1`. On other interfaces any name is served unless `allowed_hosts` lists them.
"""

from __future__ import annotations

import ipaddress
import json
import logging
from collections.abc import Sequence
from typing import Any

from selfpara.server.logs import printable

log = logging.getLogger("selfpara.server")


def host_name(header: str) -> str:
    """The name in a `Host` header value, lower case, without the port or IPv6 brackets."""
    text = header.strip().lower()
    if text.startswith("["):
        return text[1:].split("]", 1)[0]
    if text.count(":") == 1:
        text = text.split(":", 1)[0]
    return text.rstrip(".")


def is_loopback(name: str) -> bool:
    """Whether `name` (a host name or address) always means this machine."""
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


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
    """Refuses (400 `invalid_host`) a request whose Host header `host_ok` refuses, before any route runs."""

    def __init__(self, app: Any, patterns: Sequence[str] | None) -> None:
        self.app = app
        self.patterns = None if patterns is None else list(patterns)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), None)
        server = scope.get("server")
        local = str(server[0]) if server else None
        if host_ok(header, local, self.patterns):
            await self.app(scope, receive, send)
            return
        log.warning(
            "request_id=%s status=400 refused Host %s (allowed_hosts)",
            (scope.get("state") or {}).get("request_id", "-"),
            printable(header, 200),
        )
        body = {
            "error": {
                "message": "this proxy does not serve this Host name (allowed_hosts; a loopback proxy serves "
                "localhost, 127.0.0.1 and ::1 by default)",
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_host",
            }
        }
        await send({"type": "http.response.start", "status": 400, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": json.dumps(body).encode()})
