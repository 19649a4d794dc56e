"""The llama.cpp engine with one slot against batched decoding, side by side.

In one process, per model (SmolLM2 and the default Qwen, when installed), two engines on
the same GGUF: `parallel=1` (one request at a time) and `parallel=8` (batched). Until issue
44 `parallel=1` was a separate decoding path (the queue), and benchmarks/results/batch.json
records it so; now it is one slot of the batched decoder. For 1, 2, 4 and 8
concurrent greedy calls (max_tokens 48, the two engines alternating): aggregate generated
tokens per second, mean per-call latency, and how many answers are identical.

Then, on the default model with each engine: a raw answer, the paraphrase call alone (after
another, so a kept prefix shows) and a whole wrapped answer at k = 3 for three easy questions,
each as a ratio of the raw answer's time (medians).

Prints the figures and writes benchmarks/results/batch.json.

    python benchmarks/bench_batch.py [--models smollm2,qwen2.5-coder-1.5b] [--sizes 1,2,4,8] [--skip-ask]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from _common import write

PROMPTS = [
    "Explain why the sky is blue.",
    "Write a short story about a cat.",
    "What causes tides on Earth?",
    "Describe how a bicycle works.",
    "Why do leaves change colour in autumn?",
    "How does a refrigerator keep food cold?",
    "What is photosynthesis?",
    "Explain how vaccines train the immune system.",
]
QUESTIONS = ["What is the capital of France?", "What is the capital of Italy?", "What is 2+2?"]
"""The README's question and the two easy ones the engine issue timed."""


async def _round(engine: Any, model: str, prompts: list[str], max_tokens: int) -> tuple[float, list[Any]]:
    """Wall seconds of all `prompts` at once, and per call (completion, seconds from start to its end)."""
    started = time.perf_counter()

    async def one(prompt: str) -> tuple[Any, float]:
        result = await engine.complete(model, [{"role": "user", "content": prompt}], {"max_tokens": max_tokens})
        return result, time.perf_counter() - started

    results = await asyncio.gather(*(one(p) for p in prompts))
    return time.perf_counter() - started, results


def throughput(model: str, sizes: list[int], max_tokens: int) -> dict[str, Any]:
    """Aggregate tokens/s and latency of n concurrent calls on one slot and on batched decoding."""
    from selfpara.models.engines.embedded import resolve
    from selfpara.models.engines.llamacpp import LlamaCppModel

    spec = resolve(model)
    engines = {"single": LlamaCppModel(spec, parallel=1), "batched": LlamaCppModel(spec, parallel=max(sizes))}
    for engine in engines.values():
        engine.load()
        # Warm-up at the largest size: the first batched step of a size pays one-off costs
        # (measured: 9.4 tokens/s in a cold round of 4 against 12.2 in the next).
        asyncio.run(_round(engine, model, PROMPTS[: max(sizes)], 8))
    figures: dict[str, Any] = {"threads": engines["single"].threads}
    for n in sizes:
        prompts = PROMPTS[:n]
        row: dict[str, Any] = {}
        texts = {}
        for name, engine in engines.items():
            seconds, timed = asyncio.run(_round(engine, model, prompts, max_tokens))
            tokens = sum(r.completion_tokens for r, _ in timed)
            row[name] = {
                "seconds": round(seconds, 2),
                "tokens": tokens,
                "tokens_per_s": round(tokens / seconds, 2),
                "mean_latency_s": round(sum(s for _, s in timed) / n, 2),
            }
            texts[name] = [r.text for r, _ in timed]
        row["speedup"] = round(row["batched"]["tokens_per_s"] / row["single"]["tokens_per_s"], 2)
        row["identical_answers"] = f"{sum(a == b for a, b in zip(texts['single'], texts['batched'], strict=True))}/{n}"
        figures[str(n)] = row
        print(f"{model} n={n}: single {row['single']['tokens_per_s']} tok/s, batched {row['batched']['tokens_per_s']}"
              f" tok/s ({row['speedup']}x), identical {row['identical_answers']}", flush=True)  # fmt: skip
    for engine in engines.values():
        engine.close()
    return figures


def wrapped_against_raw(model: str, parallel: int) -> dict[str, Any]:
    """Raw answer, paraphrase call and wrapped answer at k=3 on one engine, per question and as median ratios."""
    import statistics

    from selfpara import SelfParaphraser
    from selfpara.models.client import ModelClient
    from selfpara.models.engines.embedded import resolve
    from selfpara.models.engines.llamacpp import LlamaCppModel

    engine = LlamaCppModel(resolve(model), parallel=parallel)
    engine.load()
    client = ModelClient(backend=engine)  # type: ignore[arg-type]
    sp = SelfParaphraser(client=client, model=model, k=3, max_tokens=48, cache="off")
    asyncio.run(_round(engine, model, ["Hi"], 4))
    sp.answer("What is the capital of Spain?")  # the paraphrase prompt's prefix is now cached
    rows = []
    for question in QUESTIONS:
        started = time.perf_counter()
        asyncio.run(client.complete(model, [{"role": "user", "content": question}], max_tokens=48))
        raw_s = time.perf_counter() - started
        result = sp.answer(question)
        rows.append(
            {
                "question": question,
                "raw_s": round(raw_s, 2),
                "wrapped_s": round(result.timings.total_s, 2),
                "paraphrase_s": round(result.timings.paraphrase_s, 2),
                "k_kept": result.k_kept,
                "calls": result.usage.calls,
                "answer": result.answer,
            }
        )
    engine.close()
    return {
        "questions": rows,
        "wrapped_over_raw": round(statistics.median(r["wrapped_s"] / r["raw_s"] for r in rows), 2),
        "paraphrase_over_raw": round(statistics.median(r["paraphrase_s"] / r["raw_s"] for r in rows), 2),
        "mean_k_kept": round(sum(r["k_kept"] for r in rows) / len(rows), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="smollm2,qwen2.5-coder-1.5b")
    parser.add_argument("--sizes", default="1,2,4,8")
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--skip-ask", action="store_true")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    figures: dict[str, Any] = {"load_average": os.getloadavg()[0], "cores": len(os.sched_getaffinity(0))}
    for name in args.models.split(","):
        figures[name] = throughput(f"local/{name}", sizes, args.max_tokens)
    if not args.skip_ask:
        model = f"local/{args.models.split(',')[-1]}"
        figures["ask"] = {"single": wrapped_against_raw(model, 1), "batched": wrapped_against_raw(model, 4)}
        for name, row in figures["ask"].items():
            print(
                f"ask on {model}, {name} (median of {len(row['questions'])}): paraphrase call "
                f"{row['paraphrase_over_raw']}x a raw answer, wrapped {row['wrapped_over_raw']}x, "
                f"{row['mean_k_kept']} paraphrases kept"
            )
    figures["load_average_after"] = os.getloadavg()[0]
    print(f"wrote {write('batch', figures)}")


if __name__ == "__main__":
    main()
