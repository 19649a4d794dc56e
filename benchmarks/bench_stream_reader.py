"""The proxy's CPU per MiB of a hostile upstream event stream, and /health while such streams run:
the stream reader of `selfpara.models.sse` against the one it replaced, side by side in one run.

    python benchmarks/bench_stream_reader.py [--mib 2] [--repeats 3] [--health-s 10]

An upstream (its own process, plain asyncio, as cheap as it gets) answers every chat call with a
`text/event-stream` of one shape, `--mib` MiB long, then `data: [DONE]`:

- blank: blank lines only (the probe of issue 34: 4 MiB of `\\n` cost 8.3 s of CPU);
- long_line: one data line of the whole length (an event the old reader could not read past 512 KiB);
- long_lines_400k: data lines of 400 KiB each (long, but within what the old reader could read);
- tiny_events: `:\\n\\n` comment events, many and empty (SSE keep-alives);
- tiny_data_events: `data: {}\\n\\n`, the smallest data events a proxy must parse and relay.

Two proxies (`selfpara serve`'s app in their own processes, http transport, no call cache) pass the
stream through (`selfpara.enabled: false`, `stream: true`); one with the reader as it is, one with the
reader before issue 34 (aiohttp's `async for line in response.content`), kept below as BASELINE_*. For
each shape and reader: the proxy process's CPU seconds (utime + stime from /proc) per MiB the upstream
offered, the median of `--repeats` requests, and how the stream ended for the client. Then three such
streams at once, back to back for `--health-s` seconds (one of each of the first three shapes), while
a client asks `GET /health` every 50 ms: its p50 / p99 latency.

Targets (issue 34): the new reader's CPU per MiB at most 5% of the old one's for blank lines, a long
line and many tiny events; /health p99 under 0.2 s while three streams run. Figures go to
benchmarks/results/stream_reader.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _common import free_port, percentile, serve_http, spawn_script, stop_all, wait_up, write  # noqa: E402

MiB = 2**20
SHAPES = ("blank", "long_line", "long_lines_400k", "tiny_events", "tiny_data_events")
TARGET_SHAPES = ("blank", "long_line", "tiny_events")
PIECE = 64 * 1024


# ---- BASELINE: the stream reader before issue 34 (selfpara/models/http_backend.py, `chunks`), to measure against ----


async def baseline_data_lines(
    content: Any, *, model: str, limit: int | None, max_line: int | None = None
) -> AsyncIterator[str]:
    """BASELINE: the old reader's loop, line by line through aiohttp's StreamReader; the payload of each
    `data:` line, as `selfpara.models.sse.data_lines` yields it, so that the rest of `HttpSessions.stream` is
    the same code in both proxies."""
    from selfpara.models.upstream_data import UpstreamResponseTooLarge

    size = 0
    async for line in content:
        size += len(line)
        if limit is not None and size > limit:
            raise UpstreamResponseTooLarge(f"{model}: the upstream's response exceeds {limit} bytes")
        text = line.decode("utf-8", "replace").strip()
        if not text.startswith("data:"):
            continue
        yield text[5:].strip()


# ---- the hostile upstream ---------------------------------------------------------------------------------


def head_event(size: int) -> bytes:
    """One data event line of `size` bytes (its content all "x")."""
    head = b'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"'
    return head + b"x" * (size - len(head) - 8) + b'"}}]}\n\n'


def shape_bytes(shape: str, size: int) -> bytes:
    """`size` bytes (about) of the stream shape, then the end of the stream."""
    if shape == "blank":
        body = b"\n" * size
    elif shape == "long_line":
        body = head_event(size)
    elif shape == "long_lines_400k":
        line = head_event(400 * 1024)
        body = line * max(1, size // len(line))
    elif shape == "tiny_events":
        body = b":\n\n" * (size // 3)
    else:
        body = b"data: {}\n\n" * (size // 10)
    return body + b"data: [DONE]\n\n"


async def serve_upstream(port: int, size: int) -> None:
    """POST .../chat/completions -> a stream of the shape named by the request's last message."""
    streams = {shape: shape_bytes(shape, size) for shape in SHAPES}

    async def respond(_: bytes, raw: bytes, writer: asyncio.StreamWriter) -> None:
        body = json.loads(raw) if raw else {}
        shape = str(body.get("messages", [{}])[-1].get("content", "blank"))
        data = streams.get(shape, streams["blank"])
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
        for i in range(0, len(data), PIECE):
            writer.write(data[i : i + PIECE])
            await writer.drain()

    await serve_http(port, respond)


# ---- the proxies -------------------------------------------------------------------------------------------


def serve_proxy(port: int, upstream: str, reader: str) -> None:
    import uvicorn

    import selfpara.models.http_backend
    from selfpara.config import build_config
    from selfpara.server import ServerSettings, create_app

    if reader == "old":
        selfpara.models.http_backend.data_lines = baseline_data_lines  # type: ignore[assignment]
    upstream_cfg = build_config(model="openai/fake", api_base=upstream, cache="off", retries=0, timeout_s=120)
    settings = ServerSettings(upstream=upstream_cfg, max_concurrent_requests=64, request_timeout_s=600)
    uvicorn.run(create_app(settings), host="127.0.0.1", port=port, log_level="warning", access_log=False)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def one_stream(http: Any, base: str, shape: str) -> str:
    """Pass one stream of `shape` through the proxy; how it ended for the client."""
    body = {"model": "openai/fake", "messages": [{"role": "user", "content": shape}], "stream": True}
    body["selfpara"] = {"enabled": False}
    last, error = "", None
    async with http.stream("POST", f"{base}/v1/chat/completions", json=body) as response:
        if response.status_code != 200:
            return f"HTTP {response.status_code} " + json.loads(await response.aread())["error"]["code"]
        async for line in response.aiter_lines():
            if line.startswith('data: {"error"'):
                error = json.loads(line[6:])["error"]["code"]
            if line.startswith("data: "):
                last = line[6:]
    if error is not None:
        return f"error event {error}"
    return "[DONE]" if last == "[DONE]" else "cut"


async def cpu_per_mib(base: str, pid: int, shape: str, size: int, repeats: int) -> dict[str, Any]:
    import httpx

    spent, ends = [], []
    async with httpx.AsyncClient(timeout=600) as http:
        for _ in range(repeats):
            before = cpu_seconds(pid)
            ends.append(await one_stream(http, base, shape))
            spent.append(cpu_seconds(pid) - before)
    # /proc counts CPU in ticks (10 ms): the sum over the repeats resolves cheap streams better than a median
    return {"cpu_s": spent, "cpu_s_per_mib": sum(spent) / (repeats * size / MiB), "ended": sorted(set(ends))}


async def health_under_streams(base: str, seconds: float) -> dict[str, Any]:
    """/health latency every 50 ms while three streams (blank, long line, tiny events) run back to back."""
    import httpx

    stop = time.monotonic() + seconds
    streams_done = 0

    async def streamer(shape: str) -> None:
        nonlocal streams_done
        async with httpx.AsyncClient(timeout=600) as http:
            while time.monotonic() < stop:
                await one_stream(http, base, shape)
                streams_done += 1

    latencies: list[float] = []

    async def prober() -> None:
        async with httpx.AsyncClient(timeout=600) as http:
            await asyncio.sleep(0.5)  # the streams are running
            while time.monotonic() < stop:
                started = time.perf_counter()
                await http.get(f"{base}/health")
                latencies.append(time.perf_counter() - started)
                await asyncio.sleep(0.05)

    await asyncio.gather(*(streamer(s) for s in TARGET_SHAPES), prober())
    return {
        "probes": len(latencies),
        "p50_s": percentile(latencies, 50),
        "p99_s": percentile(latencies, 99),
        "max_s": max(latencies),
        "streams_done": streams_done,
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    size = int(args.mib * MiB)
    upstream_port = free_port()
    procs = [spawn_script(__file__, "--serve-upstream", str(upstream_port), "--mib", str(args.mib))]
    figures: dict[str, Any] = {"stream_mib": args.mib, "repeats": args.repeats, "readers": {}}
    try:
        await asyncio.sleep(1.0)
        for reader in ("old", "new"):
            port = free_port()
            proxy = spawn_script(
                __file__,
                "--serve-proxy",
                str(port),
                "--upstream",
                f"http://127.0.0.1:{upstream_port}/v1",
                "--reader",
                reader,
            )
            procs.append(proxy)
            base = f"http://127.0.0.1:{port}"
            await wait_up(f"{base}/health", proxy)
            await cpu_per_mib(base, proxy.pid, "tiny_events", size, 1)  # warm-up: first connections, lazy imports
            row: dict[str, Any] = {}
            for shape in SHAPES:
                row[shape] = await cpu_per_mib(base, proxy.pid, shape, size, args.repeats)
                print(
                    f"  {reader} {shape:17s} {row[shape]['cpu_s_per_mib']:.4f} CPU s/MiB, ended {row[shape]['ended']}"
                )
            row["health_under_three_streams"] = await health_under_streams(base, args.health_s)
            h = row["health_under_three_streams"]
            print(
                f"  {reader} /health p50 {h['p50_s'] * 1000:.1f} ms, p99 {h['p99_s'] * 1000:.1f} ms "
                f"({h['probes']} probes)"
            )
            figures["readers"][reader] = row
            stop_all([proxy])
            procs.remove(proxy)
    finally:
        stop_all(procs)
    old, new = figures["readers"]["old"], figures["readers"]["new"]
    figures["new_over_old"] = {s: new[s]["cpu_s_per_mib"] / max(old[s]["cpu_s_per_mib"], 1e-9) for s in SHAPES}
    figures["targets"] = {
        "cpu_per_mib_at_most_5_percent": {s: figures["new_over_old"][s] <= 0.05 for s in TARGET_SHAPES},
        "health_p99_under_0_2_s": new["health_under_three_streams"]["p99_s"] < 0.2,
    }
    figures["loadavg_1m_before"] = args.loadavg
    figures["cpus"] = os.cpu_count()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=2.0, help="MiB per stream (under the 4 MiB cap)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--health-s", type=float, default=10.0)
    parser.add_argument("--serve-upstream", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--serve-proxy", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--upstream", help=argparse.SUPPRESS)
    parser.add_argument("--reader", choices=["old", "new"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_upstream:
        asyncio.run(serve_upstream(args.serve_upstream, int(args.mib * MiB)))
        return
    if args.serve_proxy:
        serve_proxy(args.serve_proxy, args.upstream, args.reader)
        return
    args.loadavg = os.getloadavg()[0]
    figures = asyncio.run(run(args))
    print("new CPU per MiB as a share of the old reader's:")
    for shape, ratio in figures["new_over_old"].items():
        print(f"  {shape:17s} {100 * ratio:7.2f}%")
    print(f"targets: {json.dumps(figures['targets'])}")
    print(f"wrote {write('stream_reader', figures)}")


if __name__ == "__main__":
    main()
