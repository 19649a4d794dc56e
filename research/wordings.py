"""The quick-start question and ten other easy questions on the default model, as `selfpara ask` puts them
(k = 3, natural answers, the defaults otherwise): does the vote happen, and what does it cost?

For each question, side by side in one process (the model loaded once, no call cache, each pair
timed raw first then wrapped, so that neither finds the other's calls):
- raw: one answer call, the question alone;
- wrapped: `SelfParaphraser().aanswer` at the defaults: how many rewordings it kept and where they
  came from (renamings, forms), the answers voted, the vote share and flags, and its wall time.
- supply: `SelfParaphraser().paraphrase`, the rewordings the defaults make and keep for it when
  every one is wanted (adaptive k asks only for those its vote needs, so the wrapped answer
  itself may use fewer), untimed.
Prints a row per question, the share of questions whose supply is >= k - 1 rewordings, and the ratio
of the wrapped time to the raw time (median over questions, and the ratio of the sums).

The questions are those of easy.py, written down before any run of either.

    python research/wordings.py        (figures in research/results/wordings.json)
"""

from __future__ import annotations

import asyncio
import statistics
import time

from _results import write
from easy import QUESTIONS

from selfpara import SelfParaphraser
from selfpara.result import Usage

K = 3
MAX_TOKENS = 128


async def main() -> None:
    sp = SelfParaphraser(k=K, max_tokens=MAX_TOKENS, cache="off")
    await sp.client.complete(sp.config.model, [{"role": "user", "content": "Hi"}], usage=Usage(), max_tokens=1)  # load
    rows = []
    for question in QUESTIONS:
        started = time.perf_counter()
        await sp.client.complete(
            sp.config.model, [{"role": "user", "content": question}], usage=Usage(), max_tokens=MAX_TOKENS
        )
        raw_s = time.perf_counter() - started
        started = time.perf_counter()
        result = await sp.aanswer(question)
        wrapped_s = time.perf_counter() - started
        supply, _, _ = await sp.paraphrase(question)
        row = {
            "question": question,
            "supply": len(supply),
            "k_kept": result.k_kept,
            "sources": [v.source for v in result.variants[1:]],
            "answers_voted": result.n_voted,
            "vote_share": result.vote_share,
            "flags": list(result.flags),
            "calls": result.usage.calls,
            "raw_s": round(raw_s, 2),
            "wrapped_s": round(wrapped_s, 2),
        }
        rows.append(row)
        print(
            f"{question:60s} supply {row['supply']}/{K} kept {row['k_kept']} "
            f"voted {row['answers_voted']} share {row['vote_share']:.2f} "
            f"{row['calls']} calls  raw {raw_s:5.1f}s wrapped {wrapped_s:5.1f}s  {row['sources']} {row['flags']}"
        )
    kept = sum(r["supply"] >= K - 1 for r in rows)
    ratios = [r["wrapped_s"] / r["raw_s"] for r in rows]
    figures = {
        "k": K,
        "max_tokens": MAX_TOKENS,
        "questions": len(rows),
        "supply_at_least_k_minus_1": kept,
        "wrapped_over_raw_median": round(statistics.median(ratios), 2),
        "wrapped_over_raw_of_sums": round(sum(r["wrapped_s"] for r in rows) / sum(r["raw_s"] for r in rows), 2),
        "rows": rows,
    }
    print(f"supply >= {K - 1} rewordings: {kept} of {len(rows)}")
    print(
        f"wrapped / raw wall time: median {figures['wrapped_over_raw_median']}, "
        f"of the sums {figures['wrapped_over_raw_of_sums']}"
    )
    print("written to", write("wordings", figures))


if __name__ == "__main__":
    asyncio.run(main())
