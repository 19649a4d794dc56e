"""What an upstream may send for the proxy to use or relay it, and the errors for what it may not.

An upstream answering 200 is not yet a usable answer: its body may not be JSON, may hold
NaN or Infinity (Python's json reads them; JSON has none, so no response can carry them),
text with a lone surrogate (a JSON escape no UTF-8 response can carry), stream events of
the wrong shape, or more bytes than the proxy is willing to read. Each of these is an
UpstreamInvalidResponse (a 502 `upstream_invalid_response` at the proxy), never an
unexpected exception later. Also here: UpstreamRetryLater, a failure whose upstream said
when to retry, and reading its `Retry-After`. Used by both transports (`http_backend`,
`llm`'s litellm backend), so both treat the same data alike.
"""

from __future__ import annotations

import email.utils
import json
import math
import time
from collections.abc import AsyncGenerator, Callable
from typing import Any

from selfpara.errors import UpstreamError
from selfpara.result import Completion


class UpstreamInvalidResponse(UpstreamError):
    """The upstream answered, but with data that cannot be used or relayed as JSON: a malformed
    body, NaN or Infinity, invalid Unicode (a lone surrogate), events of the wrong shape.

    Attributes:
        code: the proxy's error code for it.
    """

    code = "upstream_invalid_response"

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message, status=502, retryable=retryable)


class UpstreamResponseTooLarge(UpstreamInvalidResponse):
    """The upstream's response (or stream) grew beyond the configured byte limit."""

    code = "upstream_response_too_large"


def combined_failure(failures: list[UpstreamError], message: str) -> UpstreamError:
    """One error for several failed calls (`failures`, at least one): when every one of them was the
    same unusable or oversized answer, that error's kind, so the proxy answers its own code
    (`upstream_invalid_response`, `upstream_response_too_large`); else an UpstreamError with the
    first failure's status."""
    first = failures[0]
    kind = type(first)
    if isinstance(first, UpstreamInvalidResponse) and all(type(f) is kind for f in failures):
        return kind(message)
    return UpstreamError(message, status=first.status, retryable=first.retryable)


class UpstreamRetryLater(UpstreamError):
    """A failure whose upstream said when to retry (its `Retry-After`, in whole seconds)."""

    def __init__(self, message: str, *, status: int, retryable: bool, retry_after_s: int) -> None:
        super().__init__(message, status=status, retryable=retryable)
        self.retry_after_s = retry_after_s


MAX_RETRY_AFTER_S = 3600
"""A longer Retry-After from the upstream is passed on as this (a client should not be told to wait a day)."""


def retry_after_seconds(value: str | None, clock: Callable[[], float] = time.time) -> int | None:
    """Whole seconds from a `Retry-After` value (delta seconds or an HTTP date, counted from
    `clock`'s seconds since the epoch), at most MAX_RETRY_AFTER_S; None when it is missing or unreadable."""
    if not value:
        return None
    text = value.strip()
    if text.isdigit():
        return min(int(text), MAX_RETRY_AFTER_S)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    return min(max(0, math.ceil(when.timestamp() - clock())), MAX_RETRY_AFTER_S)


class _NonFinite(ValueError):
    """NaN, Infinity or -Infinity in a JSON text (Python's json reads them; JSON has none)."""


def _refuse_constant(name: str) -> Any:
    raise _NonFinite(name)


def parse_json(model: str, raw: bytes | str) -> Any:
    """The upstream's JSON text parsed, refusing NaN and Infinity (they cannot be relayed as
    JSON); UpstreamInvalidResponse when it is not JSON (retryable: a cut-off body may come whole
    next time) or holds them (not retryable)."""
    try:
        return json.loads(raw, parse_constant=_refuse_constant)
    except _NonFinite as exc:
        raise UpstreamInvalidResponse(f"{model}: upstream sent {exc}, which JSON does not allow") from None
    except ValueError:  # JSONDecodeError, UnicodeDecodeError
        raise UpstreamInvalidResponse(f"{model}: upstream returned a malformed body", retryable=True) from None


def check_text(model: str, text: str) -> str:
    """`text`, or UpstreamInvalidResponse when it cannot be encoded as UTF-8 (a lone surrogate
    such as \\ud800, which JSON escapes allow but no response can carry)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise UpstreamInvalidResponse(f"{model}: upstream sent text with invalid Unicode (a lone surrogate)") from None
    return text


def check_logprobs(model: str, values: list[Any]) -> None:
    """UpstreamInvalidResponse when a log-probability is not a finite number."""
    for value in values:
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            raise UpstreamInvalidResponse(f"{model}: upstream sent a log-probability that is not a finite number")


def token_count(model: str, usage: dict[str, Any], name: str) -> int:
    """`usage[name]` as a count of tokens (0 when missing); UpstreamInvalidResponse when it is no whole number."""
    value = usage.get(name) or 0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value < 0:
        raise UpstreamInvalidResponse(f"{model}: upstream sent usage.{name} that is not a count of tokens")
    if isinstance(value, float) and not value.is_integer():
        raise UpstreamInvalidResponse(f"{model}: upstream sent usage.{name} that is not a count of tokens")
    return int(value)


def completion_from_json(data: Any, model: str = "upstream") -> Completion:
    """Read text, usage, mean log-probability and finish reason out of an OpenAI response body
    (UpstreamInvalidResponse for a body of the wrong shape or with unusable text)."""
    try:
        choice = data["choices"][0]
        text = choice["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise UpstreamInvalidResponse(f"{model}: upstream returned a response with no choices") from None
    if not isinstance(text, str):
        raise UpstreamInvalidResponse(f"{model}: upstream returned a choice with no text content")
    check_text(model, text)
    usage = data.get("usage") or {}
    logprob = None
    content = ((choice.get("logprobs") or {}).get("content")) or []
    if not isinstance(usage, dict) or not isinstance(content, list):
        raise UpstreamInvalidResponse(f"{model}: upstream returned usage or logprobs of the wrong shape")
    values = [t["logprob"] for t in content if isinstance(t, dict) and t.get("logprob") is not None]
    check_logprobs(model, values)
    if values:
        logprob = sum(values) / len(values)
    return Completion(
        text=text,
        prompt_tokens=token_count(model, usage, "prompt_tokens"),
        completion_tokens=token_count(model, usage, "completion_tokens"),
        logprob=logprob,
        finish_reason=choice.get("finish_reason") or "stop",
        token_logprobs=[t for t in content if isinstance(t, dict)] or None,
    )


def stream_event_text(model: str, event: Any) -> tuple[list[str], int, int]:
    """The first choice's text pieces and the prompt and completion token counts of one chat
    stream event; UpstreamInvalidResponse for an event of the wrong shape (not an object,
    choices that are not objects, counts that are not numbers, invalid Unicode)."""
    if not isinstance(event, dict):
        raise UpstreamInvalidResponse(f"{model}: upstream sent a stream event that is not a JSON object")
    choices = event.get("choices") or []
    if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
        raise UpstreamInvalidResponse(f"{model}: upstream sent a stream event whose choices are not objects")
    pieces: list[str] = []
    for choice in choices:
        if choice.get("index", 0) != 0:
            continue
        delta = choice.get("delta") or {}
        piece = delta.get("content") if isinstance(delta, dict) else 0  # 0: refused below
        if piece is not None and not isinstance(piece, str):
            raise UpstreamInvalidResponse(f"{model}: upstream sent a stream event whose content is not text")
        if piece:
            pieces.append(check_text(model, piece))
    usage = event.get("usage") or {}
    if not isinstance(usage, dict):
        raise UpstreamInvalidResponse(f"{model}: upstream sent a stream event whose usage is not an object")
    return pieces, token_count(model, usage, "prompt_tokens"), token_count(model, usage, "completion_tokens")


async def one_piece(text: str) -> AsyncGenerator[str, None]:
    """`text` as a stream of one piece (a reply that did not stream)."""
    yield text
