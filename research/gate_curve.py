"""The cost-gain curve of doubt first (issue 43), from runs whose selfpara arm voted on every question.

For each threshold the gate is replayed as `evaluation.revote` replays it (`evaluation.revote.sure`): a
wording whose original answer is sure keeps the raw arm's answer and cost, the others the vote's. Prints,
per threshold: the share of wordings voted, A_orig and A_strict (where items have several wordings),
wordings changed against raw (wrong -> right, right -> wrong), and calls, tokens and model-seconds per
answer relative to raw's.

    python research/gate_curve.py runs/dev-comqa runs/dev-nq --arm 'selfpara[k=4;adaptive=false]'
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

from evaluation.revote import sure
from evaluation.rundir import SAMPLES_FILE, latest_records, read_samples

THRESHOLDS = (None, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.01)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--arm", required=True)
    args = ap.parse_args()
    raw, voted = {}, {}
    for run in args.runs:
        for r in latest_records(read_samples(run / SAMPLES_FILE)):
            key = (run.name, r.item_id, r.variant_id)
            if r.arm == "raw":
                raw[key] = r
            elif r.arm == args.arm:
                voted[key] = r
    keys = sorted(k for k in voted if k in raw and not voted[k].error and not raw[k].error)
    base = {f: sum(getattr(raw[k], f) or 0 for k in keys) for f in ("calls", "completion_tokens", "model_s")}
    print(
        f"{len(keys)} wordings with both arms; raw per answer: calls {base['calls'] / len(keys):.2f}, "
        f"completion tokens {base['completion_tokens'] / len(keys):.1f}, model-s {base['model_s'] / len(keys):.2f}"
    )
    print("threshold  voted  A_orig  A_strict  w->r  r->w  calls  tokens  model-s   (x raw)")
    for t in THRESHOLDS:
        chosen = {k: (raw[k] if t is not None and sure(voted[k], t) else voted[k]) for k in keys}
        if t == 1.01:  # never vote: raw itself
            chosen = {k: raw[k] for k in keys}
        right = {k: chosen[k].label == "correct" for k in keys}
        was = {k: raw[k].label == "correct" for k in keys}
        originals = [right[k] for k in keys if k[2] == 0]
        by_item: dict[tuple[str, str], list[bool]] = defaultdict(list)
        for k in keys:
            by_item[k[:2]].append(right[k])
        multi = [all(v) for v in by_item.values() if len(v) > 1]
        n_voted = sum(1 for k in keys if chosen[k] is voted[k] and t != 1.01)
        cost = {f: sum(getattr(chosen[k], f) or 0 for k in keys) / max(base[f], 1e-9) for f in base}
        label = "always" if t is None else ("never" if t == 1.01 else f">= {t:.2f}")
        print(
            f"{label:9s}  {n_voted / len(keys):5.2f}  {sum(originals) / len(originals):6.3f}  "
            f"{(sum(multi) / len(multi)) if multi else float('nan'):8.3f}  "
            f"{sum(right[k] and not was[k] for k in keys):4d}  {sum(was[k] and not right[k] for k in keys):4d}  "
            f"{cost['calls']:5.2f}  {cost['completion_tokens']:6.2f}  {cost['model_s']:7.2f}"
        )


if __name__ == "__main__":
    main()
