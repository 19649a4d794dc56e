"""One generation request to an embedded engine, parsed from OpenAI-style parameters."""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from selfpara.errors import UpstreamError
from selfpara.result import Completion, Message
from selfpara.util.messages import content_text


@dataclass
class GenRequest:
    """One call waiting for an engine's worker thread.

    `future` is resolved by the worker; `abandoned` is set when the caller stopped waiting
    (cancelled or timed out), so a generation in progress can end early.
    """

    messages: list[Message]
    max_tokens: int = 256
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = None
    future: concurrent.futures.Future[Completion] = field(default_factory=concurrent.futures.Future, repr=False)
    started_s: float | None = field(default=None, repr=False)
    """The engine's `clock` when the worker started generating it (set by the engine)."""
    abandoned: threading.Event = field(default_factory=threading.Event, repr=False)


def make_request(messages: Sequence[Message], params: dict[str, Any]) -> GenRequest:
    """A GenRequest from OpenAI-style params; unknown params (api_base, timeout, ...) are ignored.

    Raises UpstreamError 400 for values no engine can honour, InputError for content
    that is not text (see `selfpara.util.messages.content_text`).
    """
    try:
        max_tokens = int(_given(params, "max_tokens", 256))
        temperature = float(_given(params, "temperature", 0.0))
        top_p = float(_given(params, "top_p", 1.0))
        seed = None if params.get("seed") is None else int(params["seed"])
    except (TypeError, ValueError) as exc:
        raise UpstreamError(f"bad generation parameter: {exc}", status=400) from None
    if max_tokens < 1 or temperature < 0 or not 0 < top_p <= 1:
        raise UpstreamError("need max_tokens >= 1, temperature >= 0, 0 < top_p <= 1", status=400)
    chat: list[Message] = [
        {"role": str(m.get("role", "user")), "content": content_text(m.get("content"))} for m in messages
    ]
    return GenRequest(chat, max_tokens=max_tokens, temperature=temperature, top_p=top_p, seed=seed)


def _given(params: dict[str, Any], name: str, default: object) -> Any:
    """params[name], or `default` where it is missing or None (0 is a value)."""
    value = params.get(name)
    return default if value is None else value
