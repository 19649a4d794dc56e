"""Per voting arm of a run: how the vote shares fall and what the low_vote_share flag catches.

For each arm with recorded vote shares: answers, mean vote share, the share of answers with
a vote share of 1, answers flagged (vote share below the threshold, as `low_vote_share` flags
them, recomputed so that re-voted arms count too), how many flagged answers are wrong
(the flag's precision for wrong answers) and how many wrong answers it flags (recall).

    python research/flag_table.py runs/natural-final [--threshold 0.6]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from evaluation.rundir import SAMPLES_FILE, latest_records, read_samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--threshold", type=float, default=0.6)
    args = parser.parse_args()
    records = [r for r in latest_records(read_samples(args.run / SAMPLES_FILE)) if not r.error]
    arms = sorted({r.arm for r in records if "vote_share" in r.details})
    columns = ("answers", "mean share", "share 1", "flagged", "wrong", "precision", "recall")
    print(f"{'arm':24} " + " ".join(f"{c:>{max(7, len(c))}}" for c in columns))
    for arm in arms:
        rs = [r for r in records if r.arm == arm]
        shares = [float(r.details["vote_share"]) for r in rs]
        flagged = [r for r, s in zip(rs, shares, strict=True) if s < args.threshold]
        wrong = [r for r in rs if r.label != "correct"]
        hit = sum(1 for r in flagged if r.label != "correct")
        precision = f"{hit / len(flagged):.2f}" if flagged else "–"
        recall = f"{hit / len(wrong):.2f}" if wrong else "–"
        print(
            f"{arm:24} {len(rs):7d} {sum(shares) / len(rs):10.3f} {sum(s == 1.0 for s in shares) / len(rs):7.3f} "
            f"{len(flagged):7d} {len(wrong):7d} {precision:>9} {recall:>7}"
        )


if __name__ == "__main__":
    main()
