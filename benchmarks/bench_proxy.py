"""Benchmark of the proxy (`selfpara serve`) against a fake upstream, and against optillm.

    python benchmarks/bench_proxy.py                 # both parts, writes benchmarks/results/proxy.json
    python benchmarks/bench_proxy.py --skip-optillm  # part (a) only
    python benchmarks/bench_proxy.py --skip-optillm --transports http --total 1200 --stream   # the load check

(a) Load: C concurrent clients (default 200) against `selfpara serve` whose upstream is
    tests/fake_upstream.py answering every call in 50 ms (loopback only). Settings: k=3,
    paraphrase check off, exact-match equivalence, so a request costs 5 upstream calls
    (1 paraphrase + 4 answers) on a critical path of 2 x 50 ms (the paraphrase round,
    then the answer round; the original is answered during the paraphrase round).
    Reported: errors, requests/s, p50/p99 latency, and the proxy's overhead = latency
    minus that 100 ms critical path, unloaded and under load; with --stream the load again
    with streamed requests (each must end with [DONE] and no error event); the proxy's
    resident memory before the load phases and after them.

(b) optillm: its proxy with approach `self_consistency` (5 samples, one after the other:
    5 upstream calls, as many as selfpara's here) behind the same fake upstream, measured
    in the same run with the same load generator: latency per request (one client at a
    time) and throughput under the same concurrency. optillm is installed in its own venv
    (default /tmp/optillm-venv; see --optillm-python) so it cannot disturb our packages.

Every process (fake upstream, proxy, load generator) runs on this machine, so the
figures include their competition for the CPUs; `cpus` in the output says how many.
The load generator is a minimal asyncio HTTP/1.1 keep-alive client, so that it takes
as little CPU as possible from the servers it measures. Bounded: every phase sends a
fixed number of requests.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "proxy.json"
FAKE = ROOT / "tests" / "fake_upstream.py"
QUESTION = "What is the capital of France?"
UPSTREAM_DELAY_S = 0.05
CRITICAL_PATH_S = 2 * UPSTREAM_DELAY_S


# ---- processes ------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(cmd: list[str], env: dict[str, str], log_name: str) -> subprocess.Popen[bytes]:
    log_dir = ROOT / "benchmarks" / "results"
    log_dir.mkdir(parents=True, exist_ok=True)
    log = open(log_dir / f"{log_name}.log.tmp", "wb")  # noqa: SIM115 - closed with the process
    return subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True)


def stop(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


async def wait_ready(port: int, path: str, proc: subprocess.Popen[bytes], timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before it was ready: {proc.args}")
        try:
            status, _ = await request_once(port, "GET", path, None)
            if status == 200:
                return
        except OSError:
            pass
        await asyncio.sleep(0.25)
    raise RuntimeError(f"not ready within {timeout_s}s: {proc.args}")


# ---- a lean HTTP/1.1 client -------------------------------------------------------------------


class Conn:
    """One keep-alive HTTP/1.1 connection to 127.0.0.1:port."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, method: str, path: str, body: bytes | None) -> tuple[int, bytes]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        assert self.reader is not None
        head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
        if body is not None:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        self.writer.write((head + "\r\n").encode() + (body or b""))
        await self.writer.drain()
        status_line = await self.reader.readline()
        if not status_line:
            raise ConnectionError("connection closed")
        status = int(status_line.split()[1])
        length, chunked, close = None, False, False
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.decode("latin-1").partition(":")
            name, value = name.strip().lower(), value.strip().lower()
            if name == "content-length":
                length = int(value)
            elif name == "transfer-encoding" and "chunked" in value:
                chunked = True
            elif name == "connection" and value == "close":
                close = True
        if chunked:
            data = b""
            while True:
                size = int((await self.reader.readline()).strip(), 16)
                if size == 0:
                    await self.reader.readline()
                    break
                data += await self.reader.readexactly(size)
                await self.reader.readline()
        elif length is not None:
            data = await self.reader.readexactly(length)
        else:
            data = await self.reader.read()
            close = True
        if close:
            self.close()
        return status, data

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


async def request_once(port: int, method: str, path: str, body: bytes | None) -> tuple[int, bytes]:
    conn = Conn(port)
    try:
        return await asyncio.wait_for(conn.request(method, path, body), 10)
    finally:
        conn.close()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


async def run_load(port: int, body: bytes, *, concurrency: int, total: int, timeout_s: float = 120) -> dict[str, Any]:
    """`concurrency` clients, each on its own keep-alive connection, send `total` requests in all."""
    latencies: list[float] = []
    errors: Counter[str] = Counter()
    remaining = total

    async def client() -> None:
        nonlocal remaining
        conn = Conn(port)
        try:
            while remaining > 0:
                remaining -= 1
                started = time.perf_counter()
                try:
                    status, data = await asyncio.wait_for(conn.request("POST", "/v1/chat/completions", body), timeout_s)
                except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ConnectionError, ValueError) as exc:
                    errors[type(exc).__name__] += 1
                    conn.close()
                    continue
                elapsed = time.perf_counter() - started
                if status != 200:
                    errors[f"HTTP {status}"] += 1
                    continue
                if not answered(data):
                    errors["bad body"] += 1
                    continue
                latencies.append(elapsed)
        finally:
            conn.close()

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(concurrency)))
    wall = time.perf_counter() - started
    return {
        "concurrency": concurrency,
        "requests": total,
        "ok": len(latencies),
        "errors": sum(errors.values()),
        "error_kinds": dict(errors),
        "wall_s": round(wall, 3),
        "requests_per_s": round(len(latencies) / wall, 2),
        "latency_p50_ms": round(1000 * percentile(latencies, 50), 1),
        "latency_p90_ms": round(1000 * percentile(latencies, 90), 1),
        "latency_p99_ms": round(1000 * percentile(latencies, 99), 1),
        "latency_mean_ms": round(1000 * statistics.fmean(latencies), 1) if latencies else None,
    }


def answered(data: bytes) -> bool:
    """Whether a response body is a chat completion with an answer, or an event stream that carried
    content and ended with [DONE] and no error event."""
    if data.startswith(b"{"):
        try:
            return isinstance(json.loads(data)["choices"][0]["message"]["content"], str)
        except (ValueError, KeyError, IndexError, TypeError):
            return False
    events = [line[6:] for line in data.decode("utf-8", "replace").splitlines() if line.startswith("data: ")]
    if not events or events[-1] != "[DONE]" or any(e.startswith('{"error"') for e in events):
        return False
    return any('"content"' in e for e in events)


def rss_mb(pid: int) -> float:
    """Resident memory of a process and its children (uvicorn workers), MB."""
    try:
        import psutil
    except ImportError:
        return float("nan")
    proc = psutil.Process(pid)
    return sum(p.memory_info().rss for p in [proc, *proc.children(recursive=True)]) / 2**20


async def upstream_calls(fake_port: int, reset: bool = True) -> dict[str, Any]:
    _, data = await request_once(fake_port, "POST" if reset else "GET", "/_stats", b"" if reset else None)
    return json.loads(data)


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its children (uvicorn workers), from /proc."""
    try:
        import psutil
    except ImportError:
        return float("nan")
    try:
        proc = psutil.Process(pid)
        total = 0.0
        for p in [proc, *proc.children(recursive=True)]:
            t = p.cpu_times()
            total += t.user + t.system
        return total
    except psutil.Error:
        return float("nan")


async def measure(
    name: str, port: int, fake_port: int, body: bytes, args: argparse.Namespace, server_pid: int, fake_pid: int
) -> dict[str, Any]:
    print(f"[{name}] warm-up", flush=True)
    await run_load(port, body, concurrency=8, total=40)
    await upstream_calls(fake_port)
    print(f"[{name}] latency, one client at a time ({args.sequential} requests)", flush=True)
    single = await run_load(port, body, concurrency=1, total=args.sequential)
    calls = await upstream_calls(fake_port)
    single["upstream_calls_per_request"] = round(calls["calls"] / max(1, single["ok"]), 2)
    single["upstream_calls_by_kind"] = calls["by_kind"]
    print(f"[{name}] load: {args.concurrency} concurrent clients, {args.total} requests", flush=True)
    rss0 = rss_mb(server_pid)
    cpu0, fake0 = cpu_seconds(server_pid), cpu_seconds(fake_pid)
    load_before = os.getloadavg()[0]
    loaded = await run_load(port, body, concurrency=args.concurrency, total=args.total)
    cpu1, fake1 = cpu_seconds(server_pid), cpu_seconds(fake_pid)
    # other work on the machine competes for the same CPUs: record how busy it was
    loaded["machine_loadavg_1m_before_after"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]
    calls = await upstream_calls(fake_port)
    loaded["upstream_calls_per_request"] = round(calls["calls"] / max(1, loaded["ok"]), 2)
    # CPU per request: independent of what else runs on the machine, unlike requests/s
    loaded["proxy_cpu_ms_per_request"] = round(1000 * (cpu1 - cpu0) / max(1, loaded["ok"]), 2)
    loaded["upstream_cpu_ms_per_request"] = round(1000 * (fake1 - fake0) / max(1, loaded["ok"]), 2)
    loaded["proxy_capacity_rps_per_core"] = round(1000 / max(1e-9, loaded["proxy_cpu_ms_per_request"]), 1)
    for part in (single, loaded):
        part["overhead_p50_ms"] = round(part["latency_p50_ms"] - 1000 * CRITICAL_PATH_S, 1)
    print(f"[{name}] single: {single}\n[{name}] load:   {loaded}", flush=True)
    result = {"single_client": single, "under_load": loaded}
    if args.stream:  # the same load, streamed (keep-alives, then the answer's events)
        print(f"[{name}] load, streamed: {args.concurrency} concurrent clients, {args.total} requests", flush=True)
        streamed_body = json.dumps({**json.loads(body), "stream": True}).encode()
        result["under_load_streamed"] = await run_load(
            port, streamed_body, concurrency=args.concurrency, total=args.total
        )
        print(f"[{name}] load, streamed: {result['under_load_streamed']}", flush=True)
    rss1 = rss_mb(server_pid)
    result["proxy_rss_mb"] = {"before_load": round(rss0, 1), "after": round(rss1, 1), "growth": round(rss1 - rss0, 1)}
    print(f"[{name}] proxy RSS: {result['proxy_rss_mb']}", flush=True)
    return result


# ---- the two systems -------------------------------------------------------------------------


async def bench_selfpara(fake_port: int, args: argparse.Namespace, transport: str) -> dict[str, Any]:
    port = free_port()
    env = {**os.environ, "OPENAI_API_KEY": "sk-bench-dummy", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    cmd = [
        sys.executable,
        "-c",
        "from selfpara.cli import main; main()",
        "serve",
        "--model",
        "openai/fake",
        "--api-base",
        f"http://127.0.0.1:{fake_port}/v1",
        "--port",
        str(port),
        "--k",
        "3",
        "--paraphrase-check",
        "off",
        "--equivalence",
        "exact",
        # Every request asks the same question: with the call cache it would measure cache hits.
        "--cache",
        "off",
        "--timeout",
        "60",
        "--retries",
        str(args.retries),
        "--max-concurrent-requests",
        str(4 * args.concurrency),
        "--upstream-concurrency",
        str(16 * args.concurrency),
        "--upstream-transport",
        transport,
        "--workers",
        str(args.workers),
    ]
    proc = start(cmd, env, f"selfpara-{transport}")
    try:
        await wait_ready(port, "/ready", proc)
        body = json.dumps({"model": "openai/fake", "messages": [{"role": "user", "content": QUESTION}]}).encode()
        result = await measure(f"selfpara/{transport}", port, fake_port, body, args, proc.pid, args.fake_pid)
        result["settings"] = {
            "k": 3,
            "paraphrase_check": "off",
            "equivalence": "exact",
            "transport": transport,
            "workers": args.workers,
            "retries": args.retries,
        }
        return result
    finally:
        stop(proc)


async def bench_optillm(fake_port: int, args: argparse.Namespace) -> dict[str, Any]:
    python = Path(args.optillm_python)
    if not python.exists():
        return {
            "skipped": f"no optillm interpreter at {python} (python -m venv /tmp/optillm-venv && "
            "/tmp/optillm-venv/bin/pip install optillm)"
        }
    check = subprocess.run([str(python), "-c", "import optillm.server"], capture_output=True, text=True, timeout=300)
    if check.returncode != 0:
        return {"skipped": "optillm does not import: " + check.stderr.strip().splitlines()[-1]}
    port = free_port()
    env = {**os.environ, "OPENAI_API_KEY": "bench-dummy"}  # not "sk-...": optillm would build a client per request
    cmd = [
        str(python),
        "-c",
        "import sys; from optillm.server import main; sys.argv[0] = 'optillm'; main()",
        "--approach",
        "self_consistency",
        "--base-url",
        f"http://127.0.0.1:{fake_port}/v1",
        "--port",
        str(port),
        "--host",
        "127.0.0.1",
    ]
    proc = start(cmd, env, "optillm")
    try:
        await wait_ready(port, "/health", proc)
        body = json.dumps({"model": "fake", "messages": [{"role": "user", "content": QUESTION}]}).encode()
        result = await measure("optillm", port, fake_port, body, args, proc.pid, args.fake_pid)
        version = subprocess.run(
            [str(python), "-c", "import importlib.metadata as m; print(m.version('optillm'))"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        result["settings"] = {
            "approach": "self_consistency",
            "num_samples": 5,
            "version": version,
            "server": "Flask (its own app.run, threaded)",
        }
        return result
    finally:
        stop(proc)


def ratios(ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    if "single_client" not in theirs or "single_client" not in ours:
        return {}
    a, b = ours["single_client"], theirs["single_client"]
    la, lb = ours["under_load"], theirs["under_load"]
    latency = a["latency_p50_ms"] / b["latency_p50_ms"]
    throughput = la["requests_per_s"] / lb["requests_per_s"] if lb["requests_per_s"] else float("inf")
    cpu = lb["proxy_cpu_ms_per_request"] / la["proxy_cpu_ms_per_request"] if la["proxy_cpu_ms_per_request"] else None
    return {
        "proxy_cpu_per_request_ratio_optillm_over_selfpara": round(cpu, 3) if cpu else None,
        "latency_p50_ratio_selfpara_over_optillm": round(latency, 3),
        "latency_under_load_p50_ratio": round(la["latency_p50_ms"] / lb["latency_p50_ms"], 3),
        "throughput_ratio_selfpara_over_optillm": round(throughput, 3),
        "goal_latency_at_most_0.5x": latency <= 0.5,
        "goal_throughput_at_least_3x": throughput >= 3.0,
    }


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    fake_port = free_port()
    fake = start(
        [sys.executable, str(FAKE), "--port", str(fake_port), "--delay-ms", str(1000 * UPSTREAM_DELAY_S)],
        dict(os.environ),
        "fake-upstream",
    )
    out: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "upstream": {
            "delay_ms": 1000 * UPSTREAM_DELAY_S,
            "critical_path_ms": 1000 * CRITICAL_PATH_S,
            "server": "tests/fake_upstream.py (uvicorn, separate process)",
        },
        "load": {"concurrency": args.concurrency, "requests": args.total, "sequential_requests": args.sequential},
        # what `selfpara serve --model openai/fake --api-base ...` picks with the default upstream_transport=auto
        "default_transport_here": "http",
    }
    args.fake_pid = fake.pid
    try:
        await wait_ready(fake_port, "/v1/models", fake)
        out["selfpara"] = {}
        for transport in args.transports:
            out["selfpara"][transport] = await bench_selfpara(fake_port, args, transport)
        if not args.skip_optillm:
            out["optillm"] = await bench_optillm(fake_port, args)
            out["ratios"] = {t: ratios(out["selfpara"][t], out["optillm"]) for t in args.transports}
    finally:
        stop(fake)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--total", type=int, default=1000, help="requests in each load phase")
    parser.add_argument("--sequential", type=int, default=30, help="requests in each one-client phase")
    parser.add_argument("--workers", type=int, default=1, help="uvicorn worker processes of the proxy")
    parser.add_argument(
        "--retries",
        type=int,
        default=0,
        help="selfpara's retries of a failed upstream call (0: every request costs exactly 5 calls)",
    )
    parser.add_argument("--transports", nargs="+", default=["litellm", "http"], choices=["litellm", "http"])
    parser.add_argument("--stream", action="store_true", help="also run the load phase with streamed requests")
    parser.add_argument("--skip-optillm", action="store_true")
    parser.add_argument("--optillm-python", default="/tmp/optillm-venv/bin/python")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    out = asyncio.run(main_async(args))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps({k: v for k, v in out.items() if k in ("ratios",)}, indent=2))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
