"""How well the confidence an answer comes back with ranks right answers, with and without doubt first (issue 43).

On runs with a raw arm and a selfpara arm that voted on every question: per wording, the raw answer's token
probability (raw's own confidence, one call), the always-voting answer's confidence, and the confidence the
gated answer would return at `--threshold` (a sure original: its one-answer confidence, (1+1)/(1+2) x p; the
others the vote's). AUROC with a bootstrap CI over questions, and accuracy at 80% coverage.

    python research/gated_confidence.py runs/dev-nq runs/dev-comqa --arm selfpara --threshold 0.55
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from evaluation.arms.evidence import recorded_confidence
from evaluation.gate import pairs_of
from evaluation.metrics.signals import accuracy_at_coverage, auroc, auroc_interval
from evaluation.revote import sure
from evaluation.rundir import SAMPLES_FILE, latest_records, read_samples
from selfpara.pipeline.confidence import answer_confidence


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--arm", default="selfpara")
    ap.add_argument("--threshold", type=float, default=0.55)
    args = ap.parse_args()
    rows = []
    for run in args.runs:
        for (item, _variant), (raw, voted) in pairs_of(
            latest_records(read_samples(run / SAMPLES_FILE)), args.arm
        ).items():
            original = next(a for a in voted.details["evidence"]["answers"] if a["variant"] == 0)
            p = math.exp(min(0.0, original.get("logprob") or 0.0))
            always = recorded_confidence(voted.details) or 0.0
            gated_sure = sure(voted, args.threshold)
            gated = answer_confidence(1, 1, original.get("logprob")) if gated_sure else always
            right_gated = (raw if gated_sure else voted).label == "correct"
            rows.append(
                (f"{run.name}/{item}", p, raw.label == "correct", always, voted.label == "correct", gated, right_gated)
            )
    ids = [r[0] for r in rows]
    for name, score, right in (
        ("raw: token probability", 1, 2),
        ("always voting", 3, 4),
        (f"doubt first at {args.threshold}", 5, 6),
    ):
        s, c = [r[score] for r in rows], [r[right] for r in rows]
        lo, hi = auroc_interval(s, c, ids)
        a = auroc(s, c)
        acc = accuracy_at_coverage(s, c, 0.8)
        print(
            f"{name:28s} AUROC {a:.3f} [{lo:.3f}, {hi:.3f}]  accuracy {sum(c) / len(c):.3f}, at 80% coverage {acc:.3f}"
        )
    print(f"{len(rows)} wordings")


if __name__ == "__main__":
    main()
