"""Response classes that keep the proxy's secrets out of every byte sent, and the
streaming response that releases its slot however the stream ends."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from fastapi.responses import JSONResponse, StreamingResponse

from selfpara.server.errors import unrelayable
from selfpara.util.redaction import maskable

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def scrub_text(text: str, secrets: Sequence[str | None]) -> str:
    """`text` with every configured secret replaced by *** (those long enough to mask: `maskable`)."""
    for secret in maskable(secrets):
        text = text.replace(secret, "***")
    return text


def scrub(data: dict[str, Any], secrets: Sequence[str | None]) -> dict[str, Any]:
    """`data` with every configured secret replaced by *** wherever it appears."""
    real = maskable(secrets)
    if not real:
        return data
    text = json.dumps(data)
    if not any(s in text for s in real):
        return data
    clean: dict[str, Any] = json.loads(scrub_text(text, real))
    return clean


def dump_json(data: Any, secrets: Sequence[str | None] = ()) -> bytes:
    """`data` as compact UTF-8 JSON with `secrets` scrubbed. An upstream's answer that JSON
    cannot carry (NaN, Infinity, a lone surrogate) is the proxy error upstream_invalid_response
    (a 502), never an internal error: make the bytes before the request is logged."""
    try:
        text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return scrub_text(text, secrets).encode("utf-8")
    except (ValueError, UnicodeEncodeError):  # ValueError: "Out of range float values are not JSON compliant"
        raise unrelayable() from None


class ScrubbedJSON(JSONResponse):
    """A JSON response scrubbed of the proxy's secrets (an upstream may echo them back).
    Built before the request's log line: its content is encoded at once (see `dump_json`)."""

    def __init__(self, content: Any, *, secrets: Sequence[str | None], **kwargs: Any) -> None:
        self._secrets = [s for s in secrets if s]
        super().__init__(content, **kwargs)

    def render(self, content: Any) -> bytes:
        return dump_json(content, self._secrets)


class GuardedStream(StreamingResponse):
    """An event stream that runs `on_close` however it ends (done, error, disconnect), told whether
    the server's shutdown cut it (its task cancelled: a client's disconnect is not a cancellation here,
    Starlette ends the stream on its own)."""

    def __init__(self, content: AsyncIterator[bytes], *, on_close: Callable[[bool], None], **kwargs: Any) -> None:
        super().__init__(content, media_type="text/event-stream", **kwargs)
        self._on_close = on_close

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        cut = False
        try:
            await super().__call__(scope, receive, send)
        except asyncio.CancelledError:
            cut = True
            raise
        finally:
            self._on_close(cut)


async def iterate(items: list[bytes]) -> AsyncIterator[bytes]:
    for item in items:
        yield item
