"""Recompute the guard tables of docs/guards.md offline from the recorded, hand-labelled sample.

    python benchmarks/bench_guards.py [benchmarks/data/guards_sample.json]

No model runs: the paraphrase candidates, the judges' replies and the answer pairs were
recorded from Qwen2.5-Coder-1.5B; the labels are by hand. The checks, the near-copy rule
and the cheap equivalence functions are selfpara's own code, so a change to them shows
here at once.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from selfpara.drift import DRIFT_CHECKS
from selfpara.equivalence import ContainsMatch, DistinctAnswers, ExactMatch, NumericMatch
from selfpara.paraphrase import lexical_filter, parse_yes_no

DEFAULT = Path(__file__).parent / "data" / "guards_sample.json"


def drift_table(questions: list[dict]) -> None:
    rows = [(q["question"], c["text"], c["label"]) for q in questions for c in q["candidates"]]
    drifted = sum(1 for r in rows if r[2] == "d")
    print(f"drift checks on {len(rows)} candidates ({drifted} drifted, {len(rows) - drifted} good or copies)")
    combos = (
        ["numbers"],
        ["entities"],
        ["negation"],
        ["qualifiers"],
        ["rates"],
        ["numbers", "entities"],
        ["numbers", "entities", "negation"],
        ["numbers", "entities", "qualifiers"],
        ["numbers", "entities", "qualifiers", "rates"],
    )
    for names in combos:

        def hit(q: str, p: str, names: list[str] = names) -> bool:
            return any(DRIFT_CHECKS[n][1](q, p) is not None for n in names)

        caught = sum(1 for q, p, lab in rows if lab == "d" and hit(q, p))
        wrong = sum(1 for q, p, lab in rows if lab != "d" and hit(q, p))
        print(f"  {','.join(names):28s} drifted caught {caught:3d}   good/copies rejected {wrong:3d}")


def overlap_table(questions: list[dict]) -> None:
    print("near-copy rule (a candidate alone against the question)")
    for label, changes in (
        ("overlap >= 0.8", None),
        ("overlap >= 0.8 and < 2 words changed", 2),
        ("overlap >= 0.8 and < 3 words changed", 3),
    ):
        lost = {"g": 0, "c": 0, "d": 0}
        for q in questions:
            for c in q["candidates"]:
                _, rejected = lexical_filter(q["question"], [c["text"]], 0.8, False, changes)
                lost[c["label"]] += bool(rejected)
        print(
            f"  {label:38s} good lost {lost['g']:3d}   copies rejected {lost['c']:3d}   drifted rejected {lost['d']:3d}"
        )


async def pair_table(pairs: list[dict]) -> None:
    cheap = [ExactMatch(), NumericMatch(), ContainsMatch(), DistinctAnswers()]
    print(f"answer pairs: {len(pairs)} ({sum(p['same'] for p in pairs)} same)")
    for use_cheap in (False, True):
        for prompt in ("judge_before", "judge_stricter", "judge_now"):
            merged = split = asked = 0
            for p in pairs:
                verdict = None
                for fn in cheap if use_cheap else []:
                    verdict = await fn(p["question"], p["a"], p["b"], None)
                    if verdict is not None:
                        break
                if verdict is None:
                    asked += 1
                    verdict = parse_yes_no(p[prompt]) is True
                merged += verdict and not p["same"]
                split += (not verdict) and p["same"]
            head = "cheap functions + " if use_cheap else ""
            print(
                f"  {head + prompt:34s} errors {merged + split:2d} (merged {merged}, split {split}),"
                f" judge asked {asked}"
            )


def main() -> None:
    data = json.loads(Path(sys.argv[1] if len(sys.argv) > 1 else DEFAULT).read_text())
    drift_table(data["questions"])
    overlap_table(data["questions"])
    asyncio.run(pair_table(data["answer_pairs"]))


if __name__ == "__main__":
    main()
