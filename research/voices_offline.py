"""Re-vote recorded answers of `research/answer_forms.py` offline under several designs of the vote's voices.

For every item with several wordings, each wording in turn is the original and the item's other wordings
are its voices (the oracle's vote: people's own wordings, so what is measured is how answers are heard,
not where rewordings come from). Designs:

- natural: every answer a sentence (the vote before issue 47);
- short-voices: the original's natural answer, the voices' short answers;
- natural-union: every answer a sentence, heard against all the vote's wordings (an answer restating its
  own wording drops that wording's words, not only the original's);
- short-all: every answer short (the original asked in short form too).

For each: A_strict of the returned answers (graded with the auto grader), and the clustering against the
grader's labels: pairs of right answers left apart, pairs of a right and a wrong answer merged.

    python research/voices_offline.py runs/forms-comqa-dev.jsonl [--margin 1] [--equivalence exact,...]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
from collections import defaultdict
from pathlib import Path

from evaluation.graders import grader_for
from evaluation.records import Item, ItemVariant
from selfpara.pipeline.equivalence import build_equivalence
from selfpara.pipeline.vote import VoteRule, vote
from selfpara.result import Answer

DESIGNS = ("natural", "natural-union", "short-voices", "short-all")


def load(path: Path) -> dict[str, dict[int, dict[str, dict]]]:
    by_item: dict[str, dict[int, dict[str, dict]]] = defaultdict(lambda: defaultdict(dict))
    for line in path.read_text().splitlines():
        r = json.loads(line)
        by_item[r["item_id"]][r["variant"]][r["form"]] = r
    return by_item


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("records", nargs="+")
    ap.add_argument("--margin", type=float, default=1.0)
    ap.add_argument("--equivalence", default="exact,numeric,contains,distinct,core")
    ap.add_argument("--show", type=int, default=0, help="print this many pairs of each error kind")
    args = ap.parse_args()
    grader = grader_for("factual")
    eq = build_equivalence(args.equivalence.split(","), client=None, judge_model="")  # type: ignore[arg-type]
    rule = VoteRule(overrule_margin=args.margin)
    by_item: dict[str, dict[int, dict[str, dict]]] = {}
    for p in args.records:
        by_item.update(load(Path(p)))
    labels: dict[tuple[str, int, str], bool] = {}
    items: dict[str, Item] = {}
    for item_id, variants in by_item.items():
        first = next(iter(variants.values()))["natural"]
        item = Item(id=item_id, gold=first["gold"], variants=[ItemVariant(id=0, question=first["question"])])
        items[item_id] = item
        for v, forms in variants.items():
            for form, r in forms.items():
                labels[(item_id, v, form)] = (await grader.grade(item, r["answer"])) == "correct"
    for form in ("natural", "short"):
        keys = [k for k in labels if k[2] == form]
        print(f"accuracy {form}: {sum(labels[k] for k in keys)}/{len(keys)}")
    for design in DESIGNS:
        strict = raw_strict = 0
        n_items = 0
        rr = rr_apart = rw = rw_merged = 0
        changed = {"w2r": 0, "r2w": 0}
        shown = {"apart": 0, "merged": 0}
        for item_id, variants in by_item.items():
            vs = sorted(v for v in variants if {"natural", "short"} <= set(variants[v]))
            if len(vs) < 2:
                continue
            n_items += 1
            all_right = raw_all = True
            for i in vs:
                order = [i] + [j for j in vs if j != i]
                forms = [
                    "short" if design == "short-all" or (design == "short-voices" and n > 0) else "natural"
                    for n in range(len(order))
                ]
                asked = variants[i]["natural"]["question"]
                if design == "natural-union":
                    asked = " ".join(variants[j]["natural"]["question"] for j in order)
                texts = [variants[j][f]["answer"] for j, f in zip(order, forms, strict=True)]
                answers = [Answer(variant=n, text=t) for n, t in enumerate(texts)]
                outcome = await vote(asked, answers, eq, None, rule, independent=None)
                by_variant = {a.variant: a for a in answers}
                returned_j, returned_f = order[outcome.returned], forms[outcome.returned]
                right = labels[(item_id, returned_j, returned_f)]
                raw_right = labels[(item_id, i, "natural")]
                all_right &= right
                raw_all &= raw_right
                if right and not raw_right:
                    changed["w2r"] += 1
                if raw_right and not right:
                    changed["r2w"] += 1
                for x, y in itertools.combinations(range(len(order)), 2):
                    lx, ly = labels[(item_id, order[x], forms[x])], labels[(item_id, order[y], forms[y])]
                    same = by_variant[x].cluster == by_variant[y].cluster
                    if lx and ly:
                        rr += 1
                        rr_apart += not same
                        if not same and shown["apart"] < args.show:
                            shown["apart"] += 1
                            print(f"  APART  {answers[x].text!r} / {answers[y].text!r}")
                    elif lx != ly:
                        rw += 1
                        rw_merged += same
                        if same and shown["merged"] < args.show:
                            shown["merged"] += 1
                            print(
                                f"  MERGED {answers[x].text!r} / {answers[y].text!r} (gold {items[item_id].gold[:2]})"
                            )
            strict += all_right
            raw_strict += raw_all
        print(
            f"{design:13s} items {n_items}: A_strict {strict}/{n_items} (raw natural {raw_strict}); "
            f"wordings w->r {changed['w2r']} r->w {changed['r2w']}; "
            f"right pairs apart {rr_apart}/{rr} = {rr_apart / max(rr, 1):.3f}; "
            f"right-wrong merged {rw_merged}/{rw} = {rw_merged / max(rw, 1):.3f}"
        )


if __name__ == "__main__":
    asyncio.run(main())
