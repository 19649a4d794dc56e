"""What a model backend is: the `Backend` protocol ModelClient calls, the `RawBackend` that can also
pass OpenAI bodies through, and the `CallObserver` told of every attempt.

A leaf of the model door: the transports (`http_backend`, `litellm_backend`, `engines`,
`routing`) satisfy these protocols without importing `selfpara.models.client`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

from selfpara.errors import UpstreamError
from selfpara.result import Completion, Message


class Backend(Protocol):
    """Makes one model call. Raise UpstreamError (retryable or not) on failure."""

    async def complete(self, model: str, messages: list[Message], params: dict[str, Any]) -> Completion: ...


CallObserver = Callable[[str, UpstreamError | None], None]
"""Told of every upstream attempt: its kind (paraphrase, answer, judge, passthrough, or
call when the caller named none) and its error, None when it succeeded (the proxy's /metrics)."""


class RawBackend(Backend, Protocol):
    """A backend that can also pass an OpenAI request body through unchanged (the proxy's
    passthrough). `endpoint` is the API path after the base URL: "chat/completions",
    "completions" or "responses"; `raw_endpoints` names the ones it serves."""

    raw_endpoints: frozenset[str]

    async def raw(self, model: str, endpoint: str, body: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]: ...

    async def raw_stream(
        self, model: str, endpoint: str, body: dict[str, Any], params: dict[str, Any]
    ) -> AsyncIterator[dict[str, Any]]:
        """Open the stream (errors raise here) and return an iterator of its event objects."""
        ...
