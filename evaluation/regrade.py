"""Grade a recorded run again with today's graders, with no model call.

Labels are written when a sample is answered, so a grader fixed later (or a re-vote, which
grades the answers it changes with the grader of the moment) would leave a run graded two
ways. `regrade_run` copies the run and grades every sample's answer again with the run's
grader, so every arm is scored by one grader; `selfpara report` on the copy shows the result.

    python -m evaluation.regrade runs/natural-held50 runs/natural-held50-regraded
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
from collections import Counter
from pathlib import Path

from evaluation.datasets.items import load_items
from evaluation.graders import grader_for
from evaluation.rundir import ITEMS_FILE, SAMPLES_FILE, latest_records, load_bench_config, read_samples
from selfpara.errors import ConfigError


async def regrade_run(run_dir: str | Path, out: str | Path) -> Counter[tuple[str, str]]:
    """Copy `run_dir` to `out` with every sample graded again; returns (old label, new label) counts.

    Args:
        run_dir: a bench run directory (config.json, items.jsonl, samples.jsonl).
        out: where the regraded copy goes; must not exist.
    """
    src, dst = Path(run_dir), Path(out)
    if dst.exists():
        raise ConfigError(f"{dst} exists; choose a new directory for the regraded run")
    grader_name = load_bench_config(src).grader
    items = {item.id: item for item in load_items(src / ITEMS_FILE)}
    records = latest_records(read_samples(src / SAMPLES_FILE))
    moves: Counter[tuple[str, str]] = Counter()
    regraded = []
    for r in records:
        item = items[r.item_id]
        label = r.label if r.error else await grader_for(item.kind, grader_name).grade(item, r.answer)
        moves[(r.label, label)] += 1
        regraded.append(r.model_copy(update={"label": label}))
    shutil.copytree(src, dst)
    (dst / SAMPLES_FILE).write_text("".join(r.model_dump_json() + "\n" for r in regraded), encoding="utf-8")
    return moves


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    moves = asyncio.run(regrade_run(args.run, args.out))
    for (before, after), n in sorted(moves.items()):
        print(f"{before:>14} -> {after:<14} {n}")


if __name__ == "__main__":
    main()
