"""Pipeline overhead, concurrency and pipelining with fake models (no model time).

1. Overhead: everything that is not a model call (parse, filter, cluster, vote) with a
   zero-latency fake model and cheap equivalence functions; p50/p99 per request at k=5 and k=10.
   Targets: p50 <= 5 ms at k=5, <= 15 ms at k=10.
2. Concurrency: with a fake model taking 200 ms per call that cannot stream, wall-clock
   latency of a wrapped request at k=5 against one raw call, side by side. Target: <= 2.2x.
3. Pipelining: the same against a fake that streams, each call 200 ms with the reply's
   words spread evenly over it, so the paraphrase reply's lines arrive one by one. Side by
   side in one run: raw; fixed k=5 (each paraphrase answered as its line arrives); adaptive
   k (the default stages) when the answers agree, and when they split; fixed and adaptive k
   with the whole reply awaited. Target: <= 1.5x.
4. CPU: what streaming the paraphrase reply costs the caller's process, over HTTP (the http
   transport) against tests/fake_upstream.py in its own process answering at once: CPU
   ms per wrapped request (k=5) with the paraphrase reply streamed and whole.

Run: python benchmarks/bench_pipeline.py
"""

from __future__ import annotations

import asyncio
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

from _common import percentile, write

from selfpara import SelfParaphraser
from selfpara.models.client import ModelClient
from selfpara.pipeline.prompts import PARAPHRASE_MARKER
from selfpara.testing import FakeBackend, FakeStreamingBackend, default_responder, last_user_text

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
    stream, whole = {"stream_paraphrases": True}, {"stream_paraphrases": False}
    arms = {
        "fixed_k": (SelfParaphraser(k=k, client=agree, **SETTINGS), stream),
        "adaptive_agree": (SelfParaphraser(k=k, client=agree, **SETTINGS), {"adaptive": True, **stream}),
        "adaptive_split": (SelfParaphraser(k=k, client=split, **SETTINGS), {"adaptive": True, **stream}),
        "whole_reply_fixed_k": (SelfParaphraser(k=k, client=agree, **SETTINGS), whole),
        "whole_reply_adaptive_agree": (SelfParaphraser(k=k, client=agree, **SETTINGS), {"adaptive": True, **whole}),
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


async def cpu_per_request(k: int = 5, n: int = 60) -> dict:
    """CPU of this process per wrapped request over HTTP, the paraphrase reply streamed and whole."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    fake = Path(__file__).parents[1] / "tests" / "fake_upstream.py"
    cmd = [sys.executable, str(fake), "--port", str(port), "--delay-ms", "0"]
    upstream = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        settings = {**SETTINGS, "api_base": f"http://127.0.0.1:{port}/v1", "transport": "http", "cache": "off"}
        sp = SelfParaphraser(k=k, **settings)
        for _ in range(100):  # until the upstream listens
            try:
                await sp.aanswer(QUESTION)
                break
            except Exception:
                await asyncio.sleep(0.1)
        out = {}
        for name, stream in (("streamed", True), ("whole", False)):
            for i in range(10):
                await sp.aanswer(f"{QUESTION} ({i})", stream_paraphrases=stream)
            started = time.process_time()
            for i in range(n):
                await sp.aanswer(f"{QUESTION} ({i})", stream_paraphrases=stream)
            out[f"{name}_cpu_ms_per_request"] = (time.process_time() - started) * 1000 / n
        return {"k": k, "requests": n, **out}
    finally:
        upstream.terminate()
        upstream.wait(timeout=10)


async def main() -> None:
    figures = {
        "overhead": [await overhead(5), await overhead(10)],
        "concurrency": await concurrency(),
        "pipelining": await pipelining(),
        "cpu": await cpu_per_request(),
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
    for name in ("fixed_k", "adaptive_agree", "adaptive_split", "whole_reply_fixed_k", "whole_reply_adaptive_agree"):
        row = p[name]
        print(f"  {name:<27} {row['wrapped_p50_s']:.3f}s  ratio {row['ratio']:.2f}x  calls {row['upstream_calls']}")
    cpu = figures["cpu"]
    streamed, whole_ms = cpu["streamed_cpu_ms_per_request"], cpu["whole_cpu_ms_per_request"]
    print(f"CPU per wrapped request over HTTP, k=5: reply streamed {streamed:.2f} ms, whole {whole_ms:.2f} ms")
    print("written to", write("pipeline", figures))


if __name__ == "__main__":
    asyncio.run(main())
