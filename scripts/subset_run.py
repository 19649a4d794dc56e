"""Copy a bench run keeping only the items that every named arm answered in every wording.

A run stopped before its end (for time) holds some items answered by all arms and some by
only the first ones; reports compare arms over the questions each answered, so a paired
comparison needs the items complete in every arm compared. This writes such a copy, and the
items it kept as an items file that another run can take (`--dataset ITEMS.jsonl`).

    python scripts/subset_run.py runs/natural-held50 runs/natural-done --arms raw,selfpara \\
        --items docs/results/qwen-natural-held50-done.items.jsonl
    python scripts/subset_run.py runs/held-comqa runs/held-comqa-100 --arms raw,selfpara,oracle --first 100
"""

from __future__ import annotations

import argparse
import json
import shutil
from collections import defaultdict
from pathlib import Path

from evaluation.datasets.items import load_items
from evaluation.rundir import ITEMS_FILE, SAMPLES_FILE, latest_records, read_samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--arms", required=True, help="comma-separated arms that must be complete")
    parser.add_argument("--items", type=Path, help="also write the kept items here (JSONL)")
    parser.add_argument(
        "--first",
        type=int,
        help="keep the run's first N items (its order: a seeded split's prefix), every one of which must be "
        "complete in every named arm",
    )
    args = parser.parse_args()
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    if args.out.exists():
        raise SystemExit(f"{args.out} exists")
    items = load_items(args.run / ITEMS_FILE)
    records = [r for r in latest_records(read_samples(args.run / SAMPLES_FILE)) if not r.error]
    answered: dict[tuple[str, str], set[int]] = defaultdict(set)
    for r in records:
        answered[(r.item_id, r.arm)].add(r.variant_id)
    complete = [i for i in items if all(answered[(i.id, a)] >= {v.id for v in i.variants} for a in arms)]
    kept = complete
    if args.first is not None:
        kept = items[: args.first]
        missing = [i.id for i in kept if i not in complete]
        if missing:
            raise SystemExit(f"{len(missing)} of the first {args.first} items are not complete yet: {missing[:5]}")
    ids = {i.id for i in kept}
    args.out.mkdir(parents=True)
    shutil.copy(args.run / "config.json", args.out / "config.json")
    lines = [json.dumps(i.model_dump(mode="json"), ensure_ascii=False) + "\n" for i in kept]
    (args.out / ITEMS_FILE).write_text("".join(lines), encoding="utf-8")
    if args.items:
        args.items.write_text("".join(lines), encoding="utf-8")
    samples = [r.model_dump_json() + "\n" for r in read_samples(args.run / SAMPLES_FILE) if r.item_id in ids]
    (args.out / SAMPLES_FILE).write_text("".join(samples), encoding="utf-8")
    print(f"kept {len(kept)} of {len(items)} items ({', '.join(arms)} complete), {len(samples)} samples")


if __name__ == "__main__":
    main()
