"""Which upstream a request may name (`selfpara.api_base`): only one on the operator's list
(`client_api_bases`), and never, unless listed by its own name, an address the proxy must not be
turned against: loopback (its Redis, its admin ports), link-local (a cloud's metadata service at
169.254.169.254), the unspecified address, or the proxy itself (one request pointed at the proxy
with its key made 144 upstream calls).

A list entry is `HOST[:PORT]`: a host name or IP address (`[::1]` for IPv6), or a wildcard (`*`
any host, `*.example.com` its subdomains); without a port, any port. An entry that names its host
(no wildcard) is trusted as written, loopback included. A host matched only by a wildcard is
resolved and refused when any of its addresses is one of the above. (A name that resolves
differently the next moment can still slip past the check: list names, not wildcards, where that
matters.)
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from selfpara.models.http_backend import Transport, resolve_transport

_HOST = re.compile(r"^(\*|\*\.[a-z0-9-]+(\.[a-z0-9-]+)*|[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?|\[[0-9a-f:.]+\])$")
_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class ClientBase:
    """One entry of the operator's list."""

    host: str  # lower case, IPv6 without brackets; "*" or "*.suffix" for a wildcard
    port: int | None  # None: any port
    wildcard: bool

    def match(self, url: str) -> tuple[str, int] | None:
        """(host, port) of `url` when this entry allows it, else None (also for a URL that is not http(s))."""
        where = _host_port(url)
        if where is None:
            return None
        host, port = where
        if self.port is not None and port != self.port:
            return None
        if self.host == "*" or host == self.host:
            return where
        if self.wildcard and host.endswith(self.host[1:]):
            return where
        return None


def parse_client_bases(entries: list[str]) -> list[ClientBase]:
    """The list's entries, checked (ValueError names the first malformed one)."""
    out = []
    for entry in entries:
        text = entry.strip().lower()
        host, port = text, None
        match = re.match(r"^(.*?):(\d+)$", text)
        if match and not text.endswith("]"):
            host, port = match.group(1), int(match.group(2))
            if not 0 < port < 65536:
                raise ValueError(f"client_api_bases: {entry!r}: the port must be 1 to 65535")
        if not _HOST.match(host) or (host.count(":") and not host.startswith("[")):
            raise ValueError(f"client_api_bases: {entry!r} is not HOST[:PORT] (a name, an address or a wildcard)")
        out.append(ClientBase(host=host.strip("[]"), port=port, wildcard=host.startswith("*")))
    return out


async def check_client_api_base(url: str, bases: list[ClientBase], own: tuple[str, int] | None) -> None:
    """Refuse `url` (ValueError with the reason) unless the list allows it.

    Args:
        url: the request's `selfpara.api_base`.
        bases: the operator's list.
        own: the proxy's own address as the request reached it (host, port); None: unknown.
    """
    if _host_port(url) is None:
        raise ValueError("selfpara.api_base must be an http:// or https:// URL with a host and no credentials")
    allowed = [b for b in bases if b.match(url)]
    if not allowed:
        raise ValueError("selfpara.api_base is not on this proxy's list of upstreams a request may name")
    if any(not b.wildcard for b in allowed):
        return  # the operator named this host
    host, port = _host_port(url) or ("", 0)
    for address in await _addresses(host, port):
        why = _forbidden(address, port, own)
        if why is not None:
            raise ValueError(f"selfpara.api_base reaches {why}, which a request may not name unless it is listed")


def follows_no_redirect(transport: Transport, model: str, api_base: str) -> bool:
    """Whether calls to `model` at a request's own `api_base` go through a client that follows no
    redirect: the http transport, or litellm for `openai/...` models (`selfpara.models.litellm_clients`).
    litellm's own clients for other providers follow redirects, and a hop could leave the list."""
    resolved = resolve_transport(transport, model, api_base)
    return resolved == "http" or (resolved == "litellm" and model.startswith("openai/"))


def _host_port(url: str) -> tuple[str, int] | None:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname or parts.username or parts.password:
        return None
    return parts.hostname.lower(), port if port is not None else _DEFAULT_PORTS[parts.scheme]


async def _addresses(host: str, port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        raise ValueError("selfpara.api_base names a host that does not resolve") from None
    return [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]


def _forbidden(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address, port: int, own: tuple[str, int] | None
) -> str | None:
    """What `address` is when a request may not reach it, else None."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if own is not None and port == own[1]:
        try:
            mine = ipaddress.ip_address(own[0])
        except ValueError:
            mine = None
        if address == mine or address.is_loopback or address.is_unspecified:
            return "this proxy"
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_unspecified or address.is_multicast:
        return "an address that is no host"
    return None
