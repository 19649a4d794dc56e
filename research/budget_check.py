"""What doubt first with the vote budget did, live, beside raw and the always-on vote (issue 43).

On a run with a raw arm, a gated selfpara arm (doubt first and `vote_budget` in force) and an arm that voted on
every question, over the wordings all three answered: what doubt first did with each answer (voted, sure,
held back by the budget), calls, tokens and model-seconds per answer relative to raw's, A_orig and A_strict,
the raw-right answers lost, and the gated arm's A_strict minus the always-on arm's with a paired bootstrap CI
over questions.

    python research/budget_check.py runs/held2-nq-150 --gated selfpara --always "selfpara[sure_probability=off]"
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from evaluation.records import SampleRecord
from evaluation.rundir import SAMPLES_FILE, latest_records, read_samples
from evaluation.stats import paired_bootstrap, percentile_interval

BOOTSTRAP = 2000


def outcome(record: SampleRecord) -> str:
    """voted, sure or over_budget, read from the record's evidence (as the proxy's selfpara_votes_total counts)."""
    doubt = (record.details.get("evidence") or {}).get("doubt") or {}
    if doubt.get("voted", True):
        return "voted"
    return "over_budget" if doubt.get("budget") is not None else "sure"


def strict(records: dict[tuple[str, int], SampleRecord]) -> dict[str, bool]:
    """Per question: right under every wording."""
    by_item: dict[str, list[bool]] = defaultdict(list)
    for (item, _), r in records.items():
        by_item[item].append(r.label == "correct")
    return {item: all(v) for item, v in by_item.items()}


def paired_interval(a: dict[str, bool], b: dict[str, bool], seed: int = 0) -> tuple[float, float, float]:
    """Mean of a − b over the questions both hold, with a 95% paired bootstrap interval over questions."""
    ids = sorted(set(a) & set(b))
    num_a, num_b = (np.array([[float(x[i])] for i in ids]) for x in (a, b))
    ones = np.ones_like(num_a)
    point, reps = paired_bootstrap(num_a, ones, num_b, ones, n_boot=BOOTSTRAP, rng=np.random.default_rng(seed))
    lo, hi = percentile_interval(reps)
    return float(point[0]), float(lo[0]), float(hi[0])


def _ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}x" if base > 0 else "(no model-seconds recorded)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("--gated", default="selfpara")
    ap.add_argument("--always", default="selfpara[sure_probability=off]")
    args = ap.parse_args()
    arms = {"raw": "raw", "gated": args.gated, "always": args.always}
    by_arm: dict[str, dict[tuple[str, int], SampleRecord]] = {name: {} for name in arms}
    for r in latest_records(read_samples(args.run / SAMPLES_FILE)):
        for name, label in arms.items():
            if r.arm == label and r.error is None:
                by_arm[name][(r.item_id, r.variant_id)] = r
    keys = sorted(set.intersection(*(set(v) for v in by_arm.values())))
    runs = {name: {k: by_arm[name][k] for k in keys} for name in arms}
    raw = runs["raw"]
    print(f"{len(keys)} wordings of {len({k[0] for k in keys})} questions answered by all three arms")
    outcomes = Counter(outcome(r) for r in runs["gated"].values())
    print("doubt first: " + ", ".join(f"{o} {n} ({n / len(keys):.1%})" for o, n in sorted(outcomes.items())))
    base = {f: sum(float(getattr(r, f) or 0) for r in raw.values()) for f in ("calls", "model_s")}
    for name, records in runs.items():
        calls = sum(r.calls for r in records.values())
        model_s = sum(float(r.model_s or 0) for r in records.values())
        tokens = sum(r.prompt_tokens + r.completion_tokens for r in records.values())
        originals = [r.label == "correct" for (_, v), r in records.items() if v == 0]
        right_strict = strict(records)
        lost = sum(raw[k].label == "correct" and r.label != "correct" for k, r in records.items())
        gained = sum(raw[k].label != "correct" and r.label == "correct" for k, r in records.items())
        print(
            f"{name:7s} calls/answer {calls / len(keys):.2f} ({calls / base['calls']:.2f}x raw)  "
            f"model-s {_ratio(model_s, base['model_s'])} raw  tokens/answer {tokens / len(keys):.0f}  "
            f"A_orig {sum(originals) / len(originals):.3f}  "
            f"A_strict {sum(right_strict.values()) / len(right_strict):.3f}  "
            f"gained {gained} lost {lost} of {sum(r.label == 'correct' for r in raw.values())} raw-right"
        )
    d, lo, hi = paired_interval(strict(runs["gated"]), strict(runs["always"]))
    print(f"A_strict gated - always: {d:+.3f} [{lo:+.3f}, {hi:+.3f}]")


if __name__ == "__main__":
    main()
