"""Issue 47, part 4: do samples of the original at low temperature, voted beside the rewordings, bring voices that
do not share the original's mistake?

Takes a run with raw and selfpara arms and a run of the sc arm over the same items (its k + 1 samples of the
original at the sc temperature, seeded), and re-votes each wording offline with the selfpara arm's own answers
plus the samples (a sample counts as a wording the paraphrase call could not steer, as top-ups do), under the
default rule (margin 2). Prints the answers that change against raw, wrong -> right and right -> wrong, and
A_orig.

    python research/samples_beside.py runs/dev-nq runs/dev-nq-sc --samples 2
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from evaluation.datasets.items import load_items
from evaluation.graders import grader_for
from evaluation.rundir import ITEMS_FILE, SAMPLES_FILE, latest_records, read_samples
from selfpara.config import WrapConfig
from selfpara.pipeline.equivalence import build_equivalence
from selfpara.pipeline.independence import independent_wordings
from selfpara.pipeline.vote import vote
from selfpara.result import Answer, Variant


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("sc_run", type=Path)
    ap.add_argument("--arm", default="selfpara")
    ap.add_argument("--samples", type=int, default=4, help="samples voted beside the rewordings (the first n)")
    ap.add_argument("--margin", type=float, default=2.0)
    args = ap.parse_args()
    items = {i.id: i for i in load_items(args.run / ITEMS_FILE)}
    records = latest_records(read_samples(args.run / SAMPLES_FILE))
    raw = {(r.item_id, r.variant_id): r for r in records if r.arm == "raw"}
    voted = {(r.item_id, r.variant_id): r for r in records if r.arm == args.arm and not r.error}
    sc = {(r.item_id, r.variant_id): r for r in latest_records(read_samples(args.sc_run / SAMPLES_FILE))}
    cfg = WrapConfig()
    eq = build_equivalence(["exact", "numeric", "contains", "distinct", "core"], client=None, judge_model="")  # type: ignore[arg-type]
    gained = lost = right = n = 0
    for key, r in voted.items():
        if key not in sc or key not in raw:
            continue
        ev = r.details["evidence"]
        variants = [Variant.model_validate(v) for v in ev["variants"]]
        answers = [Answer.model_validate(a) for a in ev["answers"]]
        samples = [s for s in sc[key].details["evidence"]["answers"] if s.get("text")][: args.samples]
        start = max(v.index for v in variants) + 1
        for i, s in enumerate(samples):
            variants.append(Variant(index=start + i, text=variants[0].text, top_up=True))
            answers.append(Answer(variant=start + i, text=s["text"]))
        independent = independent_wordings(variants)
        wordings = [v.text for v in variants if not v.is_original]
        rule = cfg.vote_rule.model_copy(update={"overrule_margin": args.margin})
        out = await vote(variants[0].text, answers, eq, None, rule, independent=independent, wordings=wordings)
        text = next(a.text for a in answers if a.variant == out.returned)
        item = items[key[0]]
        ok = (await grader_for(item.kind).grade(item, text)) == "correct"
        was = raw[key].label == "correct"
        n += 1
        right += ok
        gained += ok and not was
        lost += was and not ok
        if ok != was:
            print(f"  {'gained' if ok else 'LOST'}: {variants[0].text!r}: {raw[key].answer!r} -> {text!r}")
    print(
        f"{n} wordings, {args.samples} samples beside the rewordings, margin {args.margin:g}: "
        f"A_orig {right / max(n, 1):.3f}, "
        f"raw {sum(raw[k].label == 'correct' for k in voted if k in sc) / max(n, 1):.3f}; gained {gained}, lost {lost}"
    )


if __name__ == "__main__":
    asyncio.run(main())
