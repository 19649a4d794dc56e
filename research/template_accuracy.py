"""How often each renaming template is answered right, on a development set: every template of the
entry that reads a wording is answered (adaptive k off), and the answers are graded by the bench's
grader. This ordered the templates (the vote asks the first ones).

    python research/template_accuracy.py ITEMS.jsonl [--skip OTHER_ITEMS.jsonl] OUT.jsonl   # answers (model)
    python research/template_accuracy.py --read OUT.jsonl                                  # the table

The development set used: docs/results/wordings-held160.items.jsonl without the items of
wordings-held54 (106 items no measured run used); its rows are docs/results/lexical-dev-templates.jsonl.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import re
from pathlib import Path

from evaluation.graders import grader_for
from evaluation.records import Item
from selfpara import SelfParaphraser
from selfpara.pipeline.lexicon.renamings import RENAMINGS, renamings


async def answer_all(items: list[Item], out: Path) -> None:
    sp = SelfParaphraser(k=3, max_tokens=96)
    grader = grader_for()

    async def right(item: Item, answer: str | None) -> bool:
        return answer is not None and str(await grader.grade(item, answer)) == "correct"

    with out.open("w", encoding="utf-8") as f:
        for item in items:
            for wording in item.variants:
                made = renamings(wording.question)
                if not made:
                    continue
                r = await sp.aanswer(wording.question, paraphrases=[m.text for m in made], adaptive=False)
                row = {
                    "id": item.id,
                    "q": wording.question,
                    "orig_ok": await right(item, r.answers[0].text),
                    "renamed": [
                        {"text": m.text, "ok": await right(item, a.text), "ans": a.text}
                        for m, a in zip(made, r.answers[1:], strict=True)
                    ],
                }
                f.write(json.dumps(row) + "\n")
                f.flush()


def template_of(text: str) -> str:
    """'entry: template' that wrote `text`, or '?'."""
    for entry in RENAMINGS:
        for template in entry.templates:
            if re.fullmatch(re.sub(r"\\\{[A-Za-z_]+\\\}", ".+", re.escape(template)), text):
                return f"{entry.name}: {template}"
    return "?"


def read(path: Path) -> None:
    rows = [json.loads(line) for line in path.open(encoding="utf-8")]
    tally: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    fixed = harmed = 0
    for row in rows:
        for r in row["renamed"]:
            t = tally[template_of(r["text"])]
            t[0] += r["ok"]
            t[1] += 1
        first = [r["ok"] for r in row["renamed"][:3]]
        fixed += len(first) == 3 and all(first) and not row["orig_ok"]
        harmed += len(first) == 3 and not any(first) and row["orig_ok"]
    for name, (ok, n) in sorted(tally.items()):
        print(f"{ok:3d}/{n:<3d} {ok / n:.2f}  {name}")
    print(
        f"{len(rows)} wordings; first three renamings all right against a wrong original: {fixed}, "
        f"all wrong against a right one: {harmed}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--skip", type=Path, help="items file whose ids are left out")
    parser.add_argument("--read", action="store_true", help="print the table of an OUT file")
    args = parser.parse_args()
    if args.read:
        read(args.paths[0])
        return
    items_path, out = args.paths
    skip = {json.loads(line)["id"] for line in args.skip.open()} if args.skip else set()
    items = [Item.model_validate_json(line) for line in items_path.open(encoding="utf-8") if line.strip()]
    asyncio.run(answer_all([i for i in items if i.id not in skip], out))


if __name__ == "__main__":
    main()
