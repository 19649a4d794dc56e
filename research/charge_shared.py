"""Charge the calls a run's answers shared with another arm, for runs recorded before the bench did it.

Until 2026-12-05 a call one arm made and another arm's answer reused (the greedy answer to a wording, the
same call in the raw arm, the selfpara arm's original and the oracle's voices) was charged 0 model-seconds
to the answer that reused it: raw looked free wherever the oracle had answered its wording first, and the
vote cheaper by its original. This copies a run, charging each shared call of the raw and selfpara arms
(there, the one shared call is the wording's greedy answer: raw's call) what such a call costs: the raw
record's own time where raw made it, else a least-squares fit of model-seconds on completion tokens over
the raw answers that made their call. Other arms are copied as they are.

    python research/charge_shared.py runs/held-comqa-100 runs/held-comqa-100-charged
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import numpy as np

from evaluation.rundir import SAMPLES_FILE, latest_records, read_samples


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--arms", default="raw,selfpara", help="arms whose one shared call is the wording's greedy answer")
    args = ap.parse_args()
    if args.out.exists():
        raise SystemExit(f"{args.out} exists")
    arms = {a.strip() for a in args.arms.split(",")}
    records = [r for r in latest_records(read_samples(args.run / SAMPLES_FILE)) if r.error is None]
    raw = {(r.item_id, r.variant_id): r for r in records if r.arm == "raw"}
    made = [r for r in raw.values() if r.shared_calls == 0 and r.model_s]
    x = np.array([[1.0, r.completion_tokens] for r in made])
    fit, *_ = np.linalg.lstsq(x, np.array([r.model_s for r in made]), rcond=None)

    def greedy_call_s(key: tuple[str, int]) -> float:
        r = raw[key]
        if r.shared_calls == 0 and r.model_s:
            return r.model_s
        return max(0.0, float(fit @ [1.0, r.completion_tokens]))

    args.out.mkdir(parents=True)
    for name in ("config.json", "items.jsonl"):
        shutil.copy(args.run / name, args.out / name)
    charged = 0
    with (args.out / SAMPLES_FILE).open("w", encoding="utf-8") as f:
        for r in records:
            key = (r.item_id, r.variant_id)
            if r.arm in arms and r.shared_calls == 1 and r.model_s is not None and key in raw:
                r = r.model_copy(update={"model_s": round(r.model_s + greedy_call_s(key), 4)})
                charged += 1
            f.write(r.model_dump_json() + "\n")
    print(
        f"{charged} answers charged their shared call; fit on {len(made)} raw calls: "
        f"{fit[0]:.2f} s + {fit[1]:.4f} s per completion token"
    )


if __name__ == "__main__":
    main()
