"""What evaluating every prompt alike costs: the same prompt asked again, side by side.

So that seeded samples reproduce, the engine evaluates every prompt the same way: all but
its last token in batches from an aligned start, then the last alone; the same prompt asked
again keeps all but its last token (docs/models.md). This times N repeats of one ~300-token
prompt (the size of the paraphrase call's) and of one ~40-token answer prompt on the default
model, with the engine's preparation and with llama-cpp-python's own longest-prefix reuse,
alternating the two so that machine noise falls on both.

Run: python benchmarks/bench_prefix.py [--model local/qwen2.5-coder-1.5b] [--n 4]
     (figures in benchmarks/results/prefix.json)
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from _common import write

import selfpara.models.engines.llamacpp as engine
from selfpara.models.client import ModelClient

LONG = "Rewrite the question below in three different ways, one per line. " + " ".join(
    ["Keep every number, name and qualifier; change the wording, the order of clauses and the voice."] * 14
)
SHORT = "What is the capital of France?"


async def timed(client: ModelClient, model: str, text: str) -> float:
    started = time.perf_counter()
    await client.complete(model, [{"role": "user", "content": text}], max_tokens=8, temperature=0.0)
    return time.perf_counter() - started


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local/qwen2.5-coder-1.5b")
    parser.add_argument("--n", type=int, default=4)
    args = parser.parse_args()
    aligned = engine._prepare_prompt
    client = ModelClient()
    await timed(client, args.model, SHORT)  # load
    figures: dict[str, dict[str, list[float]]] = {}
    for name, text in (("prompt ~300 tokens", LONG), ("prompt ~40 tokens", SHORT)):
        runs: dict[str, list[float]] = {"aligned (now)": [], "longest prefix (before)": []}
        for _ in range(args.n):
            for label in runs:
                engine._prepare_prompt = aligned if label.startswith("aligned") else (lambda *args: None)
                await timed(client, args.model, text)  # the prompt is now cached
                runs[label].append(await timed(client, args.model, text))
        engine._prepare_prompt = aligned
        figures[name] = runs
        a, b = (statistics.median(v) for v in runs.values())
        print(f"{name}: same prompt again, median s: aligned {a:.2f}, longest prefix {b:.2f}, ratio {a / b:.2f}x")
    print("written to", write("prefix", {"model": args.model, "n": args.n, "seconds": figures}))


if __name__ == "__main__":
    asyncio.run(main())
