"""The proxy under load, each call cache, then SIGTERM mid-load: errors, latency, /health, memory.

    python benchmarks/bench_load.py                      # writes benchmarks/results/load.json
    python benchmarks/bench_load.py --clients 50 --per-client 2          # a smaller run

Everything runs on loopback, each its own process: the fake OpenAI-compatible upstream
(tests/fake_upstream.py, `--delay-ms` per call), a real redis-server (Debian package) for the Redis
arm, and `selfpara serve` (k=3, paraphrase check off, exact-match equivalence: 5 upstream calls per
request; `--max-concurrent-requests 256`). For each cache (off, memory, Redis) a fresh proxy gets:

1. load: CLIENTS clients at once (one connection each), each sending PER_CLIENT unique questions
   one after another, while a prober asks `/health` every 50 ms; then the same load again (with a
   cache, answered from it);
2. SIGTERM: a third load, and SIGTERM to the proxy once a third of it is answered. Clients start no
   request after that (a load balancer would send them elsewhere); every request the proxy took (its
   log lines) must still be answered 200 within the graceful period, and the proxy must exit by itself
   (uvicorn re-raises the SIGTERM once its graceful shutdown is done: exit status -15, or 0). A request
   sent in the very instant of SIGTERM may find its keep-alive connection closed by the shutdown
   before the server read it (a ReadError at the client, no log line): counted as `not_taken`, the
   retry a client or balancer makes for a connection closed before any response.

Targets (issue 45): 0 errors in every phase, every in-flight request answered at SIGTERM, the proxy's
resident memory flat after warm-up (growth reported, not asserted: the machine's noise is in it).
The script prints the figures, writes benchmarks/results/load.json, and exits non-zero when a target
is missed.
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
sys.path.insert(0, str(Path(__file__).parent))

from _common import free_port, percentile, serve_env, stop_all, wait_up, write  # noqa: E402
from redis_server import RedisServer  # noqa: E402

ENV = serve_env()


def log_path(name: str) -> Path:
    return Path(tempfile.gettempdir()) / f"selfpara-bench-load-{name}.log"


def spawn(cmd: list[str], name: str) -> subprocess.Popen[bytes]:
    log = open(log_path(name), "wb")  # noqa: SIM115
    return subprocess.Popen(cmd, env=ENV, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True)


def logged_statuses(path: Path, offset: int) -> dict[str, int]:
    """The statuses of the chat requests the proxy logged after `offset` of its log: the requests it took."""
    counts: dict[str, int] = {}
    for line in path.read_bytes()[offset:].decode(errors="replace").splitlines():
        if " status=" in line and "request_id=" in line:
            status = line.split(" status=", 1)[1].split()[0]
            counts[status] = counts.get(status, 0) + 1
    return counts


def rss_mb(pid: int) -> float:
    """The resident memory of process `pid`, MB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def questions(clients: int, per_client: int, tag: str) -> list[list[str]]:
    return [
        [f"What is the capital of country {c}-{q} in the {tag} atlas?" for q in range(per_client)]
        for c in range(clients)
    ]


async def load(
    base: str, work: list[list[str]], *, stop: asyncio.Event | None = None, on_done: Any = None
) -> dict[str, Any]:
    """Every client's questions one after another, all clients at once (each stops starting new ones once
    `stop` is set); statuses and latencies, and `/health` asked every 50 ms meanwhile."""
    latencies: list[float] = []
    statuses: dict[str, int] = {}
    failures: list[str] = []
    done = [0]
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)

    async def client(mine: list[str]) -> None:
        async with httpx.AsyncClient(base_url=base, timeout=120, limits=limits) as http:
            for question in mine:
                if stop is not None and stop.is_set():
                    return
                body = {"model": "openai/fake", "messages": [{"role": "user", "content": question}]}
                started = time.perf_counter()
                try:
                    status = str((await http.post("/v1/chat/completions", json=body)).status_code)
                except httpx.HTTPError as exc:
                    status = type(exc).__name__
                    failures.append(f"{status} on {question!r}")
                latencies.append(time.perf_counter() - started)
                statuses[status] = statuses.get(status, 0) + 1
                done[0] += 1
                if on_done is not None:
                    on_done(done[0])

    health: list[float] = []
    finished = asyncio.Event()

    async def prober() -> None:
        async with httpx.AsyncClient(base_url=base, timeout=30) as http:
            while not finished.is_set() and not (stop is not None and stop.is_set()):
                started = time.perf_counter()
                try:
                    await http.get("/health")
                    health.append(time.perf_counter() - started)
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(0.05)

    probing = asyncio.create_task(prober())
    started = time.perf_counter()
    await asyncio.gather(*(client(mine) for mine in work))
    wall = time.perf_counter() - started
    finished.set()
    await probing
    answered = sum(statuses.values())
    return {
        "requests": answered,
        "statuses": statuses,
        "errors": answered - statuses.get("200", 0),
        "wall_s": round(wall, 2),
        "requests_per_s": round(answered / wall, 1),
        "p50_ms": round(1000 * percentile(latencies, 50), 1),
        "p99_ms": round(1000 * percentile(latencies, 99), 1),
        "health_probes": len(health),
        "health_p99_ms": round(1000 * percentile(health, 99), 1) if health else None,
        "failures": failures[:10],
    }


async def arm(cache: str, upstream: str, args: argparse.Namespace) -> dict[str, Any]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-c", "from selfpara.cli import main; main()", "serve", "--no-auth", "--port", str(port)]
    cmd += ["--model", "openai/fake", "--api-base", f"{upstream}/v1", "--k", "3", "--paraphrase-check", "off"]
    cmd += ["--equivalence", "exact", "--timeout", "30", "--cache", cache, "--graceful-timeout", "60"]
    cmd += ["--max-concurrent-requests", "256", "--upstream-concurrency", "256"]
    name = cache.split(":", 1)[0]
    proxy = spawn(cmd, name)
    try:
        await wait_up(f"{base}/health", proxy)
        rss_start = rss_mb(proxy.pid)
        first = await load(base, questions(args.clients, args.per_client, f"{name}-1"))
        rss_warm = rss_mb(proxy.pid)
        again = await load(base, questions(args.clients, args.per_client, f"{name}-1"))
        rss_after = rss_mb(proxy.pid)

        stop = asyncio.Event()
        work = questions(args.clients, args.per_client, f"{name}-term")
        total = sum(len(q) for q in work)
        sent_at: dict[str, float] = {}

        def term_at_a_third(done: int) -> None:
            if not stop.is_set() and done >= total // 3:
                stop.set()
                sent_at["after_answers"] = done
                proxy.send_signal(signal.SIGTERM)

        offset = log_path(name).stat().st_size
        term = await load(base, work, stop=stop, on_done=term_at_a_third)
        exit_code = await asyncio.to_thread(proxy.wait, 90)
        # A request sent in the instant of SIGTERM can meet its keep-alive connection being closed by the
        # shutdown before the server read it (the client sees a ReadError): the proxy never took it. What
        # counts is that every request the proxy took was answered: its log against the clients' 200s.
        taken = logged_statuses(log_path(name), offset)
        term["proxy_took"] = taken
        term["errors"] = sum(n for status, n in taken.items() if status != "200") + max(
            0, taken.get("200", 0) - term["statuses"].get("200", 0)
        )
        term["not_taken"] = sum(term["statuses"].values()) - term["statuses"].get("200", 0)
    finally:
        stop_all([proxy])
    return {
        "cache": name,
        "load": first,
        "again": again,
        "sigterm": {**term, "sent_after_answers": sent_at.get("after_answers"), "proxy_exit_code": exit_code},
        "rss_mb": {"started": rss_start, "after_load": rss_warm, "after_second_load": rss_after},
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    up_port = free_port()
    upstream = f"http://127.0.0.1:{up_port}"
    fake = spawn(
        [
            sys.executable,
            str(ROOT / "tests" / "fake_upstream.py"),
            "--port",
            str(up_port),
            "--delay-ms",
            str(args.delay_ms),
        ],
        "upstream",
    )
    load_before = os.getloadavg()[0]
    arms = []
    try:
        await wait_up(f"{upstream}/v1/models", fake)
        for cache in args.caches:
            if cache == "redis":
                with RedisServer() as redis:
                    arms.append(await arm(redis.url, upstream, args))
            else:
                arms.append(await arm(cache, upstream, args))
    finally:
        stop_all([fake])
    return {
        "clients": args.clients,
        "requests_per_client": args.per_client,
        "upstream_delay_ms": args.delay_ms,
        "settings": "k=3, paraphrase check off, exact equivalence: 5 upstream calls per request; "
        "--max-concurrent-requests 256 --upstream-concurrency 256 --graceful-timeout 60",
        "cpus": os.cpu_count(),
        "loadavg_1m_before": round(load_before, 2),
        "loadavg_1m_after": round(os.getloadavg()[0], 2),
        "arms": arms,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--per-client", type=int, default=5)
    parser.add_argument("--delay-ms", type=float, default=20.0, help="the fake upstream's time per call")
    parser.add_argument("--caches", nargs="+", default=["off", "memory", "redis"], choices=["off", "memory", "redis"])
    parser.add_argument("--name", default="load", help="results file name (benchmarks/results/NAME.json)")
    args = parser.parse_args()
    figures = asyncio.run(run(args))
    for row in figures["arms"]:
        for phase in ("load", "again", "sigterm"):
            p = row[phase]
            print(
                f"{row['cache']:>6} {phase:>7}: {p['requests']} requests, {p['errors']} errors {p['statuses']}, "
                f"{p['requests_per_s']}/s, p50 {p['p50_ms']} ms, p99 {p['p99_ms']} ms, "
                f"/health p99 {p['health_p99_ms']} ms ({p['health_probes']} probes)"
            )
        term = row["sigterm"]
        print(
            f"{row['cache']:>6} SIGTERM after {term['sent_after_answers']} answers, exit {term['proxy_exit_code']}; "
            f"the proxy took {term['proxy_took']}, {term['not_taken']} closed before it read them; "
            f"RSS MB {row['rss_mb']}"
        )
    print(
        f"load average (1 min) {figures['loadavg_1m_before']} before, {figures['loadavg_1m_after']} after, "
        f"{figures['cpus']} CPUs"
    )
    print("written to", write(args.name, figures))
    for row in figures["arms"]:
        for phase in ("load", "again", "sigterm"):
            assert row[phase]["errors"] == 0, (row["cache"], phase, row[phase])
        # uvicorn re-raises the SIGTERM it caught once its graceful shutdown is done: -15 is a clean exit
        assert row["sigterm"]["proxy_exit_code"] in (0, -signal.SIGTERM), row["sigterm"]


if __name__ == "__main__":
    main()
