"""The proxy's memory when an upstream sends a huge reply over the litellm transport.

    python benchmarks/bench_litellm_memory.py [--mb 200] [--transports litellm,http]

An upstream (its own process, plain asyncio; it never holds the reply in memory) answers every chat
call with one JSON chat completion whose content is `--mb` MB of "x" (Content-Length set). A proxy
(`selfpara serve`'s app, its own process, call cache off, the default max_upstream_response_bytes of
4 MiB) passes requests through (`selfpara.enabled: false`): first one request, then four at once.
For each transport: the proxy's resident memory before, its peak (VmHWM) after one request and after
four, what it still holds after them (VmRSS), and what the clients got. Figures go to
benchmarks/results/litellm_memory.json.

Issue 34's probe: over litellm a 200 MB reply took the process to 1.1 GB, four at once to 2.7 GB
(1.45 GB still held after); litellm read the whole body before the byte cap was checked.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _common import free_port, serve_http, spawn_script, stop_all, wait_up, write  # noqa: E402

MB = 10**6


async def serve_upstream(port: int, size: int) -> None:
    head = b'{"id":"x","object":"chat.completion","created":1,"model":"fake","choices":[{"index":0,"message":'
    head += b'{"role":"assistant","content":"'
    tail = b'"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}'
    piece = b"x" * MB

    async def respond(request: bytes, _: bytes, writer: asyncio.StreamWriter) -> None:
        if request.startswith(b"GET"):
            body = b'{"object":"list","data":[{"id":"fake","object":"model"}]}'
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
            writer.write(f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
            await writer.drain()
            return
        total = len(head) + size + len(tail)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
        writer.write(f"Content-Length: {total}\r\nConnection: close\r\n\r\n".encode() + head)
        for _ in range(size // MB):
            writer.write(piece)
            await writer.drain()
        writer.write(tail)
        await writer.drain()

    await serve_http(port, respond)


def serve_proxy(port: int, upstream: str, transport: str) -> None:
    import uvicorn

    from selfpara.config import build_config
    from selfpara.server import ServerSettings, create_app

    cfg = build_config(model="openai/fake", api_base=upstream, cache="off", retries=0, timeout_s=300, api_key="sk-x")
    settings = ServerSettings(upstream=cfg, upstream_transport=transport, request_timeout_s=600)
    uvicorn.run(create_app(settings), host="127.0.0.1", port=port, log_level="warning", access_log=False)


def memory_mb(pid: int) -> dict[str, float]:
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return {k: int(status[k].split()[0]) / 1024 for k in ("VmRSS", "VmHWM")}


async def ask(base: str, n: int) -> list[str]:
    import httpx

    body = {"model": "openai/fake", "messages": [{"role": "user", "content": "hi"}], "selfpara": {"enabled": False}}
    async with httpx.AsyncClient(timeout=600) as http:
        responses = await asyncio.gather(*(http.post(f"{base}/v1/chat/completions", json=body) for _ in range(n)))
    out = []
    for r in responses:
        out.append(f"{r.status_code} {r.json()['error']['code']}" if r.status_code != 200 else "200")
    return out


async def measure(upstream: str, transport: str) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for n in (1, 4):
        port = free_port()
        proxy = spawn_script(__file__, "--serve-proxy", str(port), "--upstream", upstream, "--transport", transport)
        try:
            base = f"http://127.0.0.1:{port}"
            await wait_up(f"{base}/health", proxy)
            await ask(base, 0)
            before = memory_mb(proxy.pid)
            answers = await ask(base, n)
            after = memory_mb(proxy.pid)
            row[f"{n}_at_once"] = {
                "rss_before_mb": before["VmRSS"],
                "peak_mb": after["VmHWM"],
                "rss_after_mb": after["VmRSS"],
                "answers": sorted(set(answers)),
            }
            print(
                f"  {transport:7s} {n} at once: RSS {before['VmRSS']:.0f} MB before, peak {after['VmHWM']:.0f} MB, "
                f"{after['VmRSS']:.0f} MB after; clients got {sorted(set(answers))}"
            )
        finally:
            stop_all([proxy])
    return row


async def run(args: argparse.Namespace) -> dict[str, Any]:
    upstream_port = free_port()
    upstream_proc = spawn_script(__file__, "--serve-upstream", str(upstream_port), "--mb", str(args.mb))
    figures: dict[str, Any] = {"reply_mb": args.mb, "transports": {}}
    try:
        upstream = f"http://127.0.0.1:{upstream_port}/v1"
        await wait_up(f"{upstream}/models", upstream_proc)
        for transport in args.transports.split(","):
            figures["transports"][transport] = await measure(upstream, transport)
    finally:
        stop_all([upstream_proc])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--transports", default="litellm,http")
    parser.add_argument("--serve-upstream", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--serve-proxy", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--upstream", help=argparse.SUPPRESS)
    parser.add_argument("--transport", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_upstream:
        asyncio.run(serve_upstream(args.serve_upstream, args.mb * MB))
        return
    if args.serve_proxy:
        serve_proxy(args.serve_proxy, args.upstream, args.transport)
        return
    figures = asyncio.run(run(args))
    print(f"wrote {write('litellm_memory', figures)}")


if __name__ == "__main__":
    main()
