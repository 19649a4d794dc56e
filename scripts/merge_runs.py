"""Merge bench runs over disjoint items (e.g. one process per CPU core) into one run directory.

    python scripts/merge_runs.py OUT RUN_DIR [RUN_DIR ...]

Every run must have the same arms and settings (config.json's `arms`); the first run's
config is kept, items and samples are concatenated. Score the result with `selfpara report OUT`.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from evaluation.rundir import ITEMS_FILE, SAMPLES_FILE, read_config


def arm_differences(first: list[dict], other: list[dict]) -> list[str]:
    """What differs between two runs' arms. A setting only one side records (a field a later
    version added, at its default) is not a difference: it cannot have changed the answers."""
    if [a["label"] for a in first] != [a["label"] for a in other]:
        return ["the arms differ"]
    problems = []
    for a, b in zip(first, other, strict=True):
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


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    merge(Path(sys.argv[1]), [Path(p) for p in sys.argv[2:]])
