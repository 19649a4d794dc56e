"""Waiting for a condition without guessing how long it takes.

Tests synchronise on events wherever the code offers one. These two helpers are the last resort
for a condition with no event to wait on: `settle` for one that coroutines on the test's own
event loop make true (it yields to them, never sleeps), `wait_until` for one that another
thread or process makes true (a server's slot freed, a process listening). Neither asserts how
long anything took: the bound only turns a hang into a failure that names what never happened.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Callable

import httpx

POLL_S = 0.01
"""How often `wait_until` looks again: short, so a test waits little past the moment the condition holds."""


async def settle(condition: Callable[[], bool], what: str, *, turns: int = 10_000) -> None:
    """Yield to the event loop until `condition()` holds; AssertionError naming `what` after `turns` turns.

    For work on this loop only (no I/O, no thread): it makes progress at every turn, so a
    condition it never reaches is a bug, not a slow machine.
    """
    for _ in range(turns):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError(f"never happened: {what}")


def wait_until(condition: Callable[[], bool], what: str, *, timeout_s: float = 30.0) -> None:
    """Look at `condition()` every POLL_S until it holds; AssertionError naming `what` after `timeout_s`.

    For a condition another thread or process makes true and that offers no event.
    """
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout_s:g}s: {what}")
        time.sleep(POLL_S)


def wait_for_http(url: str, process: subprocess.Popen[bytes], *, timeout_s: float = 120.0, log: str = "") -> None:
    """Return once `url` answers 200; AssertionError, with `log` (what the process wrote), if the
    process exits first or `timeout_s` passes (a bound on a hang, not a measure)."""

    def up() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"the process serving {url} exited with {process.returncode}: {log}")
        try:
            return httpx.get(url, timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    wait_until(up, f"{url} answered 200 ({log})" if log else f"{url} answered 200", timeout_s=timeout_s)
