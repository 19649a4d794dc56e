"""How long the report's statistics take on a large run: the bootstrap and the whole metrics table.

A bench report computes every metric with a paired bootstrap; on a 1,000-question run it
must stay interactive. Two workloads, on random labels (seeded, so every run times the same
work), each timed REPEATS times (median and slowest reported):

- bootstrap: `evaluation.stats.bootstrap_ratios` of 16 ratios over 1,000 questions, 1,000 resamples;
- table: `evaluation.metrics.compute_metrics` of two groups of 1,000 questions with 3
  paraphrases each, 1,000 resamples (every metric, its interval and the paired comparison).

Budgets (what the unit tests used to assert): bootstrap 1 s, table 3 s; the figures say the
share of the budget each used, on this machine, in this run.

Run: python benchmarks/bench_metrics.py   (figures in benchmarks/results/metrics.json)
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import numpy as np
from _common import write

from evaluation import stats
from evaluation.metrics import LabelRow, compute_metrics

QUESTIONS = 1000
PARAPHRASES = 3
N_BOOT = 1000
REPEATS = 5
BUDGET_S = {"bootstrap": 1.0, "table": 3.0}


def bootstrap_work() -> Callable[[], object]:
    rng = np.random.default_rng(0)
    num = (rng.random((QUESTIONS, 16)) < 0.5).astype(float)
    den = np.ones_like(num)
    return lambda: stats.bootstrap_ratios(num, den, n_boot=N_BOOT, rng=np.random.default_rng(1))


def table_work() -> Callable[[], object]:
    rng = np.random.default_rng(0)
    rows: list[LabelRow] = []
    for i in range(QUESTIONS):
        original = "correct" if rng.random() < 0.5 else "incorrect"
        paras = ["correct" if rng.random() < 0.5 else "not_attempted" for _ in range(PARAPHRASES)]
        for group in ("a", "b"):
            rows.append(LabelRow(f"q{i}", "0", True, original, None, group))  # type: ignore[arg-type]
            rows += [
                LabelRow(f"q{i}", str(j + 1), False, label, None, group)  # type: ignore[arg-type]
                for j, label in enumerate(paras)
            ]
    return lambda: compute_metrics(rows, n_boot=N_BOOT)


def timed(work: Callable[[], object]) -> list[float]:
    work()  # warm-up: imports and first allocations are not the steady cost
    out = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        work()
        out.append(time.perf_counter() - started)
    return out


def main() -> None:
    figures: dict[str, object] = {"questions": QUESTIONS, "n_boot": N_BOOT, "repeats": REPEATS}
    for name, make in (("bootstrap", bootstrap_work), ("table", table_work)):
        seconds = timed(make())
        median = statistics.median(seconds)
        figures[name] = {
            "median_s": round(median, 4),
            "max_s": round(max(seconds), 4),
            "budget_s": BUDGET_S[name],
            "share_of_budget": round(median / BUDGET_S[name], 3),
        }
        print(
            f"{name:<10} median {median:.3f}s  slowest {max(seconds):.3f}s  "
            f"budget {BUDGET_S[name]:.1f}s ({100 * median / BUDGET_S[name]:.0f}% used)"
        )
    print(f"wrote {write('metrics', figures)}")


if __name__ == "__main__":
    main()
