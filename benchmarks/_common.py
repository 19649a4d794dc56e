"""Helpers for the benchmark scripts: percentiles and writing results."""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path

RESULTS = Path(__file__).parent / "results"


def serve_env() -> dict[str, str]:
    """The environment a benchmark's `selfpara serve` process runs in: this checkout first on the path,
    a dummy upstream key, litellm's offline price list, no proxy key (the servers serve loopback only)."""
    import os

    root = str(Path(__file__).resolve().parents[1])
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]),
        "OPENAI_API_KEY": "sk-bench-dummy",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "SELFPARA_PROXY_KEY": "",
    }


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100) by nearest rank."""
    ordered = sorted(values)
    idx = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[idx]


def write(name: str, figures: dict) -> Path:
    """Write `figures` (plus machine info) to benchmarks/results/NAME.json and return the path."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    payload = {"benchmark": name, "when": time.strftime("%Y-%m-%dT%H:%M:%S"), "machine": platform.platform(), **figures}
    path.write_text(json.dumps(payload, indent=2))
    return path


def stop_all(procs: list, timeout_s: float = 15.0) -> None:
    """Terminate the processes a benchmark started, killing those still alive after `timeout_s`."""
    import subprocess

    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()


async def wait_up(url: str, proc, timeout_s: float = 120) -> None:
    """Poll `url` until it answers 200; RuntimeError if `proc` (the server) exits first or time runs out."""
    import asyncio

    import httpx

    deadline = time.monotonic() + timeout_s
    async with httpx.AsyncClient(timeout=2) as http:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"{url}: the process exited with {proc.returncode}")
            try:
                if (await http.get(url)).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.2)
    raise RuntimeError(f"{url} did not come up")


def free_port() -> int:
    """A free TCP port on loopback."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spawn_script(script: str, *args: str):  # type: ignore[no-untyped-def]
    """Run `script` (a benchmark's own file, in a serving mode) as a process of its own, this checkout first
    on the path; its output goes to this terminal."""
    import os
    import subprocess
    import sys

    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    return subprocess.Popen([sys.executable, script, *args], env=env, cwd=root, start_new_session=True)


async def read_http_request(reader) -> tuple[bytes, bytes]:  # type: ignore[no-untyped-def]
    """(head, body) of one HTTP/1.1 request from an asyncio StreamReader (the body by its Content-Length)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    length = next((int(x.split(b":", 1)[1]) for x in lines if x.lower().startswith(b"content-length:")), 0)
    return head, await reader.readexactly(length) if length else b""


async def serve_http(port: int, respond) -> None:  # type: ignore[no-untyped-def]
    """A bare HTTP/1.1 server on loopback for benchmark upstreams: `await respond(head, body, writer)` per
    request (one per connection), which writes the whole response; the connection is then closed."""
    import asyncio

    async def handle(reader, writer) -> None:  # type: ignore[no-untyped-def]
        try:
            head, body = await read_http_request(reader)
            await respond(head, body, writer)
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=128)
    async with server:
        await server.serve_forever()
