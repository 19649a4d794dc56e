"""Merge bench runs over disjoint items (e.g. one process per CPU core, `bench --shard I/N`)
into one run directory, or bring one arm of another run over the same items beside the others.

    python scripts/merge_runs.py OUT RUN_DIR [RUN_DIR ...]
    python scripts/merge_runs.py --arm ARM --as LABEL OUT RUN_DIR OTHER_RUN_DIR

Merging: every run must have the same arms and settings (config.json's `arms`); the first
run's config is kept, items and samples are concatenated. Adding an arm: OUT is a copy of
RUN_DIR plus OTHER_RUN_DIR's arm ARM, renamed LABEL (e.g. the same arm under other code);
both runs must hold the same items and wordings. Score the result with `selfpara report OUT`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from evaluation.rundir import ITEMS_FILE, SAMPLES_FILE, read_config


def arm_differences(first: list[dict], other: list[dict]) -> list[str]:
    """What differs between two runs' arms. A setting only one side records (a field a later
    version added, at its default) is not a difference: it cannot have changed the answers."""
    mine, theirs = {a["label"]: a for a in first}, {a["label"]: a for a in other}
    if mine.keys() != theirs.keys():  # the order does not matter: a run may add an arm later (--arm)
        return [f"the arms differ: {', '.join(sorted(mine))} vs {', '.join(sorted(theirs))}"]
    problems = []
    for label, a in mine.items():
        b = theirs[label]
        for part in ("settings", "config"):
            x, y = a.get(part) or {}, b.get(part) or {}
            problems += [f"arm {a['label']}: {k} {x[k]!r} != {y[k]!r}" for k in x.keys() & y.keys() if x[k] != y[k]]
    return problems


def merge(out: Path, runs: list[Path]) -> None:
    configs = [read_config(r) for r in runs]
    for r, c in zip(runs[1:], configs[1:], strict=True):
        for problem in arm_differences(configs[0]["arms"], c["arms"]):
            raise SystemExit(f"{r}: {problem}; the runs cannot be merged")
    seen: set[str] = set()
    items: list[str] = []
    for r in runs:
        for line in (r / ITEMS_FILE).read_text(encoding="utf-8").splitlines():
            if line.strip() and (item_id := json.loads(line)["id"]) not in seen:
                seen.add(item_id)
                items.append(line)
    answered: dict[str, Path] = {}
    for r in runs:
        for line in (r / SAMPLES_FILE).read_text(encoding="utf-8").splitlines():
            if line.strip():
                owner = answered.setdefault(json.loads(line)["item_id"], r)
                if owner != r:
                    raise SystemExit(f"item {json.loads(line)['item_id']} was answered in {owner} and {r}")
    out.mkdir(parents=True)
    shutil.copy(runs[0] / "config.json", out / "config.json")
    (out / ITEMS_FILE).write_text("\n".join(items) + "\n", encoding="utf-8")
    with (out / SAMPLES_FILE).open("w", encoding="utf-8") as f:
        for r in runs:
            f.write((r / SAMPLES_FILE).read_text(encoding="utf-8"))
    (out / "merged_from.json").write_text(json.dumps([str(r) for r in runs], indent=2), encoding="utf-8")


def _items(run: Path) -> dict[str, list[str]]:
    return {
        (item := json.loads(line))["id"]: [v["question"] for v in item["variants"]]
        for line in (run / ITEMS_FILE).read_text(encoding="utf-8").splitlines()
        if line.strip()
    }


def add_arm(out: Path, run: Path, other: Path, arm: str, label: str) -> None:
    """Copy `run` to `out` and add `other`'s arm `arm` as arm `label`."""
    if _items(run) != _items(other):
        raise SystemExit(f"{run} and {other} hold different items or wordings; the arm cannot be compared")
    config, other_config = read_config(run), read_config(other)
    if any(a["label"] == label for a in config["arms"]):
        raise SystemExit(f"{run} already has an arm {label!r}")
    described = next((a for a in other_config["arms"] if a["label"] == arm), None)
    if described is None:
        raise SystemExit(f"{other} has no arm {arm!r}")
    added = []
    for line in (other / SAMPLES_FILE).read_text(encoding="utf-8").splitlines():
        if line.strip() and (record := json.loads(line))["arm"] == arm:
            added.append(json.dumps({**record, "arm": label}))
    out.mkdir(parents=True)
    shutil.copy(run / ITEMS_FILE, out / ITEMS_FILE)
    config["arms"].append({**described, "label": label, "from_run": str(other)})
    (out / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    text = (run / SAMPLES_FILE).read_text(encoding="utf-8")
    (out / SAMPLES_FILE).write_text(text + "".join(line + "\n" for line in added), encoding="utf-8")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("runs", type=Path, nargs="+")
    parser.add_argument("--arm", help="add this arm of the second run to a copy of the first")
    parser.add_argument("--as", dest="label", help="the added arm's name in OUT")
    args = parser.parse_args(argv)
    if args.arm is None:
        merge(args.out, args.runs)
    elif args.label is None or len(args.runs) != 2:
        parser.error("--arm takes --as LABEL and exactly two runs: RUN_DIR OTHER_RUN_DIR")
    else:
        add_arm(args.out, args.runs[0], args.runs[1], args.arm, args.label)


if __name__ == "__main__":
    main(sys.argv[1:])
