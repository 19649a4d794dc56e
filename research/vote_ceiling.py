"""How much a vote over a run's own rewordings could gain at best: ceilings of A_strict beside raw and the oracle
(issue 47, docs/results/public-sets.md "What the voices allow").

For every wording a voting arm answered, each recorded answer (the original's and each rewording's) is graded
with the run's grader. Then, per question (A_strict: right under every wording):

- as run: the arm's own labels;
- any answer right: a perfect chooser, right wherever one answer of the vote is right;
- ideal hearing, margin M: every right answer in one cluster and every wrong one alone, the original kept unless
  the right cluster leads it by M votes (M = 1: the plain majority, ties to the original; the default vote
  uses 2);
- as heard, margin 1: the arm's recorded clusters under the plain majority (ties to the original), with the
  independence guard (the challenger holds a wording the paraphrase call could not steer);
- confidence, lead L, D: the arm's recorded clusters, and the original's cluster also loses to a challenger that
  leads it by at least L votes (0: a tie) and whose answers' mean token log-probability is at least D above
  its own; with the guard and without it.

Also, of the wordings whose original answer is wrong, how many votes held a right answer, for the arm and the
oracle. The ceilings read the answers the run asked for: where adaptive k stopped early, the vote was settled
under the run's hearing, and a ceiling does not guess what the skipped rewordings would have said.

    python research/vote_ceiling.py runs/held5-comqa [runs/held4-comqa-43 ...] [--arm "selfpara[sure_probability=off]"]
"""

from __future__ import annotations

import argparse
import asyncio
from collections import Counter, defaultdict
from pathlib import Path

from _results import write

from evaluation.datasets.items import load_items
from evaluation.graders import grader_for
from evaluation.rundir import ITEMS_FILE, SAMPLES_FILE, latest_records, read_samples
from selfpara.pipeline.independence import independent_wordings
from selfpara.result import Variant

MARGINS = (1, 2)
CONFIDENCE = [(lead, gap) for lead in (0, 1) for gap in (0.05, 0.1, 0.2)]
VARIANT_FIELDS = ("index", "text", "top_up", "source", "verified")


def _challenger(evidence: dict, lead: int, gap: float | None, independent: set[int] | None) -> int | None:
    """The first member of the recorded cluster that beats the original's by `lead` votes (and, where `gap` is
    given, by that much mean token log-probability) and, where `independent` is given, holds one of those
    wordings (the guard), or None."""
    clusters = [c for c in evidence["clusters"] if not c.get("abstention")]
    mine = next((c for c in clusters if 0 in c["members"]), None)
    others = [c for c in clusters if c is not mine]
    if mine is None or not others or evidence["winner"] != mine["id"]:
        return None
    best = max(others, key=lambda c: (c["votes"], c["mean_logprob"] or -99.0))
    margin = (best["mean_logprob"] or -99.0) - (mine["mean_logprob"] or -99.0)
    if best["votes"] - mine["votes"] < lead or (gap is not None and margin < gap):
        return None
    if independent is not None and not set(best["members"]) & independent:
        return None
    return best["members"][0]


async def measure(run: Path, arm: str) -> tuple[dict[str, int], Counter, int]:
    """(questions right under every wording per measure, headroom counts, questions) for one run."""
    items = {i.id: i for i in load_items(run / ITEMS_FILE)}
    right: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    headroom: Counter = Counter()
    for record in latest_records(read_samples(run / SAMPLES_FILE)):
        if record.arm in ("raw", "oracle"):
            right[record.item_id][record.arm].append(record.label == "correct")
        evidence = record.details.get("evidence")
        if record.arm not in (arm, "oracle") or not isinstance(evidence, dict):
            continue
        item = items[record.item_id]
        grader = grader_for(item.kind)
        texts = {a["variant"]: a["text"] for a in evidence["answers"] if a.get("error") is None and a.get("text")}
        graded = {v: await grader.grade(item, t) == "correct" for v, t in texts.items()}
        voices = sum(ok for v, ok in graded.items() if v != 0)
        if graded.get(0) is False:
            headroom[(record.arm, "wrong originals")] += 1
            headroom[(record.arm, "with a right answer among the rewordings")] += voices > 0
        if record.arm != arm:
            continue
        mine = right[record.item_id]
        mine["as run"].append(record.label == "correct")
        mine["any answer right"].append(any(graded.values()))
        for m in MARGINS:
            mine[f"ideal hearing, margin {m}"].append(graded.get(0, False) or voices - 1 >= m)
        rules = {"as heard, margin 1, guarded": (1, None, True)} | {
            f"confidence, lead >= {lead}, gap {gap}, {'guarded' if guarded else 'no guard'}": (lead, gap, guarded)
            for lead, gap in CONFIDENCE
            for guarded in (True, False)
        }
        variants = [Variant(**{k: v[k] for k in VARIANT_FIELDS if k in v}) for v in evidence["variants"]]
        independent = independent_wordings(variants)
        for name, (lead, gap, guarded) in rules.items():
            winner = _challenger(evidence, lead, gap, independent if guarded else None)
            mine[name].append(record.label == "correct" if winner is None else graded.get(winner, False))
    questions = [r for r in right.values() if r.get("as run")]
    strict: Counter[str] = Counter()
    for r in questions:
        for measure_name, oks in r.items():
            strict[measure_name] += all(oks)
    return dict(strict), headroom, len(questions)


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", type=Path, nargs="+")
    ap.add_argument("--arm", default="selfpara[sure_probability=off]", help="the voting arm (it must vote always)")
    args = ap.parse_args()
    total: Counter = Counter()
    headroom: Counter = Counter()
    n = 0
    for run in args.runs:
        strict, room, questions = await measure(run, args.arm)
        total.update(strict)
        headroom.update(room)
        n += questions
        print(f"{run}: {questions} questions; " + ", ".join(f"{k} {v}" for k, v in strict.items() if "," not in k))
    raw, oracle = total["raw"], total["oracle"]
    print(f"\n{n} questions, A_strict (questions right under every wording) against raw {raw}:")
    figures: dict[str, object] = {}
    for name, value in total.items():
        gain = (value - raw) / n
        of_oracle = f", {(value - raw) / (oracle - raw):.0%} of the oracle's gain" if oracle > raw else ""
        print(f"  {name:52s} {value:4d}  {gain:+.3f}{of_oracle}")
        figures[name] = {"right": value, "gain": round(gain, 4)}
    for who in (args.arm, "oracle"):
        wrong = headroom[(who, "wrong originals")]
        held = headroom[(who, "with a right answer among the rewordings")]
        share = held / max(wrong, 1)
        print(f"  {who}: of {wrong} wrong originals, {held} ({share:.1%}) had a right answer among the rewordings")
        figures[f"{who}: wrong originals with a right rewording"] = [held, wrong]
    path = write("vote_ceiling", {"runs": [str(r) for r in args.runs], "arm": args.arm, "questions": n, **figures})
    print(f"written to {path}")


if __name__ == "__main__":
    asyncio.run(main())
