"""Fake backends that make concurrency visible without a clock."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from selfpara.result import Completion, Message
from selfpara.testing import FakeBackend, Responder


class GatedBackend(FakeBackend):
    """A FakeBackend whose calls wait until `width` of them are in flight at once, then all answer.

    Code that makes its calls together passes at once; code that makes them one after another
    leaves each call waiting `patience_s` (a bound on the hang, not a measure of anything) and
    `peak` says how many were in flight together. The gate closes again once every call has
    answered, so each round of calls is seen on its own.

    Args:
        responder: as for FakeBackend.
        width: calls in flight at once that open the gate.
        patience_s: how long a call waits for the others before it answers anyway.
    """

    def __init__(self, responder: Responder | None = None, *, width: int, patience_s: float = 2.0) -> None:
        super().__init__(responder)
        self.width = width
        self.patience_s = patience_s
        self.in_flight = 0
        self.peak = 0
        self._full: asyncio.Event | None = None

    async def complete(self, model: str, messages: list[Message], params: dict[str, Any]) -> Completion:
        if self._full is None:  # made here, on the running loop (successive asyncio.run loops each get theirs)
            self._full = asyncio.Event()
        full = self._full
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        if self.in_flight >= self.width:
            full.set()
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(full.wait(), self.patience_s)
            return await super().complete(model, messages, params)
        finally:
            self.in_flight -= 1
            if not self.in_flight:
                self._full = None
