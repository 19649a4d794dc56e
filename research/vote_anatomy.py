"""What a run's votes heard and who carried them: the clustering against the grader's labels, and the sources
of the wordings (issue 47's reporting protocol, data/public/README.md).

For every record of a voting arm (selfpara, oracle), each answer in its evidence is graded against the item's
gold with the run's grader; then, over the answers of one vote:

- right pairs left apart: two right answers in different clusters (the vote did not hear them agree);
- right–wrong pairs merged: a right and a wrong answer in one cluster (it heard agreement that was not there);

each distinct pair of answer texts to one question counted once (identical texts are one answer);

counted over all items and over items whose gold is one answer (ComQA lists several for "what three
countries ..."; two right answers may then differ). And for the selfpara arm: the share of wordings whose
vote held a rewording of each source (renaming, form, list, verified, own words), and for each answer that
changed against raw (wrong → right, right → wrong) the sources of the winning cluster's rewordings.

    python research/vote_anatomy.py runs/held-comqa [--arm selfpara --arm oracle] [--show] [--now]

The grader's labels are a proxy: two different answers can both hold a gold alias ("China and India",
"China and Bhutan" to the countries bordering Nepal), and one answer can be graded apart from itself
("mitochondrion", "mitochondria"). `--dump FILE` writes those same pairs, shuffled and without the vote's
verdict, for a person to label whether the two answers give the same answer (`"same": true|false` on each
line); `--labels FILE` then measures the clustering against those labels too: same-answer pairs left apart,
different-answer pairs merged.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import random
from collections import Counter
from pathlib import Path

from evaluation.datasets.items import load_items
from evaluation.graders import grader_for
from evaluation.rundir import ITEMS_FILE, SAMPLES_FILE, latest_records, read_samples
from selfpara.models.client import ModelClient
from selfpara.pipeline.equivalence import build_equivalence
from selfpara.pipeline.independence import same_words

LOCAL_CHAIN = ["exact", "numeric", "contains", "distinct", "core"]


def source_kind(variant: dict, question: str) -> str:
    source = variant.get("source") or ("given" if variant.get("index") else "original")
    kind = source.split(":")[0]
    if kind == "form" and same_words(question, variant["text"]):
        return "form (own words)"
    return "list (verified)" if kind == "list" and variant.get("verified") else kind


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("--arm", action="append", default=None)
    ap.add_argument("--show", action="store_true", help="print each right pair left apart and each wrong merge")
    ap.add_argument(
        "--now",
        action="store_true",
        help="decide each pair with today's model-free chain (exact, numeric, contains, distinct, core) and the "
        "vote's wordings, instead of reading the recorded clusters",
    )
    ap.add_argument("--dump", type=Path, help="write the pairs, shuffled and without verdicts, to label by hand")
    ap.add_argument("--labels", type=Path, help="hand labels of the dumped pairs (a 'same' field on each line)")
    args = ap.parse_args()
    labels = {}
    if args.labels:
        for line in args.labels.read_text().splitlines():
            row = json.loads(line)
            if row.get("same") is not None:
                labels[(row["item"], *sorted((row["a"], row["b"])))] = row["same"]
    dumped: list[dict] = []
    chain = build_equivalence(LOCAL_CHAIN, client=ModelClient(), judge_model="unused") if args.now else None
    arms = args.arm or ["selfpara", "oracle"]
    items = {i.id: i for i in load_items(args.run / ITEMS_FILE)}
    records = latest_records(read_samples(args.run / SAMPLES_FILE))
    raw = {(r.item_id, r.variant_id): r for r in records if r.arm == "raw"}
    one_answer = {i.id for i in items.values() if len(i.meta.get("answers", [None])) == 1}
    for arm in arms:
        mine = [r for r in records if r.arm == arm and isinstance(r.details.get("evidence"), dict)]
        if not mine:
            continue
        pairs = Counter()
        seen: set[tuple[str, str, str]] = set()  # a pair of answers to one question counts once (the oracle's
        # four rotations vote the same answers four times)
        wordings_with = Counter()
        carried = {"wrong -> right": Counter(), "right -> wrong": Counter()}
        for r in mine:
            item = items[r.item_id]
            grader = grader_for(item.kind)
            ev = r.details["evidence"]
            answers = [a for a in ev["answers"] if a.get("error") is None and a.get("text") is not None]
            right = {a["variant"]: (await grader.grade(item, a["text"])) == "correct" for a in answers}
            cluster = {a["variant"]: a.get("cluster") for a in answers}
            texts = {a["variant"]: " ".join(a["text"].split()) for a in answers}  # the pair's key and its labels
            spoken = {a["variant"]: a["text"] for a in answers}  # what the vote read: line breaks and all
            for x, y in itertools.combinations(sorted(right), 2):
                first, second = sorted((texts[x], texts[y]))
                if first == second or (r.item_id, first, second) in seen:
                    continue
                seen.add((r.item_id, first, second))
                if chain is not None:
                    wordings = [v["text"] for v in ev["variants"]]
                    same, _ = await chain.decide(ev["variants"][0]["text"], spoken[x], spoken[y], None, wordings)
                else:
                    same = cluster[x] == cluster[y]
                if right[x] or right[y]:
                    dumped.append({"item": r.item_id, "question": ev["variants"][0]["text"], "a": first, "b": second})
                label = labels.get((r.item_id, first, second))
                if label is not None:
                    pairs[("hand", "same pairs" if label else "different pairs")] += 1
                    pairs[("hand", "left apart" if label else "merged")] += label != same
                    if args.show and label != same:
                        print(f"  hand: {'apart ' if label else 'merged'} {r.item_id}: {first!r} | {second!r}")
                scope = ["all"] + (["one answer"] if r.item_id in one_answer else [])
                for s in scope:
                    if right[x] and right[y]:
                        pairs[(s, "right pairs")] += 1
                        pairs[(s, "left apart")] += not same
                        if args.show and s == "all" and not same:
                            print(f"  apart  {r.item_id}: {first!r} | {second!r}")
                    elif right[x] != right[y]:
                        pairs[(s, "right-wrong pairs")] += 1
                        pairs[(s, "merged")] += same
                        if args.show and s == "all" and same:
                            print(f"  merged {r.item_id}: {first!r} | {second!r}")
            question = ev["variants"][0]["text"]
            kinds = {v["index"]: source_kind(v, question) for v in ev["variants"]}
            for kind in set(kinds.values()) - {"original"}:
                wordings_with[kind] += 1
            before = raw.get((r.item_id, r.variant_id))
            if before is not None and before.label != r.label and "correct" in (before.label, r.label):
                way = "wrong -> right" if r.label == "correct" else "right -> wrong"
                winner = next((c for c in ev["clusters"] if c["id"] == ev["winner"]), {"members": []})
                carried[way].update(kinds[m] for m in winner["members"] if m)
                carried[way]["(answers)"] += 1
        print(f"== {arm}: {len(mine)} wordings")
        for s in ("all", "one answer"):
            rp, ra, wp, wm = (pairs[(s, k)] for k in ("right pairs", "left apart", "right-wrong pairs", "merged"))
            if rp or wp:
                print(
                    f"  {s:10s}: right pairs left apart {ra}/{rp} = {ra / max(rp, 1):.3f}; "
                    f"right-wrong pairs merged {wm}/{wp} = {wm / max(wp, 1):.3f}"
                )
        if pairs[("hand", "same pairs")] or pairs[("hand", "different pairs")]:
            sp, sa, dp, dm = (pairs[("hand", k)] for k in ("same pairs", "left apart", "different pairs", "merged"))
            print(
                f"  hand labels: same-answer pairs left apart {sa}/{sp} = {sa / max(sp, 1):.3f}; "
                f"different-answer pairs merged {dm}/{dp} = {dm / max(dp, 1):.3f}"
            )
        if wordings_with:
            print("  wordings whose vote held a rewording of each source: " + ", ".join(
                f"{k} {n} ({n / len(mine):.1%})" for k, n in wordings_with.most_common()))  # fmt: skip
        for way, counter in carried.items():
            if counter:
                n = counter.pop("(answers)")
                print(f"  {way}: {n} answers, winning rewordings by source: {dict(counter)}")
    if args.dump:
        unique = list({(d["item"], d["a"], d["b"]): d for d in dumped}.values())
        random.Random(0).shuffle(unique)
        args.dump.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in unique))
        print(f"{len(unique)} pairs written to {args.dump}")


if __name__ == "__main__":
    asyncio.run(main())
