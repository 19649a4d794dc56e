"""Wall time of doubt first, side by side in one process: raw, the wrapped default (doubt first), and the
wrapped answer that votes on every question, one request at a time on the default model.

Questions: the first N of NQ-open's development split (data/public/nq-open/dev.jsonl, a distribution
nobody chose for the method). For each question, in one process with the model loaded once and no call
cache, timed in turn: raw (one answer call, the question alone), wrapped at the defaults (`sure_probability`
as `SelfParaphraser()` has it), wrapped voting always (`sure_probability="off"`). Prints one row per
question and the medians of wrapped / raw: over the answers the gate found sure, and over all answers;
and the calls per answer of each. Before each timed arm one short unrelated call runs untimed: llama.cpp
reuses the evaluated prefix of the previous prompt, so an arm that followed another with the same question
would skip its prompt and look faster than it is (the first version of this script timed sure answers
below raw for that reason).

    python benchmarks/bench_doubt.py [--questions 20]       (figures in benchmarks/results/doubt.json)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import write  # noqa: E402

from selfpara import SelfParaphraser  # noqa: E402
from selfpara.result import Usage  # noqa: E402

MAX_TOKENS = 128
DEV = Path(__file__).resolve().parents[1] / "data" / "public" / "nq-open" / "dev.jsonl"


def questions(n: int) -> list[str]:
    rows = [json.loads(line) for line in DEV.read_text().splitlines() if line.strip()]
    return [(r["question"][:1].upper() + r["question"][1:]).rstrip("?") + "?" for r in rows[:n]]


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=20)
    args = ap.parse_args()
    gated = SelfParaphraser(max_tokens=MAX_TOKENS, cache="off")
    always = SelfParaphraser(max_tokens=MAX_TOKENS, cache="off", sure_probability="off")
    model = gated.config.model

    async def cold() -> None:
        await gated.client.complete(model, [{"role": "user", "content": "Hi"}], usage=Usage(), max_tokens=1)

    await cold()  # loads the model
    rows = []
    for question in questions(args.questions):
        await cold()
        started = time.perf_counter()
        await gated.client.complete(
            model, [{"role": "user", "content": question}], usage=Usage(), max_tokens=MAX_TOKENS
        )
        raw_s = time.perf_counter() - started
        await cold()
        started = time.perf_counter()
        g = await gated.aanswer(question)
        gated_s = time.perf_counter() - started
        await cold()
        started = time.perf_counter()
        a = await always.aanswer(question)
        always_s = time.perf_counter() - started
        row = {
            "question": question,
            "sure": not g.doubt.voted,
            "doubt": g.doubt.reason,
            "raw_s": round(raw_s, 2),
            "gated_s": round(gated_s, 2),
            "always_s": round(always_s, 2),
            "gated_calls": g.usage.calls,
            "always_calls": a.usage.calls,
        }
        rows.append(row)
        print(
            f"{question[:55]:55s} raw {raw_s:5.1f}s  gated {gated_s:5.1f}s ({g.usage.calls} calls)  "
            f"always {always_s:5.1f}s ({a.usage.calls} calls)  {g.doubt.reason}"
        )

    def median(key: str, subset: list[dict]) -> float | None:
        return round(statistics.median(r[key] / r["raw_s"] for r in subset), 2) if subset else None

    sure = [r for r in rows if r["sure"]]
    figures = {
        "sure_probability": gated.config.sure_threshold,
        "questions": len(rows),
        "sure": len(sure),
        "gated_over_raw_median_sure": median("gated_s", sure),
        "gated_over_raw_median_all": median("gated_s", rows),
        "always_over_raw_median_all": median("always_s", rows),
        "gated_calls_per_answer": round(statistics.fmean(r["gated_calls"] for r in rows), 2),
        "always_calls_per_answer": round(statistics.fmean(r["always_calls"] for r in rows), 2),
        "rows": rows,
    }
    f = figures
    print(f"sure {len(sure)} of {len(rows)}; wrapped / raw wall time, median:")
    print(f"  sure answers {f['gated_over_raw_median_sure']}, all {f['gated_over_raw_median_all']}")
    print(f"  always voting: all {f['always_over_raw_median_all']}")
    print(f"calls per answer {f['gated_calls_per_answer']} (always voting {f['always_calls_per_answer']})")
    print("written to", write("doubt", figures))


if __name__ == "__main__":
    asyncio.run(main())
