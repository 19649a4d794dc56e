"""Reading an upstream's event stream (`text/event-stream`) with bounded work per byte.

aiohttp's line iterator (`async for line in response.content`) costs microseconds of CPU per
line and does not suspend while its buffer holds data: an upstream that sent 4 MiB of blank
lines kept the proxy's one event loop busy for 8 s, and every other request waited. Here the
stream is read a chunk at a time as it arrives, and only `data:` lines are looked at: they are
found with `bytes.find` (in C), so blank lines, comments and other fields cost nothing per
line. An unfinished line is kept as parts and joined once, so a long line is not searched again
at every chunk; no line may pass `max_line` bytes, nor the stream `limit`. The reader gives the
event loop a turn after every chunk and every YIELD_EVERY data lines, so other requests are
served while one stream is read.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Protocol

from selfpara.models.upstream_data import UpstreamResponseTooLarge

MAX_LINE_BYTES = 4 * 2**20
"""The longest line read when the stream has no byte limit of its own."""

YIELD_EVERY = 64
"""Data lines handed on between two turns of the event loop."""

_DATA = b"data:"


class ChunkSource(Protocol):
    """What the reader reads: aiohttp's StreamReader (`response.content`) has it."""

    async def readany(self) -> bytes:
        """The next bytes that arrived (b"" at the end of the stream)."""
        ...


async def data_lines(
    content: ChunkSource, *, model: str, limit: int | None, max_line: int | None = None
) -> AsyncIterator[str]:
    """The payload of each `data:` line, in order: the text after `data:`, whitespace stripped,
    decoded as UTF-8 (undecodable bytes replaced). A line may have whitespace before `data:`.

    Args:
        content: the stream.
        model: names the upstream in errors.
        limit: most bytes of the whole stream; None: no limit.
        max_line: most bytes of one line; None: `limit`, else MAX_LINE_BYTES.

    Raises UpstreamResponseTooLarge past either bound.
    """
    line_cap = max_line if max_line is not None else limit if limit is not None else MAX_LINE_BYTES
    parts: list[bytes] = []  # the unfinished last line
    pending = 0  # its bytes
    size = 0
    handed = 0
    while True:
        chunk = await content.readany()
        if not chunk:
            break
        size += len(chunk)
        over = limit is not None and size > limit
        if over:  # hand on the lines that fit, then stop
            assert limit is not None
            chunk = chunk[: len(chunk) - (size - limit)]
        end = chunk.rfind(b"\n") + 1
        if not end:  # no line ends here: keep the parts, join them once the line is complete
            parts.append(chunk)
            pending += len(chunk)
            if over:
                raise _too_large(model, limit)
            if pending > line_cap:
                raise _line_too_long(model, line_cap)
            await asyncio.sleep(0)
            continue
        if parts:
            if pending + chunk.find(b"\n") > line_cap:
                raise _line_too_long(model, line_cap)
            parts.append(chunk[:end])
            region = b"".join(parts)
        else:
            region = chunk if end == len(chunk) else chunk[:end]
        rest = chunk[end:]
        parts, pending = ([rest], len(rest)) if rest else ([], 0)
        if pending > line_cap:
            raise _line_too_long(model, line_cap)
        for payload in _payloads(region, 0):
            yield payload
            handed += 1
            if handed % YIELD_EVERY == 0:
                await asyncio.sleep(0)
        if over:
            raise _too_large(model, limit)
        await asyncio.sleep(0)
    if parts:  # the last line, without its newline
        for payload in _payloads(b"".join(parts) + b"\n", 0):
            yield payload


def _payloads(region: bytes, start: int) -> list[str]:
    """The data payloads of the complete lines of `region` (it ends with a newline), from `start`.
    Each byte is scanned a bounded number of times: find jumps to the next `data:`, rfind looks back
    only as far as the line before, and the search goes on after the line that held it."""
    out: list[str] = []
    pos = region.find(_DATA, start)
    while pos >= 0:
        line_start = region.rfind(b"\n", start, pos) + 1 or start
        eol = region.find(b"\n", pos)
        if not region[line_start:pos].strip():  # `data:` opens the line (after whitespace at most)
            out.append(region[pos + len(_DATA) : eol].decode("utf-8", "replace").strip())
        start = eol + 1
        pos = region.find(_DATA, start)
    return out


def _too_large(model: str, limit: int | None) -> UpstreamResponseTooLarge:
    return UpstreamResponseTooLarge(
        f"{model}: the upstream's stream exceeds {limit} bytes (max_upstream_response_bytes)"
    )


def _line_too_long(model: str, cap: int) -> UpstreamResponseTooLarge:
    return UpstreamResponseTooLarge(f"{model}: the upstream's stream has a line longer than {cap} bytes")
