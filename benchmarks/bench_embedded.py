"""Benchmark the embedded model: load time, sequential vs batched generation.

Runs the same 8 prompts (greedy, max_tokens 32) one call at a time and then all at
once (the backend batches them into one `generate`), in one process, and writes the
figures to benchmarks/results/embedded.json.

    python benchmarks/bench_embedded.py [--prompts 8] [--max-tokens 32] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from selfpara.local import embedded_backend  # noqa: E402
from selfpara.result import Completion  # noqa: E402

PROMPTS = [
    "What is 2+2?",
    "What is the capital of France?",
    "Name three primary colours.",
    "Who wrote Romeo and Juliet?",
    "What is the boiling point of water in Celsius?",
    "Give a synonym for 'happy'.",
    "How many legs does a spider have?",
    "What planet is known as the Red Planet?",
    "What is the largest ocean on Earth?",
    "Translate 'thank you' into Spanish.",
]
MODEL = "local/smollm2"


async def sequential(prompts: list[str], max_tokens: int) -> tuple[float, list[Completion]]:
    backend, out = embedded_backend(), []
    started = time.perf_counter()
    for p in prompts:
        out.append(await backend.complete(MODEL, [{"role": "user", "content": p}], {"max_tokens": max_tokens}))
    return time.perf_counter() - started, out


async def batched(prompts: list[str], max_tokens: int) -> tuple[float, list[Completion]]:
    backend = embedded_backend()
    started = time.perf_counter()
    out = await asyncio.gather(
        *(backend.complete(MODEL, [{"role": "user", "content": p}], {"max_tokens": max_tokens}) for p in prompts)
    )
    return time.perf_counter() - started, list(out)


def summary(seconds: float, results: list[Completion]) -> dict[str, float]:
    tokens = sum(r.completion_tokens for r in results)
    return {"seconds": round(seconds, 3), "completion_tokens": tokens, "tokens_per_s": round(tokens / seconds, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=2, help="alternating sequential/batched rounds")
    parser.add_argument("--threads", default="", help="comma-separated torch thread counts to compare, e.g. 2,1")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "embedded.json")
    args = parser.parse_args()
    prompts = PROMPTS[: args.prompts]

    import torch
    import transformers

    backend = embedded_backend()
    started = time.perf_counter()
    backend.load(progress=lambda msg: print(f"  {msg}"))
    load_s = time.perf_counter() - started
    print(f"load: {load_s:.1f}s")
    asyncio.run(sequential(prompts[:1], 4))  # warm-up: first generate pays one-off costs

    threads = [int(t) for t in args.threads.split(",") if t] or [torch.get_num_threads()]
    runs = [run_threads(n, prompts, args.max_tokens, args.rounds) for n in threads]
    first = runs[0]
    report = {
        "model": MODEL,
        "prompts": len(prompts),
        "max_tokens": args.max_tokens,
        "load_seconds": round(load_s, 2),
        "torch_threads": first["torch_threads"],
        "sequential_tokens_per_s": first["sequential_tokens_per_s"],
        "batched_tokens_per_s": first["batched_tokens_per_s"],
        "batched_over_sequential": first["batched_over_sequential"],
        "runs": runs,
        "env": {
            "cpus": len(os.sched_getaffinity(0)),
            "load_average_1m": round(os.getloadavg()[0], 2),
            "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "python": platform.python_version(),
            "machine": platform.machine(),
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")


def run_threads(threads: int, prompts: list[str], max_tokens: int, n_rounds: int) -> dict:
    """Alternate sequential and batched rounds with `threads` torch threads."""
    import torch

    torch.set_num_threads(threads)
    backend = embedded_backend()
    load_avg = os.getloadavg()[0]
    rounds = []
    for i in range(n_rounds):
        calls_before = backend.stats.generate_calls
        seq = summary(*asyncio.run(sequential(prompts, max_tokens)))
        mid = backend.stats.generate_calls
        bat = summary(*asyncio.run(batched(prompts, max_tokens)))
        rounds.append(
            {
                "sequential": {**seq, "generate_calls": mid - calls_before},
                "batched": {**bat, "generate_calls": backend.stats.generate_calls - mid},
            }
        )
        print(f"threads {threads} round {i + 1}: sequential {seq['tokens_per_s']} tok/s ({seq['seconds']}s), "
              f"batched {bat['tokens_per_s']} tok/s ({bat['seconds']}s)")

    seq_tps = sum(r["sequential"]["tokens_per_s"] for r in rounds) / len(rounds)
    bat_tps = sum(r["batched"]["tokens_per_s"] for r in rounds) / len(rounds)
    print(f"threads {threads}: sequential {seq_tps:.1f} tok/s, batched {bat_tps:.1f} tok/s, ratio {bat_tps / seq_tps:.2f}x")
    return {
        "torch_threads": threads,
        "sequential_tokens_per_s": round(seq_tps, 2),
        "batched_tokens_per_s": round(bat_tps, 2),
        "batched_over_sequential": round(bat_tps / seq_tps, 2),
        "load_average_1m_before": round(load_avg, 2),
        "rounds": rounds,
    }


if __name__ == "__main__":
    main()
