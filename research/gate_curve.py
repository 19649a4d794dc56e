"""The cost-gain curve of doubt first (issue 43) on runs whose selfpara arm voted on every question.

`evaluation.gate.gate_point` replays the gate at each threshold (a sure original keeps the raw arm's answer
and cost, the others the vote's) over the runs given together; this prints the curve.

    python research/gate_curve.py runs/dev-comqa runs/dev-nq --arm selfpara
"""

from __future__ import annotations

import argparse
from pathlib import Path

from evaluation.gate import gate_point, pairs_of
from evaluation.rundir import SAMPLES_FILE, latest_records, read_samples

THRESHOLDS = (None, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.55, 0.5, 0.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--arm", default="selfpara")
    args = ap.parse_args()
    pairs = {}
    for run in args.runs:
        for key, pair in pairs_of(latest_records(read_samples(run / SAMPLES_FILE)), args.arm).items():
            pairs[(f"{run.name}/{key[0]}", key[1])] = pair
    print(f"{len(pairs)} wordings; cost = model-seconds per answer / raw's")
    print("threshold  voted  A_orig  A_strict  gained  lost  calls  cost")
    for t in THRESHOLDS:
        p = gate_point(pairs, t)
        strict = "   -" if p.a_strict is None else f"{p.a_strict:.3f}"
        name = "always" if t is None else "never" if t == 0.0 else f">= {t:.2f}"
        print(
            f"{name:9s}  {p.voted:5.2f}  {p.a_orig:6.3f}  {strict:>8s}  {p.gained:6d}  {p.lost:4d}  "
            f"{p.calls:5.2f}  {p.cost:5.2f}"
        )


if __name__ == "__main__":
    main()
