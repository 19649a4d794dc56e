"""Reading an upstream's event stream with bounded work per byte (the probe of issue 34: 4 MiB of
blank lines in a `text/event-stream` reply cost 8.3 s of CPU and froze the proxy). Work is counted,
never timed: reads of aiohttp's StreamReader over a real HTTP stream from the fake upstream, and
turns the event loop gets while an already-buffered stream is read."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest

from selfpara.models.http_backend import HttpSessions
from selfpara.models.sse import data_lines
from selfpara.models.upstream_data import UpstreamResponseTooLarge
from tests.fake_upstream import FakeUpstream
from tests.helpers.proxy import fake, reset_fake, sse  # the module's fake upstream, reset before each test

MiB = 2**20
EVENT = (
    '{"id":"c","object":"chat.completion.chunk","created":1,"model":"fake",'
    '"choices":[{"index":0,"delta":{"content":"Paris"}}]}'
)


FIXTURES = (fake, reset_fake)


@pytest.fixture()
def counted_reads(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts every read of aiohttp's StreamReader (a line, a chunk, any data)."""
    counts: dict[str, int] = {}

    def counting(name: str) -> Any:
        original = getattr(aiohttp.StreamReader, name)

        async def read(self: Any, *args: Any, **kwargs: Any) -> Any:
            counts[name] = counts.get(name, 0) + 1
            return await original(self, *args, **kwargs)

        return read

    for name in ("readline", "readuntil", "readany", "readchunk", "read", "readexactly"):
        monkeypatch.setattr(aiohttp.StreamReader, name, counting(name))
    return counts


def stream_events(base: str, *, limit: int | None = 8 * MiB) -> list[dict[str, Any]]:
    """The events HttpSessions.stream reads from the fake upstream's scripted stream."""

    async def go() -> list[dict[str, Any]]:
        transport = HttpSessions(max_response_bytes=limit)
        try:
            events = await transport.stream("openai/fake", {"messages": []}, api_base=base, api_key=None, timeout_s=10)
            return [e async for e in events]
        finally:
            await transport.aclose()

    return asyncio.run(go())


def test_blank_lines_cost_reads_per_chunk_not_per_line(fake: FakeUpstream, counted_reads: dict[str, int]) -> None:
    blank = b"\n" * (64 * 1024)
    fake.raw([*[blank] * 32, *sse(EVENT, "[DONE]")], stream=True)  # 2 MiB of blank lines, then an event
    assert stream_events(fake.url) == [json.loads(EVENT)]
    # 2 MiB of "\n" read line by line is 2 million reads; by chunk, a few per 64 KiB sent
    assert sum(counted_reads.values()) < 1000, counted_reads


def test_comment_lines_and_other_fields_are_skipped_without_a_read_each(
    fake: FakeUpstream, counted_reads: dict[str, int]
) -> None:
    noise = b": keep-alive\n\nevent: ping\nid: 7\nretry: 10\n\n" * 20_000  # about 900 kB of lines that carry no data
    fake.raw([noise, *sse(EVENT, EVENT, "[DONE]")], stream=True)
    assert stream_events(fake.url) == [json.loads(EVENT)] * 2
    assert sum(counted_reads.values()) < 1000, counted_reads


def test_a_long_line_is_read_whole_up_to_the_cap(fake: FakeUpstream) -> None:
    long_event = EVENT.replace("Paris", "x" * 1_000_000)  # one 1 MB line (aiohttp's line reader stops at 512 KiB)
    fake.reset()
    fake.raw(
        [b"data: " + long_event.encode()[:300_000], long_event.encode()[300_000:] + b"\n\n", *sse("[DONE]")],
        stream=True,
    )
    assert stream_events(fake.url) == [json.loads(long_event)]
    fake.reset()
    fake.raw([b"data: " + b"x" * 600_000, b"x" * 600_000 + b"\n\n", *sse("[DONE]")], stream=True)
    with pytest.raises(UpstreamResponseTooLarge):
        stream_events(fake.url, limit=1_000_000)


class Buffered:
    """A stream whose chunks are all buffered already: `readany` returns at once without suspending."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = list(chunks)

    async def readany(self) -> bytes:
        return self.chunks.pop(0) if self.chunks else b""


async def test_the_reader_gives_the_event_loop_turns_while_it_reads() -> None:
    turns = 0
    stop = asyncio.Event()

    async def ticker() -> None:
        nonlocal turns
        while not stop.is_set():
            turns += 1
            await asyncio.sleep(0)

    task = asyncio.ensure_future(ticker())
    await asyncio.sleep(0)
    chunks = [b"\n" * 65536] * 64 + [b"data: {}\n\n" * 2000]
    payloads = [p async for p in data_lines(Buffered(chunks), model="m", limit=None)]
    stop.set()
    await task
    assert payloads == ["{}"] * 2000
    assert turns >= 64 + 2000 // 64  # a turn per chunk and per 64 data lines


@pytest.mark.parametrize(
    "chunks, expected",
    [
        ([b"data: a\n", b"\ndata:b\r\n\r\n"], ["a", "b"]),
        ([b"da", b"ta: split across chunks\n\n"], ["split across chunks"]),
        (
            [b"  data: leading space\n", b"xdata: not a field\n", b"data:last line without newline"],
            ["leading space", "last line without newline"],
        ),
        ([b"event: x\ndata: one\n\n: data: in a comment\n\n"], ["one"]),
        ([b"data: caf\xc3", b"\xa9 \xff\n\n"], ["caf\u00e9 \ufffd"]),
    ],
)
async def test_data_lines_are_found_wherever_the_chunks_split(chunks: list[bytes], expected: list[str]) -> None:
    assert [p async for p in data_lines(Buffered(chunks), model="m", limit=None)] == expected


async def test_caps_count_every_byte_and_every_line() -> None:
    with pytest.raises(UpstreamResponseTooLarge):
        [p async for p in data_lines(Buffered([b"\n" * 600, b"\n" * 600]), model="m", limit=1000)]
    with pytest.raises(UpstreamResponseTooLarge, match="line"):
        [
            p
            async for p in data_lines(
                Buffered([b"data: " + b"x" * 100, b"x" * 100]), model="m", limit=None, max_line=150
            )
        ]
    lines = [
        p async for p in data_lines(Buffered([b"data: " + b"x" * 100 + b"\n"]), model="m", limit=None, max_line=150)
    ]
    assert lines == ["x" * 100]
