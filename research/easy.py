"""Easy questions, natural answers: does the vote see that agreeing sentences are one answer?

Asks the default model eleven easy questions as `selfpara ask` does (k = 3, natural answers,
128 tokens), then votes the *same* answers twice, side by side: with the equivalence chain
before `core` (exact,numeric,contains,distinct) and with the default chain now. For each it
prints the clusters, the vote share, whether the low_vote_share flag fires, the confidence and
the time spent clustering; and the whole wrapped answer's calls and seconds (shared by both,
since `core` calls no model).

The questions were written down before the first run and are not changed to suit it.

Run: python research/easy.py   (figures in research/results/easy.json)
"""

from __future__ import annotations

import asyncio
import time

from _results import write

from selfpara import SelfParaphraser
from selfpara.pipeline.equivalence import build_equivalence
from selfpara.pipeline.vote import vote

QUESTIONS = [
    "What is the capital of France?",  # the README's quick-start question
    "What is the capital of Italy?",
    "What is 2+2?",
    "What is the capital of Japan?",
    "Who wrote Romeo and Juliet?",
    "What is the largest planet in the solar system?",
    "What is the chemical symbol for gold?",
    "How many days are in a week?",
    "What is the boiling point of water in Celsius at sea level?",
    "Which ocean is the largest?",
    "What is 10 minus 3?",
]
BEFORE = ["exact", "numeric", "contains", "distinct"]


async def main() -> None:
    sp = SelfParaphraser(k=3, max_tokens=128)
    rows = []
    for question in QUESTIONS:
        started = time.perf_counter()
        result = await sp.aanswer(question)
        wrapped_s = time.perf_counter() - started
        row = {"question": question, "answers": [a.text for a in result.answers if a.ok], "wrapped_s": wrapped_s}
        row["calls"] = result.usage.calls
        cfg = sp.config
        for label, names in (("before", BEFORE), ("now", cfg.equivalence_functions)):
            eq = build_equivalence(names, client=sp.client, judge_model=cfg.model)
            answers = [a.model_copy() for a in result.answers]
            t = time.perf_counter()
            outcome = await vote(question, answers, eq, rule=cfg.vote_rule)
            row[label] = {
                "clusters": [c.members for c in outcome.clusters],
                "vote_share": outcome.vote_share,
                "low_vote_share": outcome.vote_share < cfg.low_vote_share_threshold,
                "confidence": round(outcome.confidence, 3),
                "undecided": outcome.undecided,
                "cluster_ms": 1000 * (time.perf_counter() - t),
            }
        rows.append(row)
        b, n = row["before"], row["now"]
        print(
            f"{question[:48]:48} before {b['vote_share']:.2f}{' LOW' if b['low_vote_share'] else '    '} "
            f"now {n['vote_share']:.2f}{' LOW' if n['low_vote_share'] else '    '} "
            f"clusters {n['clusters']}  {wrapped_s:.1f}s"
        )
        for text in row["answers"]:
            print("    ", text.replace("\n", " ")[:110])
    summary = {
        label: {
            "vote_share_1": sum(r[label]["vote_share"] == 1.0 for r in rows),
            "low_vote_share": sum(r[label]["low_vote_share"] for r in rows),
            "mean_cluster_ms": sum(r[label]["cluster_ms"] for r in rows) / len(rows),
        }
        for label in ("before", "now")
    }
    summary["mean_wrapped_s"] = sum(r["wrapped_s"] for r in rows) / len(rows)
    print(summary)
    print("written to", write("easy", {"questions": len(rows), "summary": summary, "rows": rows}))


if __name__ == "__main__":
    asyncio.run(main())
