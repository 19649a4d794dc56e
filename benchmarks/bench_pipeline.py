"""Pipeline overhead, concurrency and pipelining with fake models (no model time).

1. Overhead: everything that is not a model call (parse, filter, cluster, vote) with a
   zero-latency fake model and cheap equivalence functions; p50/p99 per request at k=5 and k=10.
   Targets: p50 <= 5 ms at k=5, <= 15 ms at k=10.
2. Concurrency: with a fake model taking 200 ms per call that cannot stream, wall-clock
   latency of a wrapped request at k=5 against one raw call, side by side. Target: <= 2.2x.
3. Pipelining: the same against a fake that streams, each call 200 ms with the reply's
   words spread evenly over it, so the paraphrase reply's lines arrive one by one. Side by
   side in one run: raw; fixed k=5 (each paraphrase answered as its line arrives); adaptive
   k (the default stages) when the answers agree, and when they split. Target: <= 1.5x.

Run: python benchmarks/bench_pipeline.py
"""

from __future__ import annotations

import asyncio
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import percentile, write  # noqa: E402

from selfpara import SelfParaphraser  # noqa: E402
from selfpara.llm import ModelClient  # noqa: E402
from selfpara.prompts import PARAPHRASE_MARKER  # noqa: E402
from selfpara.testing import FakeBackend, FakeStreamingBackend, default_responder, last_user_text  # noqa: E402

QUESTION = "Which river flows through the city of Vienna?"  # the fake's rewordings keep "Vienna" (drift checks)
SETTINGS = {"model": "openai/fake", "equivalence": "exact,numeric,contains", "paraphrase_check": "off"}


def paraphraser(k: int, delay_s: float = 0.0) -> SelfParaphraser:
    client = ModelClient(backend=FakeBackend(delay_s=delay_s), concurrency=64)
    return SelfParaphraser(k=k, client=client, **SETTINGS)


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


def split_answers(model, messages, params):
    """Paraphrases as the default fake writes them; answers alternate Danube / Inn by wording (a 3-3 split)."""
    text = last_user_text(messages)
    if PARAPHRASE_MARKER in text:
        return default_responder()(model, messages, params)
    m = re.search(r"\(v(\d+)\)", text)
    return "Danube" if m is None or int(m.group(1)) % 2 else "Inn"


async def pipelining(k: int = 5, delay_s: float = 0.2, n: int = 7) -> dict:
    """Raw vs wrapped latency against a streaming fake; every arm measured in the same rounds."""
    agree = ModelClient(backend=FakeStreamingBackend(delay_s=delay_s), concurrency=64)
    split = ModelClient(backend=FakeStreamingBackend(split_answers, delay_s=delay_s), concurrency=64)
    arms = {
        "fixed_k": (SelfParaphraser(k=k, client=agree, **SETTINGS), {}),
        "adaptive_agree": (SelfParaphraser(k=k, client=agree, **SETTINGS), {"adaptive": True}),
        "adaptive_split": (SelfParaphraser(k=k, client=split, **SETTINGS), {"adaptive": True}),
        "whole_reply_fixed_k": (SelfParaphraser(k=k, client=agree, **SETTINGS), {"stream_paraphrases": False}),
    }
    times: dict[str, list[float]] = {"raw": [], **{name: [] for name in arms}}
    calls: dict[str, int] = {}
    for _ in range(n):
        t = time.perf_counter()
        await agree.complete("openai/fake", [{"role": "user", "content": QUESTION}])
        times["raw"].append(time.perf_counter() - t)
        for name, (sp, overrides) in arms.items():
            t = time.perf_counter()
            r = await sp.aanswer(QUESTION, **overrides)
            times[name].append(time.perf_counter() - t)
            calls[name] = r.usage.calls
    raw = percentile(times["raw"], 50)
    out: dict = {"k": k, "upstream_delay_s": delay_s, "rounds": n, "raw_p50_s": raw}
    for name in arms:
        p50 = percentile(times[name], 50)
        out[name] = {"wrapped_p50_s": p50, "ratio": p50 / raw, "upstream_calls": calls[name]}
    return out


async def main() -> None:
    figures = {
        "overhead": [await overhead(5), await overhead(10)],
        "concurrency": await concurrency(),
        "pipelining": await pipelining(),
    }
    for row in figures["overhead"]:
        print(f"overhead k={row['k']:>2}: p50 {row['p50_ms']:.2f} ms  p99 {row['p99_ms']:.2f} ms")
    c = figures["concurrency"]
    print(
        f"concurrency k=5, 200 ms/call, no streaming: raw {c['raw_p50_s']:.3f}s "
        f"wrapped {c['wrapped_p50_s']:.3f}s ratio {c['ratio']:.2f}x"
    )
    p = figures["pipelining"]
    print(f"pipelining k=5, 200 ms/call, streaming fake: raw {p['raw_p50_s']:.3f}s")
    for name in ("fixed_k", "adaptive_agree", "adaptive_split", "whole_reply_fixed_k"):
        row = p[name]
        print(f"  {name:<20} {row['wrapped_p50_s']:.3f}s  ratio {row['ratio']:.2f}x  calls {row['upstream_calls']}")
    print("written to", write("pipeline", figures))


if __name__ == "__main__":
    asyncio.run(main())
