"""Host names that mean this machine."""

from __future__ import annotations

import ipaddress


def is_loopback(name: str) -> bool:
    """Whether `name` (a host name or address) always means this machine."""
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False
