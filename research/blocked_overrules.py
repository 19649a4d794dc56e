"""The overrules the independence guard held back in a run: for each selfpara sample whose original was
kept because "every wording it holds came from the paraphrase call", grade the challenger's answer
with the run's grader and say whether letting it win would have made the sample right or wrong.

    python research/blocked_overrules.py RUN_DIR [--arm selfpara] [--own-words]

Reads the recorded answers and clusters only (no model call). Prints one line per such sample,
the counts (right → wrong, wrong → right, unchanged labels), and the arm's A_strict (right under
every wording) as run and as it would have been with those overrules let through.

`--own-words`: instead, the overrules only the guard's own-words rule let through (the winning
cluster holds no renaming, sample of the original or given wording, only lines of the question's own
words), graded as if the original had been kept, as the guard before that rule would have done.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
from pathlib import Path

from evaluation.graders import grader_for
from evaluation.records import Item
from selfpara.pipeline.independence import is_renaming
from selfpara.result import Variant

BLOCKED = "came from the paraphrase call"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--arm", default="selfpara")
    parser.add_argument("--own-words", action="store_true", help="the overrules only the own-words rule let through")
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
        shown = own_words_only(evidence) if args.own_words else BLOCKED in (evidence.get("original_kept_reason") or "")
        if not shown:
            continue
        held += 1
        clusters = evidence["clusters"]
        challenger = max((c for c in clusters if 0 not in c["members"]), key=lambda c: c["votes"])
        shown_variant = 0 if args.own_words else challenger["members"][0]  # the answer the other guard returns
        text = next(a["text"] for a in evidence["answers"] if a["variant"] == shown_variant)
        item = items[sample["item_id"]]
        would = str(await grader.grade(item, text))
        counts[f"{sample['label']} -> {would}"] += 1
        through[(sample["item_id"], sample["variant_id"])] = would
        print(f"{sample['item_id']} wording {sample['variant_id']}: {sample['label']} -> {would}  ({text[:70]!r})")
    what = (
        "let through only by the own-words rule; had the original been kept"
        if args.own_words
        else ("held back by the guard; if the challenger had won")
    )
    print(f"\n{held} samples {what}:")
    for change, n in sorted(counts.items()):
        print(f"  {change}: {n}")
    strict = sum(all(label == "correct" for label in w.values()) for w in labels.values())
    let = sum(all(through.get((i, v), label) == "correct" for v, label in w.items()) for i, w in labels.items())
    other = "with the original kept in them" if args.own_words else "with them let through"
    print(f"A_strict of {args.arm}: {strict} of {len(labels)} questions as run, {let} {other}")


def own_words_only(evidence: dict) -> bool:
    """Whether the returned cluster beat the original with no wording the guard trusted before the own-words
    rule (a renaming, a sample of the original): only lines of the question's own words."""
    clusters, winner = evidence.get("clusters") or [], evidence.get("winner")
    won = next((c for c in clusters if c["id"] == winner), None)
    mine = next((c for c in clusters if 0 in c["members"]), None)
    if won is None or mine is None or won is mine or mine.get("abstention"):
        return False
    variants = {v.index: v for v in (Variant.model_validate(v) for v in evidence["variants"])}
    return not any(variants[m].top_up or is_renaming(variants[m]) for m in won["members"])


if __name__ == "__main__":
    asyncio.run(main())
