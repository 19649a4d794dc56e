"""Load check of the proxy's Redis call cache: many clients at once, twice, then Redis killed mid-run.

    python benchmarks/bench_redis_load.py            # writes benchmarks/results/redis_load.json
    python benchmarks/bench_redis_load.py --clients 50 --per-client 2    # a smaller run

Everything runs on loopback: the fake OpenAI-compatible upstream (tests/fake_upstream.py, its
own process, `--delay-ms` per call), a real redis-server (Debian package) on a free port, and
`selfpara serve` as a real process with `--max-concurrent-requests 256 --cache redis://...`
(k=3, paraphrase check off, exact-match equivalence: 5 upstream calls per request).

1. Cold: CLIENTS clients at once, each sending PER_CLIENT unique questions one after another.
2. Warm: the same load again. Target: 0 upstream calls, 0 answers flagged cache_unavailable.
3. Outage: a fresh load of new questions; redis-server is killed (SIGKILL) once a third of
   them are answered. Target: every request still answered (200), none lost.

Before the fix, redis-py 8's default pool (100 connections, "Too many connections" above)
switched the cache off under such a load while Redis was healthy: 598 of 600 answers were
flagged cache_unavailable and an identical second run made 7,200 upstream calls.

The script prints the figures, writes them to benchmarks/results/redis_load.json, and exits
non-zero when a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from _common import percentile, serve_env, stop_all, wait_up, write  # noqa: E402
from redis_server import RedisServer, free_port  # noqa: E402

ENV = serve_env()


def spawn(cmd: list[str], name: str) -> tuple[subprocess.Popen[bytes], Path]:
    log = Path(tempfile.gettempdir()) / f"selfpara-bench-redis-load-{name}.log"
    out = open(log, "wb")  # noqa: SIM115  (the child keeps it)
    return subprocess.Popen(cmd, env=ENV, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True), log


async def upstream_calls(upstream: str, *, reset: bool = False) -> int:
    async with httpx.AsyncClient(timeout=10) as http:
        response = await (http.post if reset else http.get)(f"{upstream}/_stats")
    return int(response.json()["calls"])


async def load(
    base: str, questions: list[list[str]], *, on_progress: Any = None, timeout_s: float = 120
) -> dict[str, Any]:
    """Each client's questions one after another, all clients at once; statuses, flags and latencies."""
    latencies: list[float] = []
    statuses: dict[str, int] = {}
    failures: list[str] = []
    counts = {"flagged": 0, "done": 0}
    # One connection per client, as separate clients have: a shared pool would hand a connection idle
    # for uvicorn's keep-alive limit (5 s) to another client just as the server closes it.
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)

    async def client(mine: list[str]) -> None:
        async with httpx.AsyncClient(base_url=base, timeout=timeout_s, limits=limits) as http:
            for question in mine:
                body = {"model": "openai/fake", "messages": [{"role": "user", "content": question}]}
                started = time.perf_counter()
                try:
                    response = await http.post("/v1/chat/completions", json=body)
                    status = str(response.status_code)
                    if response.status_code == 200 and "cache_unavailable" in response.json()["selfpara"]["flags"]:
                        counts["flagged"] += 1
                except httpx.HTTPError as exc:
                    status = type(exc).__name__
                    failures.append(f"{status} after {time.perf_counter() - started:.2f}s on question {question!r}")
                latencies.append(time.perf_counter() - started)
                statuses[status] = statuses.get(status, 0) + 1
                counts["done"] += 1
                if on_progress is not None:
                    on_progress(counts["done"])

    started = time.perf_counter()
    await asyncio.gather(*(client(mine) for mine in questions))
    wall = time.perf_counter() - started
    requests = sum(len(q) for q in questions)
    return {
        "requests": requests,
        "statuses": statuses,
        "cache_unavailable_answers": counts["flagged"],
        "wall_s": round(wall, 2),
        "requests_per_s": round(requests / wall, 1),
        "p50_ms": round(1000 * percentile(latencies, 50), 1),
        "p99_ms": round(1000 * percentile(latencies, 99), 1),
        "failures": failures[:20],
    }


def questions_for(clients: int, per_client: int, tag: str) -> list[list[str]]:
    """Unique questions the fake upstream paraphrases into kept rewordings (5 upstream calls each)."""
    return [
        [
            f"What is the capital city of country number {c * per_client + q} in the {tag} atlas?"
            for q in range(per_client)
        ]
        for c in range(clients)
    ]


async def ready(base: str) -> dict[str, Any]:
    async with httpx.AsyncClient(timeout=10) as http:
        body: dict[str, Any] = (await http.get(f"{base}/ready")).json()
    return body.get("cache") or {}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    up_port, proxy_port = free_port(), free_port()
    upstream = f"http://127.0.0.1:{up_port}"
    base = f"http://127.0.0.1:{proxy_port}"
    procs: list[subprocess.Popen[bytes]] = []
    with RedisServer() as redis:
        try:
            fake, _ = spawn(
                [sys.executable, str(ROOT / "tests" / "fake_upstream.py"), "--port", str(up_port)]
                + ["--delay-ms", str(args.delay_ms)],
                "upstream",
            )
            procs.append(fake)
            cmd = [
                sys.executable,
                "-c",
                "from selfpara.cli import main; main()",
                "serve",
                "--no-auth",
                "--port",
                str(proxy_port),
            ]
            cmd += ["--model", "openai/fake", "--api-base", f"{upstream}/v1", "--k", "3", "--paraphrase-check", "off"]
            cmd += ["--equivalence", "exact", "--timeout", "30", "--cache", redis.url]
            cmd += ["--max-concurrent-requests", "256", "--upstream-concurrency", "256"]
            proxy, proxy_log = spawn(cmd, "proxy")
            procs.append(proxy)
            await wait_up(f"{upstream}/v1/models", fake)
            await wait_up(f"{base}/health", proxy)
            load_before = os.getloadavg()[0]
            questions = questions_for(args.clients, args.per_client, "run")

            await upstream_calls(upstream, reset=True)
            cold = await load(base, questions)
            cold["upstream_calls"] = await upstream_calls(upstream, reset=True)
            warm = await load(base, questions)
            warm["upstream_calls"] = await upstream_calls(upstream, reset=True)
            warm["ready_cache"] = await ready(base)

            await upstream_calls(upstream, reset=True)  # not /ready's probe of the upstream
            fresh = questions_for(args.clients, args.per_client, "outage")
            total = sum(len(q) for q in fresh)
            killed: dict[str, float] = {}

            def kill_at_a_third(done: int) -> None:
                if not killed and done >= total // 3 and redis.proc is not None:
                    redis.proc.send_signal(signal.SIGKILL)
                    killed["after_requests"] = done
                    killed["at"] = time.monotonic()

            outage = await load(base, fresh, on_progress=kill_at_a_third)
            outage["redis_killed_after_requests"] = killed.get("after_requests")
            outage["upstream_calls"] = await upstream_calls(upstream, reset=True)
            await asyncio.sleep(5.5)  # /ready reuses its result for ready_cache_s (5 s)
            outage["ready_cache"] = await ready(base)
            log_text = proxy_log.read_text(errors="replace")
        finally:
            stop_all(procs)
    return {
        "clients": args.clients,
        "requests_per_client": args.per_client,
        "upstream_delay_ms": args.delay_ms,
        "settings": "k=3, paraphrase check off, exact equivalence: 5 upstream calls per request; "
        "--max-concurrent-requests 256 --upstream-concurrency 256 (the Redis pool: 256 connections)",
        "processes": "fake upstream, selfpara serve and redis-server, each its own process on loopback",
        "cpus": os.cpu_count(),
        "loadavg_1m_before": load_before,
        "cold": cold,
        "warm": warm,
        "outage": outage,
        "proxy_log_warnings": sum(" WARNING " in line for line in log_text.splitlines()),
        "proxy_log_too_many_connections": log_text.count("Too many connections"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--per-client", type=int, default=5)
    parser.add_argument("--delay-ms", type=float, default=20.0, help="the fake upstream's time per call")
    args = parser.parse_args()
    figures = asyncio.run(run(args))
    for name in ("cold", "warm", "outage"):
        row = figures[name]
        print(
            f"{name:>6}: {row['requests']} requests in {row['wall_s']} s ({row['requests_per_s']}/s, p50 "
            f"{row['p50_ms']} ms, p99 {row['p99_ms']} ms), statuses {row['statuses']}, "
            f"{row['cache_unavailable_answers']} flagged cache_unavailable, {row['upstream_calls']} upstream calls"
        )
    print(f"warm /ready cache: {figures['warm']['ready_cache']}")
    print(f"outage: Redis killed after {figures['outage']['redis_killed_after_requests']} answers; "
          f"/ready cache: {figures['outage']['ready_cache']}")  # fmt: skip
    print(
        f"proxy log: {figures['proxy_log_warnings']} warnings, "
        f"{figures['proxy_log_too_many_connections']} 'Too many connections'"
    )
    print(f"load average (1 min) before: {figures['loadavg_1m_before']:.1f} on {figures['cpus']} CPUs")
    print("written to", write("redis_load", figures))
    requests = figures["cold"]["requests"]
    assert figures["cold"]["statuses"] == {"200": requests}, figures["cold"]
    assert figures["warm"]["statuses"] == {"200": requests}, figures["warm"]
    assert figures["warm"]["upstream_calls"] == 0 and figures["warm"]["cache_unavailable_answers"] == 0, figures["warm"]
    assert figures["cold"]["cache_unavailable_answers"] == 0, figures["cold"]
    assert figures["outage"]["statuses"] == {"200": requests}, figures["outage"]


if __name__ == "__main__":
    main()
