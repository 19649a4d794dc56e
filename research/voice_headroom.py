"""Do prompt voices hold the right answer where the question as asked gets a wrong one? Reads the answers
`research/answer_forms.py` recorded (issue 47, part 4; docs/results/public-sets.md "Prompt voices").

For each form: how many wordings it answers right; of the wordings whose natural answer is wrong, how many it
answers right; of those whose natural answer is right, how many it answers wrong. Then a vote per wording
over the natural answer (the original, kept on a tie) and the chosen voices' answers to the same wording,
heard by the default model-free chain; and the oracle's vote over the natural answers to the cluster's other
wordings, for scale. A_strict is over clusters (right under every wording recorded).

    python research/voice_headroom.py runs/voices-comqa-dev.jsonl --dataset comqa:data/public/comqa/dev.json \\
        --voices "encyclopedia,kind first"
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections import Counter, defaultdict
from pathlib import Path

from _results import write

from evaluation.datasets import load_dataset
from evaluation.graders import grader_for
from selfpara.models.client import ModelClient
from selfpara.pipeline.equivalence import build_equivalence
from selfpara.pipeline.vote import VoteRule, vote
from selfpara.result import Answer

LOCAL_CHAIN = ["exact", "numeric", "contains", "distinct", "core"]


CHAIN = build_equivalence(LOCAL_CHAIN, client=ModelClient(), judge_model="unused")


async def voted(question: str, texts: list[str], wordings: list[str], margin: float) -> str:
    """The answer text a vote over `texts` (the original's first) returns at `margin`, no guard."""
    answers = [Answer(variant=i, text=t) for i, t in enumerate(texts)]
    outcome = await vote(question, answers, CHAIN, rule=VoteRule(overrule_margin=margin), wordings=wordings)
    return texts[outcome.returned]


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("answers", type=Path)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--voices", default="encyclopedia,kind first", help="forms voted beside the natural answer")
    args = ap.parse_args()
    items = {i.id: i for i in load_dataset(args.dataset)}
    rows: dict[tuple[str, int], dict[str, str]] = defaultdict(dict)
    asked: dict[tuple[str, int], str] = {}
    for line in args.answers.read_text().splitlines():
        r = json.loads(line)
        rows[(r["item_id"], r["variant"])][r["form"]] = r["answer"]
        asked[(r["item_id"], r["variant"])] = r["question"]
    voices = args.voices.split(",")
    complete = {k: v for k, v in rows.items() if "natural" in v and all(f in v for f in voices)}
    forms = ["natural", *voices]
    right: dict[tuple[str, int], dict[str, bool]] = {}
    for (item_id, variant), answers in complete.items():
        item = items[item_id]
        grader = grader_for(item.kind)
        right[(item_id, variant)] = {f: await grader.grade(item, answers[f]) == "correct" for f in forms}
    counts: Counter = Counter()
    for r in right.values():
        for f in forms:
            counts[(f, "right")] += r[f]
            if f != "natural":
                counts[(f, "right where natural is wrong")] += r[f] and not r["natural"]
                counts[(f, "wrong where natural is right")] += r["natural"] and not r[f]
    natural_wrong = sum(not r["natural"] for r in right.values())
    print(f"{len(right)} wordings of {len({k[0] for k in right})} clusters; natural wrong on {natural_wrong}")
    figures: dict[str, object] = {"wordings": len(right), "natural wrong": natural_wrong}
    for f in forms:
        line = f"  {f:14s} right {counts[(f, 'right')]:3d}"
        if f != "natural":
            line += (
                f"; right where natural is wrong {counts[(f, 'right where natural is wrong')]}"
                f"; wrong where natural is right {counts[(f, 'wrong where natural is right')]}"
            )
        print(line)
        figures[f] = {k: v for (form, k), v in counts.items() if form == f}
    strict: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    changed: Counter = Counter()
    for (item_id, variant), answers in complete.items():
        item = items[item_id]
        grader = grader_for(item.kind)
        others = [k for k in complete if k[0] == item_id and k != (item_id, variant)]
        question = asked[(item_id, variant)]
        ok = right[(item_id, variant)]
        strict[item_id]["natural"].append(ok["natural"])
        for margin in (1.0, 2.0):
            texts = [answers["natural"], *(answers[f] for f in voices)]
            got = await voted(question, texts, [question], margin)
            good = await grader.grade(item, got) == "correct"
            strict[item_id][f"prompt voices, margin {margin:g}"].append(good)
            changed[(f"prompt voices, margin {margin:g}", ok["natural"], good)] += ok["natural"] != good
            if others:
                texts = [answers["natural"], *(complete[k]["natural"] for k in others)]
                got = await voted(question, texts, [question, *(asked[k] for k in others)], margin)
                good = await grader.grade(item, got) == "correct"
            else:
                good = ok["natural"]
            strict[item_id][f"oracle, margin {margin:g}"].append(good)
            changed[(f"oracle, margin {margin:g}", ok["natural"], good)] += ok["natural"] != good
    totals: Counter = Counter()
    for per in strict.values():
        for name, oks in per.items():
            totals[name] += all(oks)
    print(f"A_strict over {len(strict)} clusters:")
    for name, value in totals.items():
        better = changed[(name, False, True)]
        worse = changed[(name, True, False)]
        print(f"  {name:28s} {value:3d}  wordings wrong -> right {better}, right -> wrong {worse}")
        figures[f"A_strict: {name}"] = {"right": value, "wrong -> right": better, "right -> wrong": worse}
    print(f"written to {write('voice_headroom', {'answers': str(args.answers), 'voices': voices, **figures})}")


if __name__ == "__main__":
    asyncio.run(main())
