"""Pipeline overhead and concurrency with fake models (no model time).

1. Overhead: everything that is not a model call (parse, filter, cluster, vote) with a
   zero-latency fake model and cheap equivalence functions; p50/p99 per request at k=5 and k=10.
   Targets: p50 <= 5 ms at k=5, <= 15 ms at k=10.
2. Concurrency: with a fake model taking 200 ms per call, wall-clock latency of a
   wrapped request at k=5 against one raw call, side by side. Target: <= 2.2x.

Run: python benchmarks/bench_pipeline.py
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import percentile, write  # noqa: E402

from selfpara import SelfParaphraser  # noqa: E402
from selfpara.llm import ModelClient  # noqa: E402
from selfpara.testing import FakeBackend  # noqa: E402

QUESTION = "Which river flows through the city of Vienna in Austria?"


def paraphraser(k: int, delay_s: float = 0.0) -> SelfParaphraser:
    client = ModelClient(backend=FakeBackend(delay_s=delay_s), concurrency=64)
    return SelfParaphraser(
        model="openai/fake", k=k, equivalence="exact,numeric,contains", paraphrase_check="off", client=client
    )


async def overhead(k: int, n: int = 300) -> dict:
    sp = paraphraser(k)
    for _ in range(20):  # warm caches and imports
        await sp.aanswer(QUESTION)
    times = []
    for i in range(n):
        t = time.perf_counter()
        r = await sp.aanswer(f"{QUESTION} ({i})")
        times.append((time.perf_counter() - t) * 1000)
        assert r.k_kept == k
    return {"k": k, "requests": n, "p50_ms": percentile(times, 50), "p99_ms": percentile(times, 99)}


async def concurrency(k: int = 5, delay_s: float = 0.2, n: int = 5) -> dict:
    sp = paraphraser(k, delay_s)
    raw_client = sp.client
    raw, wrapped = [], []
    for _ in range(n):  # interleaved so both see the same machine state
        t = time.perf_counter()
        await raw_client.complete("openai/fake", [{"role": "user", "content": QUESTION}])
        raw.append(time.perf_counter() - t)
        t = time.perf_counter()
        await sp.aanswer(QUESTION)
        wrapped.append(time.perf_counter() - t)
    raw_p50, wrapped_p50 = percentile(raw, 50), percentile(wrapped, 50)
    return {
        "k": k,
        "upstream_delay_s": delay_s,
        "raw_p50_s": raw_p50,
        "wrapped_p50_s": wrapped_p50,
        "ratio": wrapped_p50 / raw_p50,
    }


async def main() -> None:
    figures = {"overhead": [await overhead(5), await overhead(10)], "concurrency": await concurrency()}
    for row in figures["overhead"]:
        print(f"overhead k={row['k']:>2}: p50 {row['p50_ms']:.2f} ms  p99 {row['p99_ms']:.2f} ms")
    c = figures["concurrency"]
    print(
        f"concurrency k=5, 200 ms/call: raw {c['raw_p50_s']:.3f}s wrapped {c['wrapped_p50_s']:.3f}s ratio {c['ratio']:.2f}x"
    )
    print("written to", write("pipeline", figures))


if __name__ == "__main__":
    asyncio.run(main())
