"""Adaptive k against fixed k, re-derived from a recorded run of the selfpara arm (no model runs).

    python benchmarks/bench_adaptive.py RUN_DIR [--arm selfpara]

Each selfpara sample of the run records every answer in order with its cluster; adaptive
k's stages are replayed on them (`evaluation.adaptive_replay`), with the default stages
(the fewest answers that could settle the vote) and with two stages (the first, then
every remaining paraphrase at once: fewer rounds, more calls). Printed and written to
benchmarks/results/adaptive.json: calls per answer fixed vs adaptive (paraphrase + answer
calls, and every upstream call), A_exp / A_strict of both with fixed k's 95% CI, and the
samples that could not be replayed, with why.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import write  # noqa: E402

from evaluation.adaptive_replay import Policy, replay_run  # noqa: E402
from selfpara.config import MAX_K  # noqa: E402

POLICIES = [Policy("default stages"), Policy("two stages", step=MAX_K)]


def show(report: dict) -> None:
    print(
        f"run {report['run_dir']} arm {report['arm']}: {report['complete_items']} complete items, "
        f"{report['samples_of_complete_items']} samples"
    )
    for reason, count in report["left_out"].items():
        print(f"  not replayable: {count} sample(s): {reason}")
    for p in report["policies"]:
        pa, every = p["paraphrase_and_answer_calls"], p["all_upstream_calls"]
        print(f"{p['policy']['name']} over {p['samples']} samples:")
        print(
            f"  paraphrase + answer calls per answer: fixed {pa['fixed']:.2f}  adaptive {pa['adaptive']:.2f}  "
            f"({pa['reduction']:.0%} fewer)"
        )
        print(
            f"  every upstream call per answer:       fixed {every['fixed']:.2f}  adaptive {every['adaptive']:.2f}  "
            f"({every['reduction']:.0%} fewer)"
        )
        print(
            f"  settled after the first stage: {p['stopped_after_first_stage']}; extra rounds: {p['extra_rounds']}; "
            f"answers changed {p['answers_changed']}, labels changed {p['labels_changed']}"
        )
        for metric, m in p["metrics"].items():
            lo, hi = m["fixed_ci"]
            ci = "" if lo is None else f" [{lo:.3f}, {hi:.3f}]"
            inside = m["inside_fixed_ci"]
            print(f"  {metric:8s} fixed {m['fixed']:.3f}{ci}  adaptive {m['adaptive']:.3f}  inside CI: {inside}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--arm", default="selfpara", help="label of the selfpara arm in the run")
    parser.add_argument("--name", default="adaptive", help="results file name (benchmarks/results/NAME.json)")
    args = parser.parse_args()
    report = (replay_run(args.run_dir, POLICIES, arm=args.arm)).to_dict()
    show(report)
    print("written to", write(args.name, report))


if __name__ == "__main__":
    main()
