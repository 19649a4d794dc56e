"""Benchmark of the call cache through the proxy: a second pass, and two replicas on one Redis.

    python benchmarks/bench_cache.py          # writes benchmarks/results/cache.json

A fake OpenAI-compatible upstream (tests/fake_upstream.py, in this process) answers every
call after 200 ms. `selfpara serve` runs as real processes in front of it (k=3,
paraphrase check off, exact-match equivalence: 5 upstream calls per request on a
2 x 200 ms critical path), and a real redis-server (Debian package) on a free port.

1. Second pass, side by side: the same 20 questions are sent twice, one at a time, to a
   proxy with the memory cache and to one with the Redis cache, and through the library
   (SelfParaphraser over the same HTTP upstream) with each. Reported per path and cache:
   wall time and p50 latency of each pass, their ratio, and the upstream calls the second
   pass made. Target: >= 20x faster, zero upstream calls.
2. Replicas: two proxy processes on one Redis. Questions answered by one are asked of
   the other (both ways): every answer must come from the cache (zero upstream calls, and
   hits in the other replica's selfpara_cache_hits_total: responses do not report hits).

The script asserts the targets and exits non-zero when one is missed.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from _common import percentile, stop_all, wait_up, write  # noqa: E402
from fake_upstream import FakeUpstream, ThreadedServer  # noqa: E402
from redis_server import RedisServer, free_port  # noqa: E402

from selfpara import SelfParaphraser  # noqa: E402
from selfpara.config import build_config  # noqa: E402

DELAY_S = 0.2
CLIENTS = 1  # one request at a time: a request's latency is its own, not a queue behind the others
COUNTRIES = [
    "France", "Japan", "Peru", "Kenya", "Chile", "Egypt", "Norway", "Canada", "India", "Ghana",
    "Spain", "Italy", "Brazil", "Mexico", "Turkey", "Poland", "Sweden", "Greece", "Cuba", "Nepal",
    "Ireland", "Austria", "Portugal", "Vietnam", "Morocco", "Finland", "Iceland", "Hungary", "Jordan", "Laos",
]  # fmt: skip
PASS_QUESTIONS = [f"What is the capital city of {c}?" for c in COUNTRIES[:20]]
TO_B = [f"Which city is the capital of {c}?" for c in COUNTRIES[20:25]]  # answered by A, then asked of B
TO_A = [f"Which city is the capital of {c}?" for c in COUNTRIES[25:30]]  # answered by B, then asked of A


METRICS_KEY = "bench-metrics-key-0123456789"


def start_proxy(port: int, upstream: str, cache: str) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "OPENAI_API_KEY": "sk-bench-dummy",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "SELFPARA_PROXY_KEY": "",
        "BENCH_METRICS_KEY": METRICS_KEY,
    }
    cmd = [sys.executable, "-c", "from selfpara.cli import main; main()", "serve", "--no-auth"]
    cmd += ["--metrics-key-env", "BENCH_METRICS_KEY"]  # the cache's hits are the operator's to read
    cmd += ["--model", "openai/fake", "--api-base", upstream, "--port", str(port), "--k", "3"]
    cmd += ["--paraphrase-check", "off", "--equivalence", "exact", "--timeout", "30", "--cache", cache]
    log = open(Path(tempfile.gettempdir()) / f"selfpara-bench-cache-{port}.log", "wb")  # noqa: SIM115
    return subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True)


async def wait_ready(base: str, proc: subprocess.Popen[bytes], timeout_s: float = 120) -> None:
    await wait_up(f"{base}/health", proc, timeout_s)


async def cache_hits_counted(http: httpx.AsyncClient) -> float:
    """The proxy's selfpara_cache_hits_total: responses do not say what the cache answered (docs/proxy.md)."""
    text = (await http.get("/metrics", headers={"Authorization": f"Bearer {METRICS_KEY}"})).text
    return sum(float(line.split()[1]) for line in text.splitlines() if line.startswith("selfpara_cache_hits_total "))


async def ask_all(base: str, questions: list[str]) -> dict[str, Any]:
    """Send every question (CLIENTS at a time); latencies, wall time and the cache hits the proxy counted."""
    limit = asyncio.Semaphore(CLIENTS)
    latencies: list[float] = []
    hits: list[int] = []
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        counted = await cache_hits_counted(http)

        async def one(question: str) -> None:
            body = {"model": "openai/fake", "messages": [{"role": "user", "content": question}]}
            async with limit:
                started = time.perf_counter()
                response = await http.post("/v1/chat/completions", json=body)
                latencies.append(time.perf_counter() - started)
            response.raise_for_status()

        started = time.perf_counter()
        await asyncio.gather(*(one(q) for q in questions))
        wall = time.perf_counter() - started
        hits.append(int(await cache_hits_counted(http) - counted))
    return {"wall_s": wall, "p50_s": percentile(latencies, 50), "p99_s": percentile(latencies, 99), "hits": hits}


async def ask_library(sp: SelfParaphraser, questions: list[str]) -> dict[str, Any]:
    """`ask_all` through the library: one SelfParaphraser, one question at a time."""
    latencies: list[float] = []
    hits: list[int] = []
    started = time.perf_counter()
    for question in questions:
        t = time.perf_counter()
        result = await sp.aanswer(question)
        latencies.append(time.perf_counter() - t)
        hits.append(result.usage.cache_hits)
    wall = time.perf_counter() - started
    return {"wall_s": wall, "p50_s": percentile(latencies, 50), "p99_s": percentile(latencies, 99), "hits": hits}


async def second_pass(path: str, name: str, target: str | SelfParaphraser, fake: FakeUpstream) -> dict[str, Any]:
    ask = (lambda qs: ask_all(target, qs)) if isinstance(target, str) else (lambda qs: ask_library(target, qs))
    before = len(fake.calls)
    cold = await ask(PASS_QUESTIONS)
    middle = len(fake.calls)
    warm = await ask(PASS_QUESTIONS)
    after = len(fake.calls)
    return {
        "path": path,
        "cache": name,
        "requests_per_pass": len(PASS_QUESTIONS),
        "first_pass": {"wall_s": cold["wall_s"], "p50_s": cold["p50_s"], "upstream_calls": middle - before},
        "second_pass": {
            "wall_s": warm["wall_s"],
            "p50_s": warm["p50_s"],
            "p99_s": warm["p99_s"],
            "upstream_calls": after - middle,
            "cache_hits": sum(warm["hits"]),
        },
        "speedup_wall": cold["wall_s"] / warm["wall_s"],
        "speedup_p50": cold["p50_s"] / warm["p50_s"],
    }


async def across(fake: FakeUpstream, first: str, second: str, questions: list[str]) -> dict[str, Any]:
    before = len(fake.calls)
    await ask_all(first, questions)
    middle = len(fake.calls)
    other = await ask_all(second, questions)
    return {
        "questions": len(questions),
        "upstream_calls_first_replica": middle - before,
        "upstream_calls_other_replica": len(fake.calls) - middle,
        "cache_hits_other_replica": other["hits"],
    }


async def run() -> dict[str, Any]:
    fake = FakeUpstream(delay_s=DELAY_S)
    procs: list[subprocess.Popen[bytes]] = []
    with ThreadedServer(fake, lifespan="off") as upstream_server, RedisServer() as redis:
        upstream = f"{upstream_server.base}/v1"
        ports = {"memory": free_port(), "redis_a": free_port(), "redis_b": free_port()}
        caches = {"memory": "memory", "redis_a": redis.url, "redis_b": redis.url}
        bases = {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}
        try:
            for name, port in ports.items():
                procs.append(start_proxy(port, upstream, caches[name]))
            for proc, base in zip(procs, bases.values(), strict=True):
                await wait_ready(base, proc)
            load_before = os.getloadavg()[0]
            passes = [
                await second_pass("proxy", "memory", bases["memory"], fake),
                await second_pass("proxy", "redis", bases["redis_a"], fake),
            ]
            flush(redis.url)  # the proxy's entries would answer the library's first pass (same keys)
            for name, cache in (("memory", "memory"), ("redis", redis.url)):
                cfg = build_config(
                    model="openai/fake",
                    api_base=upstream,
                    api_key="sk-bench-dummy",
                    k=3,
                    paraphrase_check="off",
                    equivalence="exact",
                    cache=cache,
                    cache_ttl_s=60,
                )
                passes.append(await second_pass("library", name, SelfParaphraser(cfg), fake))
            redis_keys = len(redis_contents(redis.url))
            replicas = {
                "a_then_b": await across(fake, bases["redis_a"], bases["redis_b"], TO_B),
                "b_then_a": await across(fake, bases["redis_b"], bases["redis_a"], TO_A),
            }
        finally:
            stop_all(procs)
    return {
        "upstream_delay_s": DELAY_S,
        "loadavg_1m_before": load_before,
        "redis_keys_after": redis_keys,
        "clients": CLIENTS,
        "settings": "k=3, paraphrase check off, exact equivalence: 5 upstream calls per request",
        "proxies": "selfpara serve, one process per cache (memory; redis A; redis B on the same Redis)",
        "redis": "redis-server (Debian package) on a free loopback port, no persistence",
        "cpus": os.cpu_count(),
        "second_pass": passes,
        "replicas": replicas,
    }


def flush(url: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    try:
        client.flushall()
    finally:
        client.close()


def redis_contents(url: str) -> list[bytes]:
    import redis

    client = redis.Redis.from_url(url)
    try:
        return list(client.scan_iter("selfpara:call:*"))
    finally:
        client.close()


def main() -> None:
    figures = asyncio.run(run())
    for row in figures["second_pass"]:
        first, second = row["first_pass"], row["second_pass"]
        print(
            f"{row['path']:>7} {row['cache']:>6}: pass 1 {first['wall_s']:.2f}s (p50 {first['p50_s'] * 1000:.0f} ms, "
            f"{first['upstream_calls']} upstream calls); pass 2 {second['wall_s']:.3f}s "
            f"(p50 {second['p50_s'] * 1000:.1f} ms, {second['upstream_calls']} upstream calls, "
            f"{second['cache_hits']} cache hits): {row['speedup_wall']:.0f}x faster (p50 {row['speedup_p50']:.0f}x)"
        )
    for name, row in figures["replicas"].items():
        print(
            f"replicas {name}: {row['questions']} questions, {row['upstream_calls_first_replica']} upstream calls on "
            f"the first, {row['upstream_calls_other_replica']} on the other; cache hits counted there "
            f"{row['cache_hits_other_replica']}"
        )
    print(f"load average (1 min) before: {figures['loadavg_1m_before']:.1f} on {figures['cpus']} CPUs")
    print("written to", write("cache", figures))
    for row in figures["second_pass"]:
        assert row["second_pass"]["upstream_calls"] == 0, row
        assert row["speedup_wall"] >= 20, row
    for row in figures["replicas"].values():
        assert row["upstream_calls_first_replica"] > 0 and row["upstream_calls_other_replica"] == 0, row
        assert all(h > 0 for h in row["cache_hits_other_replica"]), row


if __name__ == "__main__":
    main()
