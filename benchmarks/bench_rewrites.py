"""Supply of rewrites made without a model (selfpara.rewrites), measured offline on GSM8K questions.

    python benchmarks/bench_rewrites.py PATH/openai_gsm8k_main_test.csv [--n 200] [--k 3] [--start 0]

For each question: how many rewrites pass the filter a request applies (the near-copy rule and
the default drift checks, a renamed rewrite against the question renamed alike) when they alone
fill the k vote slots, with every kind and with each kind alone; the share of questions that
would keep >= k - 1 wordings from rewrites alone; which edits apply at all; and every rejection
(a rewrite is meant to pass: a rejection is a rewrite bug or a check that misreads it). No model
runs. Prints the figures and writes them to benchmarks/results/rewrites-gsm8k-START-END.json, with a
few examples of each kind to check by hand.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import write  # noqa: E402

from selfpara.config import build_config  # noqa: E402
from selfpara.paraphrase import LexicalFilter  # noqa: E402
from selfpara.rewrites import REWRITE_KINDS, filtered_rewrites, people, reorder  # noqa: E402

SETTINGS = {
    "all": list(REWRITE_KINDS),
    "numbers": ["numbers"],
    "names": ["names"],
    "names,numbers": ["names", "numbers"],
}


def supply(questions: list[str], k: int) -> dict:
    cfg = build_config(k=k)
    checks = cfg.drift_check_names
    out: dict = {"k": k, "questions": len(questions), "drift_checks": checks, "by_setting": {}}
    examples: dict[str, list[dict[str, str]]] = {}
    rejections: list[dict[str, str]] = []
    for label, kinds in SETTINGS.items():
        kept_counts: Counter[int] = Counter()
        kinds_kept: Counter[str] = Counter()
        for q in questions:
            lexical = LexicalFilter(q, cfg.max_overlap, cfg.reject_unrelated, cfg.min_word_changes)
            kept, rejected = filtered_rewrites(q, kinds, k, lexical, checks)
            kept_counts[len(kept)] += 1
            kinds_kept.update(r.kinds for r in kept)
            if label == "all":
                rejections += [
                    {"question": q, "text": r.text, "reason": r.reason, "detail": r.detail} for r in rejected
                ]
                for r in kept:
                    bucket = examples.setdefault(r.kinds, [])
                    if len(bucket) < 3:
                        bucket.append({"question": q, "rewrite": r.text})
        enough = sum(n for kept, n in kept_counts.items() if kept >= k - 1)
        out["by_setting"][label] = {
            "kept_distribution": {str(i): kept_counts.get(i, 0) for i in range(k + 1)},
            "share_with_at_least_k_minus_1": round(enough / len(questions), 3),
            "with_at_least_k_minus_1": enough,
            "kinds_kept": dict(kinds_kept.most_common()),
        }
    out["applicable"] = {
        "with_people": sum(1 for q in questions if people(q)),
        "reorderable": sum(1 for q in questions if reorder(q) is not None),
    }
    out["rejections"] = rejections
    out["examples"] = examples
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", type=Path, help="GSM8K test CSV (question,answer columns)")
    parser.add_argument("--n", type=int, default=200, help="questions to read (the first N after --start)")
    parser.add_argument("--start", type=int, default=0, help="first row to read")
    parser.add_argument("--k", type=int, default=3, help="vote slots (paraphrases requested)")
    args = parser.parse_args()
    with args.csv.open(newline="") as f:
        rows = list(csv.DictReader(f))[args.start : args.start + args.n]
    figures = supply([r["question"] for r in rows], args.k)
    print(f"{figures['questions']} GSM8K questions (rows {args.start}..{args.start + len(rows) - 1}), k={args.k}")
    applicable = figures["applicable"]
    print(f"  with people to rename {applicable['with_people']}, reorderable {applicable['reorderable']}")
    for label, row in figures["by_setting"].items():
        dist = ", ".join(f"{i}: {n}" for i, n in row["kept_distribution"].items())
        print(
            f"  rewrites={label:14s} kept per question {{{dist}}}   >= k-1: {row['with_at_least_k_minus_1']}"
            f" ({row['share_with_at_least_k_minus_1']:.1%})   kinds {row['kinds_kept']}"
        )
    print(f"  rejected rewrites (rewrites=all): {len(figures['rejections'])}")
    for r in figures["rejections"][:10]:
        print(f"    {r['reason']} {r['detail']}: {r['text'][:100]}")
    figures["rows"] = [args.start, args.start + len(rows)]
    print(f"wrote {write(f'rewrites-gsm8k-{args.start}-{args.start + len(rows)}', figures)}")


if __name__ == "__main__":
    main()
