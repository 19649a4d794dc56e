"""Recompute the guard tables of docs/guards.md offline from the recorded, hand-labelled sample.

    python research/guards.py [research/data/guards_sample.json] [--before REV]

No model runs: the paraphrase candidates, the judges' replies and the answer pairs were
recorded from Qwen2.5-Coder-1.5B; the labels are by hand. The checks, the near-copy rule
and the cheap equivalence functions are selfpara's own code, so a change to them shows
here at once. The drift checks are also run on the human-written wordings of the built-in
sample set (evaluation/data/sample.jsonl, each a faithful rewording of its item's first):
what a check rejects there is a good rewording lost. A second labelled set, the default
model's own candidates of 50 factual questions (research/data/drift_labels_round2.json), is
scored the same way as the first. Figures go to research/results/guards.json too.

With `--before REV` (a git revision), the drift checks as they were at REV are run on the same
rows in the same run (from `git archive REV selfpara`, in a subprocess), each table gets a
before column, and every candidate whose verdict under the default checks changed is listed.
The unlabelled held-out candidates (research/data/guards_natural_heldout.json, real
paraphrases of questions the rules were not written on) are scored too: what the default
rejects there, and, with --before, which verdicts flipped, to be read by hand.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from _results import DATA, write

from selfpara.pipeline.drift import DRIFT_CHECKS
from selfpara.pipeline.equivalence import ContainsMatch, DistinctAnswers, ExactMatch, NumericMatch
from selfpara.pipeline.paraphrase import lexical_filter, parse_yes_no

DEFAULT = DATA / "guards_sample.json"
HELD_OUT = DATA / "guards_natural_heldout.json"
ROUND2 = DATA / "drift_labels_round2.json"
SAMPLE = Path(__file__).parents[1] / "evaluation" / "data" / "sample.jsonl"
ROOT = Path(__file__).parents[1]
COMBOS = (
    ["numbers"],
    ["entities"],
    ["qualifiers"],
    ["rates"],
    ["asks"],
    ["numbers", "entities"],
    ["numbers", "entities", "qualifiers"],
    ["numbers", "entities", "qualifiers", "rates"],
    ["numbers", "entities", "qualifiers", "rates", "asks"],
)
DEFAULT_CHECKS = COMBOS[-1]

Row = tuple[str, str, str]
"""(question, paraphrase, label): g good, c copy, d drifted, h a human wording, u unlabelled."""

# Run in a subprocess on REV's selfpara: which drift checks fire on each (question, paraphrase).
_FIRES = (
    "import json, sys\n"
    "from selfpara.pipeline.drift import DRIFT_CHECKS as D\n"
    "rows = json.load(sys.stdin)\n"
    "print(json.dumps([[n for n in D if D[n][1](q, p) is not None] for q, p in rows]))\n"
)


def fires_now(rows: list[Row]) -> list[set[str]]:
    """The drift checks of this checkout that reject each row's paraphrase."""
    return [{n for n, (_, check) in DRIFT_CHECKS.items() if check(q, p) is not None} for q, p, _ in rows]


def fires_at(rev: str, rows: list[Row]) -> list[set[str]]:
    """The drift checks as they were at git revision `rev` that reject each row's paraphrase."""
    archive = subprocess.run(["git", "archive", rev, "selfpara"], cwd=ROOT, capture_output=True, check=True).stdout
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        out = subprocess.run(
            [sys.executable, "-c", _FIRES],
            input=json.dumps([[q, p] for q, p, _ in rows]),
            cwd=tmp,  # REV's selfpara comes first on the path, before the installed one
            env={**os.environ, "PYTHONPATH": tmp},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    return [set(f) for f in json.loads(out)]


def labelled_rows(questions: list[dict]) -> list[Row]:
    return [(q["question"], c["text"], c["label"]) for q in questions for c in q["candidates"]]


def round2_rows(path: Path = ROUND2) -> list[Row]:
    """The default model's real candidates of 50 factual questions, labelled by hand (drift_labels_round2.md)."""
    return [(c["question"], c["text"], c["label"]) for c in json.loads(path.read_text())["candidates"]]


def human_rows(path: Path = SAMPLE) -> list[Row]:
    """Each item's other human-written wordings against its first (all faithful)."""
    rows: list[Row] = []
    for line in path.read_text().splitlines():
        texts = [v["question"] for v in json.loads(line)["variants"]]
        rows += [(texts[0], t, "h") for t in texts[1:]]
    return rows


def held_out_rows(path: Path = HELD_OUT) -> list[Row]:
    return [(c["question"], c["text"], "u") for c in json.loads(path.read_text())["candidates"]]


def _hits(fires: list[set[str]], names: list[str]) -> list[bool]:
    return [bool(f & set(names)) for f in fires]


def drift_table(rows: list[Row], now: list[set[str]], before: list[set[str]] | None) -> dict[str, dict[str, int]]:
    drifted = sum(1 for r in rows if r[2] == "d")
    print(f"drift checks on {len(rows)} candidates ({drifted} drifted, {len(rows) - drifted} good or copies)")
    out = {}
    for names in COMBOS:
        figures = {}
        for when, fires in (("", now), ("before_", before)):
            if fires is None:
                continue
            hit = _hits(fires, names)
            figures[when + "drifted_caught"] = sum(h for h, r in zip(hit, rows, strict=True) if r[2] == "d")
            figures[when + "good_rejected"] = sum(h for h, r in zip(hit, rows, strict=True) if r[2] != "d")
        out[",".join(names)] = figures
        was = (
            f"   (before: {figures['before_drifted_caught']:3d} / {figures['before_good_rejected']:3d})"
            if before is not None
            else ""
        )
        print(
            f"  {','.join(names):40s} drifted caught {figures['drifted_caught']:3d}"
            f"   good/copies rejected {figures['good_rejected']:3d}{was}"
        )
    return out


def rejected_table(rows: list[Row], now: list[set[str]], before: list[set[str]] | None, what: str) -> dict:
    """How many of `rows` each combination rejects (all faithful, or unlabelled)."""
    print(f"drift checks on {len(rows)} {what}")
    out: dict[str, dict[str, int]] = {}
    for names in COMBOS:
        out[",".join(names)] = figures = {"rejected": sum(_hits(now, names))}
        if before is not None:
            figures["before_rejected"] = sum(_hits(before, names))
        was = f"   (before: {figures['before_rejected']:3d})" if before is not None else ""
        print(f"  {','.join(names):40s} rejected {figures['rejected']:3d}{was}")
    return out


def flips(rows: list[Row], now: list[set[str]], before: list[set[str]]) -> list[dict[str, str]]:
    """The rows whose verdict under the default checks changed, printed with what fires now and before."""
    out = []
    for (q, p, label), n, b in zip(rows, now, before, strict=True):
        n_hit, b_hit = bool(n & set(DEFAULT_CHECKS)), bool(b & set(DEFAULT_CHECKS))
        if n_hit != b_hit:
            verdict = "now rejected" if n_hit else "now kept"
            fired = ",".join(sorted((n if n_hit else b) & set(DEFAULT_CHECKS)))
            out.append({"label": label, "verdict": verdict, "checks": fired, "question": q, "paraphrase": p})
            print(f"  [{label}] {verdict:12s} ({fired}): {q!r} -> {p!r}")
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sample", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--before", metavar="REV", help="also score the drift checks as they were at this git revision")
    args = parser.parse_args()
    data = json.loads(args.sample.read_text())
    sets = {
        "labelled_candidates": labelled_rows(data["questions"]),
        "round2_candidates": round2_rows(),
        "human_wordings_rejected": human_rows(),
        "held_out_unlabelled": held_out_rows(),
    }
    now = {name: fires_now(rows) for name, rows in sets.items()}
    before = {name: fires_at(args.before, rows) for name, rows in sets.items()} if args.before else {}
    figures: dict = {"before": args.before} if args.before else {}
    for name in ("labelled_candidates", "round2_candidates"):
        print(f"{name}:")
        figures[name] = drift_table(sets[name], now[name], before.get(name))
    for name, what in (
        ("human_wordings_rejected", f"human-written wordings of {SAMPLE.name} (all faithful)"),
        ("held_out_unlabelled", f"unlabelled held-out candidates of {HELD_OUT.name}"),
    ):
        figures[name] = rejected_table(sets[name], now[name], before.get(name), what)
    if args.before:
        print(f"verdicts under the default checks ({','.join(DEFAULT_CHECKS)}) changed since {args.before}")
        figures["flips"] = {name: flips(rows, now[name], before[name]) for name, rows in sets.items()}
    overlap_table(data["questions"])
    asyncio.run(pair_table(data["answer_pairs"]))
    print(f"wrote {write('guards', figures)}")


if __name__ == "__main__":
    main()
