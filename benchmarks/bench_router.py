"""Benchmark of several deployments behind one proxy: two upstream servers of the model,
one of them broken (every call answered 500), against one healthy server, side by side
in one run.

    python benchmarks/bench_router.py        # writes benchmarks/results/router.json

Every arm is `selfpara serve` (a separate process) in front of tests/fake_upstream.py
servers (separate processes, 50 ms per call, the broken one too, so a call that lands on
it costs a full round trip before it fails over). k = 3, paraphrase check off, exact-match
equivalence: 5 upstream calls per request, as in bench_proxy.py. All settings of the
retries and the pool are the defaults (ModelClient: 3 retries from 0.5 s; the pool: its
own), so the figures are what a user gets. The arms:

- `single_http`:    --api-base of the healthy server (the lean http transport);
- `pool_http`:      --router-config over the broken and the healthy server (the pool, each
  deployment over the http transport);
- `single_litellm`, `pool_litellm`: the same two through litellm (--upstream-transport
  litellm: one upstream, then the pool with each deployment reached through litellm, as a
  deployment of another provider is), so the table shows what litellm costs.

Each arm runs two phases, with no warm-up (so the broken server's first failures count):
one client at a time, then C concurrent clients. Reported per phase: client errors,
p50/p99 latency, the proxy's CPU per request, and the calls each server got; the ratios
compare each pool arm with the single server of its transport (goal: zero client
errors, p99 within 1.5x).
The proxies run with the call cache off (SELFPARA_CALL_CACHE=off), so every request reaches
the upstreams. Modest load on purpose (default 8 clients): the machine is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench_proxy import (
    FAKE,
    QUESTION,
    UPSTREAM_DELAY_S,
    cpu_seconds,
    free_port,
    run_load,
    start,
    stop,
    upstream_calls,
    wait_ready,
)

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "router.json"
P99_GOAL = 1.5


def router_yaml(directory: Path, broken: int, healthy: int) -> Path:
    """The router config of the two servers, the broken one first (default router settings)."""
    path = directory / "router.yaml"
    path.write_text(
        "model_list:\n"
        + "".join(
            f'  - model_name: fake\n    litellm_params: {{model: openai/fake, api_base: "http://127.0.0.1:{port}/v1"}}\n'
            for port in (broken, healthy)
        )
    )
    return path


async def arm(
    name: str, upstream: list[str], transport: str, ports: dict[str, int], args: argparse.Namespace
) -> dict[str, Any]:
    """Start a proxy with `upstream` flags, load it, and read what each server saw."""
    port = free_port()
    env = {**os.environ, "OPENAI_API_KEY": "sk-bench-dummy", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env["SELFPARA_CALL_CACHE"] = "off"  # every request reaches the upstreams
    cmd = [
        sys.executable,
        "-c",
        "from selfpara.cli import main; main()",
        "serve",
        "--model",
        "openai/fake",
        *upstream,
        "--upstream-transport",
        transport,
        "--port",
        str(port),
        "--k",
        "3",
        "--paraphrase-check",
        "off",
        "--equivalence",
        "exact",
        "--max-concurrent-requests",
        str(4 * args.concurrency),
    ]
    proc = start(cmd, env, f"router-{name}")
    body = json.dumps({"model": "openai/fake", "messages": [{"role": "user", "content": QUESTION}]}).encode()
    try:
        await wait_ready(port, "/health", proc)
        result: dict[str, Any] = {}
        # No warm-up: the first phase starts cold, so the broken server's first failures count.
        for phase, concurrency, total in (
            ("one_client", 1, args.sequential),
            ("under_load", args.concurrency, args.total),
        ):
            for p in ports.values():
                await upstream_calls(p)  # reset the servers' counts
            print(f"[{name}] {phase}: {concurrency} client(s), {total} requests", flush=True)
            cpu0 = cpu_seconds(proc.pid)
            part = await run_load(port, body, concurrency=concurrency, total=total)
            cpu1 = cpu_seconds(proc.pid)
            part["proxy_cpu_ms_per_request"] = round(1000 * (cpu1 - cpu0) / max(1, part["ok"]), 2)
            seen = {server: (await upstream_calls(p))["calls"] for server, p in ports.items()}
            part["upstream_calls"] = seen
            part["upstream_calls_per_request"] = round(sum(seen.values()) / max(1, part["ok"]), 2)
            print(f"[{name}] {phase}: {part}", flush=True)
            result[phase] = part
        result["settings"] = {"transport": transport, "upstream": " ".join(upstream).replace(str(ROOT) + "/", "")}
        return result
    finally:
        stop(proc)


def compare(pool: dict[str, Any], single: dict[str, Any]) -> dict[str, Any]:
    """A pool arm against the single server of its transport, per phase."""
    out: dict[str, Any] = {}
    for phase in ("one_client", "under_load"):
        a, b = pool[phase], single[phase]
        ratio = a["latency_p99_ms"] / b["latency_p99_ms"]
        out[phase] = {
            "client_errors": a["errors"],
            "p50_ratio": round(a["latency_p50_ms"] / b["latency_p50_ms"], 3),
            "p99_ratio": round(ratio, 3),
            "calls_to_broken_server": a["upstream_calls"]["broken"],
            "share_of_calls_to_broken_server": round(
                a["upstream_calls"]["broken"] / max(1, sum(a["upstream_calls"].values())), 4
            ),
            "proxy_cpu_ratio": round(a["proxy_cpu_ms_per_request"] / max(1e-9, b["proxy_cpu_ms_per_request"]), 3),
            "goal_zero_client_errors": a["errors"] == 0,
            f"goal_p99_within_{P99_GOAL}x": ratio <= P99_GOAL,
        }
    return out


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    ports = {"healthy": free_port(), "broken": free_port()}
    delay = str(1000 * UPSTREAM_DELAY_S)
    fakes = [
        start(
            [sys.executable, str(FAKE), "--port", str(ports["healthy"]), "--delay-ms", delay],
            dict(os.environ),
            "fake-healthy",
        ),
        start(
            [sys.executable, str(FAKE), "--port", str(ports["broken"]), "--delay-ms", delay, "--fail-status", "500"],
            dict(os.environ),
            "fake-broken",
        ),
    ]
    out: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "upstream": {
            "delay_ms": 1000 * UPSTREAM_DELAY_S,
            "servers": "tests/fake_upstream.py, one with --fail-status 500",
        },
        "load": {"concurrency": args.concurrency, "requests": args.total, "one_client_requests": args.sequential},
        "settings": {
            "k": 3,
            "paraphrase_check": "off",
            "equivalence": "exact",
            "retries": "default (3)",
            "pool": "defaults",
        },
    }
    try:
        for name, p in ports.items():
            await wait_ready(p, "/v1/models", fakes[0 if name == "healthy" else 1])
        with tempfile.TemporaryDirectory() as tmp:
            config = router_yaml(Path(tmp), ports["broken"], ports["healthy"])
            single = ["--api-base", f"http://127.0.0.1:{ports['healthy']}/v1"]
            routed = ["--router-config", str(config)]
            arms = {}
            for transport in args.transports:
                arms[f"single_{transport}"] = await arm(f"single_{transport}", single, transport, ports, args)
                name = f"pool_{transport}"
                arms[name] = await arm(name, routed, transport, ports, args)
        out["arms"] = arms
        out["ratios"] = {
            name: compare(arms[name], arms[f"single_{t}"])
            for t, name in (("http", "pool_http"), ("litellm", "pool_litellm"))
            if name in arms
        }
        out["proxy_cpu_ms_per_request_under_load"] = {
            name: a["under_load"]["proxy_cpu_ms_per_request"] for name, a in arms.items()
        }
    finally:
        for f in fakes:
            stop(f)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--sequential", type=int, default=100, help="requests of the one-client phase")
    parser.add_argument("--total", type=int, default=400, help="requests of the load phase")
    parser.add_argument("--transports", nargs="+", default=["http", "litellm"], choices=["http", "litellm"])
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    out = asyncio.run(main_async(args))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out.get("ratios"), indent=2))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
