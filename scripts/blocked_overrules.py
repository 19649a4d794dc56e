"""The overrules the independence guard held back in a run: for each selfpara sample whose original was
kept because "every wording it holds came from the paraphrase call", grade the challenger's answer
with the run's grader and say whether letting it win would have made the sample right or wrong.

    python scripts/blocked_overrules.py RUN_DIR [--arm selfpara]

Reads the recorded answers and clusters only (no model call). Prints one line per such sample,
the counts (right → wrong, wrong → right, unchanged labels), and the arm's A_strict (right under
every wording) as run and as it would have been with those overrules let through.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluation.graders import grader_for  # noqa: E402
from evaluation.records import Item  # noqa: E402

BLOCKED = "came from the paraphrase call"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--arm", default="selfpara")
    args = parser.parse_args()
    items = {
        (item := Item.model_validate_json(line)).id: item
        for line in (args.run / "items.jsonl").read_text().splitlines()
        if line.strip()
    }
    grader = grader_for()
    counts: collections.Counter[str] = collections.Counter()
    labels: dict[str, dict[int, str]] = collections.defaultdict(dict)  # item -> wording -> label as run
    through: dict[tuple[str, int], str] = {}  # the labels the held-back overrules would have given
    held = 0
    for line in (args.run / "samples.jsonl").read_text().splitlines():
        sample = json.loads(line)
        if sample["arm"] != args.arm or sample.get("error"):
            continue
        labels[sample["item_id"]][sample["variant_id"]] = sample["label"]
        evidence = (sample.get("details") or {}).get("evidence") or {}
        if BLOCKED not in (evidence.get("original_kept_reason") or ""):
            continue
        held += 1
        clusters = evidence["clusters"]
        challenger = max((c for c in clusters if 0 not in c["members"]), key=lambda c: c["votes"])
        text = next(a["text"] for a in evidence["answers"] if a["variant"] == challenger["members"][0])
        item = items[sample["item_id"]]
        would = str(await grader.grade(item, text))
        counts[f"{sample['label']} -> {would}"] += 1
        through[(sample["item_id"], sample["variant_id"])] = would
        print(f"{sample['item_id']} wording {sample['variant_id']}: {sample['label']} -> {would}  ({text[:70]!r})")
    print(f"\n{held} samples held back by the guard; if the challenger had won:")
    for change, n in sorted(counts.items()):
        print(f"  {change}: {n}")
    strict = sum(all(label == "correct" for label in w.values()) for w in labels.values())
    let = sum(all(through.get((i, v), label) == "correct" for v, label in w.items()) for i, w in labels.items())
    print(f"A_strict of {args.arm}: {strict} of {len(labels)} questions as run, {let} with them let through")


if __name__ == "__main__":
    asyncio.run(main())
