"""Generate real paraphrase candidates of the default model for hand-labelling the drift checks.

    python research/drift_candidates.py --out research/data/drift_labels_round2.json

Draws `--n` short factual items (kind "factual") of evaluation/data/sample.jsonl with a fixed
seed, leaving out those already in research/data/guards_sample.json, and asks the configured
model (default: the embedded one) for k rewordings of each item's first wording once per
paraphrase temperature (default 0.7, with the default paraphrase seed, and 0). Each distinct
candidate is written with what the filter did to it (kept, or the lexical or drift rejection
and its detail), every drift check that fires on it alone, and `label: null`, to be labelled
by hand (g a faithful rewording, c a copy, d drifted: asks something else). Running again
with the same --out keeps the labels of candidates already there. The verdicts are this
checkout's (its commit is written as `checks_at`); research/guards.py rescores the
labelled file with the checks of any revision.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import subprocess
from pathlib import Path
from typing import Any

from selfpara import SelfParaphraser
from selfpara.pipeline.drift import DRIFT_CHECKS
from selfpara.result import Usage

ROOT = Path(__file__).parents[1]
SAMPLE = ROOT / "evaluation" / "data" / "sample.jsonl"
ALREADY_LABELLED = ROOT / "research" / "data" / "guards_sample.json"
log = logging.getLogger("drift_candidates")


def draw_items(n: int, seed: int) -> list[dict[str, Any]]:
    """`n` factual items of the sample set not in the first labelled set, drawn with `seed`, in file order."""
    seen = {q["id"] for q in json.loads(ALREADY_LABELLED.read_text())["questions"]}
    pool = [r for line in SAMPLE.read_text().splitlines() if (r := json.loads(line))["kind"] == "factual"]
    pool = [r for r in pool if r["id"] not in seen]
    chosen = {r["id"] for r in random.Random(seed).sample(pool, n)}
    return [r for r in pool if r["id"] in chosen]


def verdicts(question: str, text: str) -> dict[str, str]:
    """Each drift check that rejects `text` as a paraphrase of `question`, with its detail."""
    return {name: detail for name, (_, check) in DRIFT_CHECKS.items() if (detail := check(question, text))}


async def generate(items: list[dict[str, Any]], k: int, temperatures: list[float]) -> list[dict[str, Any]]:
    """One row per distinct candidate: its item, and what the filter did to it at each temperature that wrote it."""
    para = SelfParaphraser(k=k)
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for item in items:
        question = item["variants"][0]["question"]
        for temperature in temperatures:
            cfg = para.config.with_overrides(paraphrase_temperature=temperature)
            usage = Usage()
            candidates = await para.generate_candidates(question, cfg, usage)
            kept, rejected = await para.filter_candidates(question, candidates, cfg, usage)
            why = {r.text: (r.reason, r.detail) for r in rejected}
            for text in candidates:
                row = rows.setdefault(
                    (item["id"], text),
                    {"item": item["id"], "question": question, "text": text, "filter": {}},
                )
                reason, detail = ("kept", None) if text in kept else why[text]
                row["filter"][str(temperature)] = f"{reason}: {detail}" if detail else reason
            log.info("%s T=%s: %d candidates, %d kept", item["id"], temperature, len(candidates), len(kept))
    return list(rows.values())


def finish(rows: list[dict[str, Any]], labels: dict[tuple[str, str], dict[str, Any]]) -> list[dict[str, Any]]:
    """Add each row's drift verdicts (this checkout's checks) and its label (kept from `labels`)."""
    for row in rows:
        row["checks"] = verdicts(row["question"], row["text"])
        old = labels.get((row["item"], row["text"]), {})
        row["label"], row["note"] = old.get("label"), old.get("note")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="write here (labels already there are kept)")
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--temperatures", type=float, nargs="+", default=[0.7, 0.0])
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    path: Path = args.out
    old = json.loads(path.read_text())["candidates"] if path.exists() else []
    items = draw_items(args.n, args.seed)
    rows = finish(asyncio.run(generate(items, args.k, args.temperatures)), {(c["item"], c["text"]): c for c in old})
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    data = {
        "about": f"Paraphrase candidates of the default model for {len(items)} factual items of {SAMPLE.name} "
        f"(seed {args.seed}, not in {ALREADY_LABELLED.name}), k={args.k}, paraphrase temperatures "
        f"{args.temperatures}; labels by hand: g faithful, c copy, d drifted. `checks`: the drift checks that "
        "fire on the candidate alone, as they were at `checks_at`; `filter`: what the whole filter did at each "
        "paraphrase temperature that wrote it. See drift_labels_round2.md.",
        "checks_at": commit.stdout.strip(),
        "candidates": rows,
    }
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    log.info("wrote %d candidates to %s", len(rows), path)


if __name__ == "__main__":
    main()
