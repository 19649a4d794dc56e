"""Label a round of answer pairs from what each of its distinct answers states (read by hand).

The stated file (research/data/answer_pairs_<round>_stated.json) lists, per item, what every
distinct answer of that item states, in the order the answers first appear in the pairs file;
a pair is `same` when its two answers state the same thing, whatever else they say, and
`different` otherwise (another answer, or none). `notes` holds the judgement calls, keyed
"item_id/index", copied onto every pair with that answer. Written before any equivalence
function is scored on the round.

    python scripts/make_answer_pairs.py RUN ... --round final3 \\
        --seen research/data/answer_pairs.jsonl --out research/data/answer_pairs_final3.jsonl
    python scripts/label_answer_pairs.py research/data/answer_pairs_final3.jsonl \\
        research/data/answer_pairs_final3_stated.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def answers_in_order(rows: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Each item's distinct answers, in order of first appearance in `rows`."""
    order: dict[str, list[str]] = {}
    for r in rows:
        seen = order.setdefault(r["item_id"], [])
        for t in (r["a"], r["b"]):
            if t not in seen:
                seen.append(t)
    return order


def label(rows: list[dict[str, Any]], stated: dict[str, list[str]], notes: dict[str, str]) -> None:
    """Set `label` (and `note`) on every row from `stated`; raises if an item's answers and stated differ."""
    order = answers_in_order(rows)
    for item, texts in order.items():
        if len(texts) != len(stated.get(item, [])):
            raise SystemExit(f"{item}: {len(texts)} distinct answers, {len(stated.get(item, []))} stated")
    for r in rows:
        texts, says = order[r["item_id"]], stated[r["item_id"]]
        ia, ib = texts.index(r["a"]), texts.index(r["b"])
        r["label"] = "same" if says[ia] == says[ib] else "different"
        found = [notes[f"{r['item_id']}/{i}"] for i in (ia, ib) if f"{r['item_id']}/{i}" in notes]
        if found:
            r["note"] = "; ".join(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs", type=Path, help="the round's pairs file, labelled in place")
    parser.add_argument("stated", type=Path, nargs="?", help="what each distinct answer states (JSON: stated, notes)")
    parser.add_argument("--show", action="store_true", help="print every item's distinct answers, numbered, and stop")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.pairs.read_text().splitlines() if line.strip()]
    if args.show:
        for item, texts in answers_in_order(rows).items():
            print(f"== {item}: {rows[[r['item_id'] for r in rows].index(item)]['question']}")
            for i, t in enumerate(texts):
                print(f"  [{i}] {' '.join(t.split())}")
        return
    if args.stated is None:
        parser.error("give the stated file (or --show to read the answers first)")
    spec = json.loads(args.stated.read_text())
    label(rows, spec["stated"], spec.get("notes", {}))
    args.pairs.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    print(sum(r["label"] == "same" for r in rows), "same,", sum(r["label"] == "different" for r in rows), "different")


if __name__ == "__main__":
    main()
