"""Build the answer pairs behind research/data/answer_pairs.jsonl from recorded bench runs.

Every pair of answers to one item whose normalised texts differ (identical ones are
trivially the same answer and would only inflate the merge rate) becomes one row:
{id, source, item_id, question, a, b, label}. For a run of the `raw` arm the pairs are
answers to different wordings of the item (the question shown is the original); for a
voting arm (`sc`) they are the answers it voted, i.e. samples of one wording. `label`
is filled from an existing labels file where the same pair is already labelled (with its
`labelled` round and `note`), so re-running keeps the hand labels; new pairs get label
null, to be labelled by hand, and `labelled` set to --round. With --seen, pairs already in
another labelled file are left out (a new round holds only pairs never labelled).

    python scripts/make_answer_pairs.py runs/pairs-a80 runs/pairs-gsm16 \\
        --labels research/data/answer_pairs.jsonl --out research/data/answer_pairs.jsonl
    python scripts/make_answer_pairs.py runs/natural-held50 --round final2 \\
        --seen research/data/answer_pairs.jsonl --out research/data/answer_pairs_final2.jsonl
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path
from typing import Any

from evaluation.datasets.items import load_items
from evaluation.rundir import latest_records, read_samples
from selfpara.pipeline.lexicon.text import normalize_answer


def _pair_key(item_id: str, a: str, b: str) -> tuple[str, str, str]:
    first, second = sorted((a.strip(), b.strip()))
    return (item_id, first, second)


def answers_of_run(run: Path) -> tuple[dict[str, list[str]], dict[str, Any]]:
    """The answers of one run directory by item id (a voting arm's every voted answer), and its items."""
    items = {item.id: item for item in load_items(run / "items.jsonl")}
    by_item: dict[str, list[str]] = {}
    for sample in latest_records(read_samples(run / "samples.jsonl")):
        if sample.error or sample.answer is None:
            continue
        voted = (sample.details or {}).get("answers") if sample.arm != "raw" else None
        by_item.setdefault(sample.item_id, []).extend([a for a in voted if a] if voted else [sample.answer])
    return by_item, items


def pairs_of_runs(runs: list[Path]) -> list[dict[str, Any]]:
    """The pairs of the answers of several runs, pooled by item (see the module docstring)."""
    by_item: dict[str, list[tuple[str, str]]] = {}
    items: dict[str, Any] = {}
    for run in runs:
        answers, found = answers_of_run(run)
        items |= found
        for key, texts in answers.items():
            by_item.setdefault(key, []).extend((text, run.name) for text in texts)
    rows = []
    for key, answers in by_item.items():
        item = items[key]
        seen: set[str] = set()
        unique = []
        for text, origin in answers:
            norm = normalize_answer(text)
            if norm and norm not in seen:
                seen.add(norm)
                unique.append((text.strip(), origin))
        for (a, ra), (b, rb) in itertools.combinations(unique, 2):
            source = ra if ra == rb else f"{ra}+{rb}"
            rows.append({"source": source, "item_id": item.id, "question": item.variants[0].question, "a": a, "b": b})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--labels", type=Path, help="an existing pairs file whose labels to keep")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--guards",
        type=Path,
        help="research/data/guards_sample.json: add its 40 hand-labelled answer pairs (same: true/false)",
    )
    parser.add_argument("--round", help="the `labelled` round to stamp on pairs the labels file does not hold")
    parser.add_argument(
        "--seen", type=Path, help="a labelled pairs file whose pairs (by question and texts) to leave out"
    )
    args = parser.parse_args()
    known: dict[tuple[str, str, str], Any] = {}
    kept: dict[tuple[str, str, str], dict[str, Any]] = {}
    if args.labels and args.labels.exists():
        for line in args.labels.read_text().splitlines():
            row = json.loads(line)
            key = _pair_key(row["item_id"], row["a"], row["b"])
            known[key] = row.get("label")
            kept[key] = {k: row[k] for k in ("labelled", "note") if k in row}
    rows = pairs_of_runs(args.runs)
    if args.seen:
        seen = [json.loads(line) for line in args.seen.read_text().splitlines() if line.strip()]
        old = {_pair_key(r["question"], r["a"], r["b"]) for r in seen}
        rows = [r for r in rows if _pair_key(r["question"], r["a"], r["b"]) not in old]
    if args.guards:
        for n, pair in enumerate(json.loads(args.guards.read_text())["answer_pairs"]):
            row = {"source": "guards-40", "item_id": f"guards-{n // 2}", "question": pair["question"]}
            row |= {"a": pair["a"], "b": pair["b"]}
            known.setdefault(_pair_key(row["item_id"], row["a"], row["b"]), "same" if pair["same"] else "different")
            rows.append(row)
    with args.out.open("w") as f:
        for n, row in enumerate(rows):
            key = _pair_key(row["item_id"], row["a"], row["b"])
            extra = kept.get(key) or ({"labelled": args.round} if args.round else {})
            f.write(json.dumps({"id": n, **row, "label": known.get(key), **extra}, ensure_ascii=False) + "\n")
    print(f"{len(rows)} pairs, {sum(1 for r in rows if known.get(_pair_key(r['item_id'], r['a'], r['b'])))} labelled")


if __name__ == "__main__":
    main()
