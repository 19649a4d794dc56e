"""Recompute the guard tables of docs/guards.md offline from the recorded, hand-labelled sample.

    python benchmarks/bench_guards.py [benchmarks/data/guards_sample.json]

No model runs: the paraphrase candidates, the judges' replies and the answer pairs were
recorded from Qwen2.5-Coder-1.5B; the labels are by hand. The checks, the near-copy rule
and the cheap equivalence functions are selfpara's own code, so a change to them shows
here at once. The drift checks are also run on the human-written wordings of the built-in
sample set (evaluation/data/sample.jsonl, each a faithful rewording of its item's first):
what a check rejects there is a good rewording lost. Figures go to
benchmarks/results/guards.json too.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import write  # noqa: E402

from selfpara.drift import DRIFT_CHECKS  # noqa: E402
from selfpara.equivalence import ContainsMatch, DistinctAnswers, ExactMatch, NumericMatch  # noqa: E402
from selfpara.paraphrase import lexical_filter, parse_yes_no  # noqa: E402

DEFAULT = Path(__file__).parent / "data" / "guards_sample.json"
SAMPLE = Path(__file__).parents[1] / "evaluation" / "data" / "sample.jsonl"
COMBOS = (
    ["numbers"],
    ["entities"],
    ["negation"],
    ["qualifiers"],
    ["rates"],
    ["asks"],
    ["numbers", "entities"],
    ["numbers", "entities", "negation"],
    ["numbers", "entities", "qualifiers"],
    ["numbers", "entities", "qualifiers", "rates"],
    ["numbers", "entities", "qualifiers", "rates", "asks"],
)


def _hit(q: str, p: str, names: list[str]) -> bool:
    return any(DRIFT_CHECKS[n][1](q, p) is not None for n in names)


def drift_table(questions: list[dict]) -> dict[str, dict[str, int]]:
    rows = [(q["question"], c["text"], c["label"]) for q in questions for c in q["candidates"]]
    drifted = sum(1 for r in rows if r[2] == "d")
    print(f"drift checks on {len(rows)} candidates ({drifted} drifted, {len(rows) - drifted} good or copies)")
    out = {}
    for names in COMBOS:
        caught = sum(1 for q, p, lab in rows if lab == "d" and _hit(q, p, names))
        wrong = sum(1 for q, p, lab in rows if lab != "d" and _hit(q, p, names))
        out[",".join(names)] = {"drifted_caught": caught, "good_rejected": wrong}
        print(f"  {','.join(names):40s} drifted caught {caught:3d}   good/copies rejected {wrong:3d}")
    return out


def wordings_table(path: Path = SAMPLE) -> dict[str, int]:
    """Human-written wordings each check rejects (each item's other wordings against its first)."""
    rows = []
    for line in path.read_text().splitlines():
        texts = [v["question"] for v in json.loads(line)["variants"]]
        rows += [(texts[0], t) for t in texts[1:]]
    print(f"drift checks on {len(rows)} human-written wordings of {path.name} (all faithful)")
    out = {}
    for names in COMBOS:
        out[",".join(names)] = lost = sum(1 for q, p in rows if _hit(q, p, names))
        print(f"  {','.join(names):40s} rejected {lost:3d}")
    return out


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
    figures = {"labelled_candidates": drift_table(data["questions"]), "human_wordings_rejected": wordings_table()}
    overlap_table(data["questions"])
    asyncio.run(pair_table(data["answer_pairs"]))
    print(f"wrote {write('guards', figures)}")


if __name__ == "__main__":
    main()
