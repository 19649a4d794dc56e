"""Supply and independence of kept paraphrases with one paraphrase call and with over-generation.

    python benchmarks/bench_overgenerate.py ITEMS.jsonl [...] [--calls 1,2] [--picks different,order] [--k 4]
        [--shard I/N]
        [--model MODEL] [--cache sqlite:///PATH] [--label NAME]
    python benchmarks/bench_overgenerate.py --labelled [benchmarks/data/guards_sample.json]

With items files (evaluation JSONL; every wording of every item is paraphrased), for each
`paraphrase_calls` setting and, above one call, each `paraphrase_pick`: selfpara's own
paraphrase step (`SelfParaphraser.paraphrase`: the request's filter, the default drift checks,
no rewrites) on the real model. It counts how many wordings keep 0..k paraphrases and >= k - 1,
why candidates were rejected, and how far the kept ones are from their wording and from each
other (mean word overlap, `selfpara.text.overlap`: lower is more different). Call i of every
setting is the same call, served by the call cache. Every kept paraphrase goes to the results
file with its wording, to check by hand. No answers are asked.

With --labelled (no model): on the hand-labelled candidates of docs/guards.md, whether choosing
the most different survivors (`selfpara.overgenerate.most_different`) keeps more drifted ones
than keeping the first survivors in order, as one call does: for each k' below the four
candidates per question, the drifted share of the chosen, both ways.

Figures are printed and written to benchmarks/results/overgenerate-LABEL.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections import Counter
from itertools import combinations
from pathlib import Path
from statistics import mean
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from _common import write  # noqa: E402

from selfpara.config import build_config  # noqa: E402
from selfpara.overgenerate import most_different  # noqa: E402
from selfpara.paraphrase import drift_filter, lexical_filter  # noqa: E402
from selfpara.pipeline import SelfParaphraser  # noqa: E402
from selfpara.text import overlap  # noqa: E402

LABELLED = Path(__file__).parent / "data" / "guards_sample.json"


def wordings(paths: list[Path], shard: str | None) -> list[tuple[str, int, str]]:
    """(item id, variant id, text) of every wording of the items (every N-th item from the I-th with a shard)."""
    items = [json.loads(line) for p in paths for line in p.read_text().splitlines() if line.strip()]
    if shard:
        i, n = (int(x) for x in shard.split("/"))
        items = [it for j, it in enumerate(items) if j % n == i - 1]
    return [(it["id"], v["id"], v["question"]) for it in items for v in it["variants"]]


def distances(question: str, kept: list[str]) -> tuple[float | None, float | None]:
    """(mean overlap of the kept with their wording, mean overlap between kept pairs); None where undefined."""
    to_q = mean(overlap(p, question) for p in kept) if kept else None
    pairs = [overlap(a, b) for a, b in combinations(kept, 2)]
    return to_q, (mean(pairs) if pairs else None)


def settings(calls: list[int], picks: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """(label, paraphrase settings) of each setting measured: one call once, more calls under every pick."""
    out = []
    for c in calls:
        for pick in picks if c > 1 else picks[:1]:
            out.append((f"{c}" if c == 1 else f"{c}/{pick}", {"paraphrase_calls": c, "paraphrase_pick": pick}))
    return out


async def supply(
    rows: list[tuple[str, int, str]], calls: list[int], picks: list[str], k: int, model: str, cache: str
) -> dict[str, Any]:
    sp = SelfParaphraser(model=model, k=k, cache=cache, adaptive=False)
    out: dict[str, Any] = {"k": k, "model": model, "wordings": len(rows), "by_setting": {}}
    for label, overrides in settings(calls, picks):
        counts: Counter[int] = Counter()
        reasons: Counter[str] = Counter()
        to_q, pairwise, kept_rows = [], [], []
        for item_id, variant, text in rows:
            kept, rejected = await sp.paraphrase(text, **overrides)
            counts[len(kept)] += 1
            reasons.update(r.reason for r in rejected)
            dq, dp = distances(text, kept)
            if dq is not None:
                to_q.append(dq)
            if dp is not None:
                pairwise.append(dp)
            kept_rows.append({"item": item_id, "variant": variant, "question": text, "kept": kept})
        enough = sum(n for kept, n in counts.items() if kept >= k - 1)
        out["by_setting"][label] = {
            "kept_counts": {str(n): counts.get(n, 0) for n in range(k + 1)},
            "keep_at_least_k_minus_1": enough,
            "share_at_least_k_minus_1": round(enough / len(rows), 3) if rows else None,
            "mean_kept": round(sum(n * m for n, m in counts.items()) / len(rows), 3) if rows else None,
            "rejections": dict(reasons.most_common()),
            "mean_overlap_with_wording": round(mean(to_q), 3) if to_q else None,
            "mean_overlap_between_kept": round(mean(pairwise), 3) if pairwise else None,
            "kept": kept_rows,
        }
        s = out["by_setting"][label]
        print(
            f"paraphrase_calls={label}: >= k-1 kept {enough}/{len(rows)} ({s['share_at_least_k_minus_1']}), "
            f"kept 0..k {list(s['kept_counts'].values())}, mean kept {s['mean_kept']}, overlap with wording "
            f"{s['mean_overlap_with_wording']}, between kept {s['mean_overlap_between_kept']}"
        )
    return out


def labelled(path: Path) -> dict[str, Any]:
    """The drifted share of the chosen survivors, most different against first in order, on labelled candidates."""
    cfg = build_config(k=4)
    questions = json.loads(path.read_text())["questions"]
    out: dict[str, Any] = {"source": str(path), "questions": len(questions), "by_k": {}}
    for k in (1, 2, 3):
        first: Counter[str] = Counter()
        far: Counter[str] = Counter()
        contested = 0
        for q in questions:
            label = {c["text"]: c["label"] for c in q["candidates"]}
            kept, _ = lexical_filter(
                q["question"], list(label), cfg.max_overlap, cfg.reject_unrelated, cfg.min_word_changes
            )
            kept, _ = drift_filter(q["question"], kept, cfg.drift_check_names)
            if len(kept) <= k:
                continue  # nothing to choose: both ways keep every survivor
            contested += 1
            first.update(label[t] for t in kept[:k])
            far.update(label[t] for t in most_different(q["question"], kept, k)[0])
        row = {"questions_with_a_choice": contested, "first_in_order": dict(first), "most_different": dict(far)}
        out["by_k"][str(k)] = row
        print(
            f"k'={k}: {contested} questions to choose in; labels kept in order {dict(first)}, "
            f"most different {dict(far)}"
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("items", nargs="*", type=Path)
    parser.add_argument("--labelled", nargs="?", const=LABELLED, type=Path, default=None)
    parser.add_argument("--calls", default="1,2")
    parser.add_argument("--picks", default="different,order", help="paraphrase_pick values, for calls > 1")
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--shard", default=None)
    parser.add_argument("--model", default=build_config().model, help="default: selfpara's default model")
    parser.add_argument(
        "--cache", default="sqlite:///" + str(Path("~/.cache/selfpara/overgenerate.sqlite").expanduser())
    )
    parser.add_argument("--label", default=None)
    args = parser.parse_args()
    if args.labelled is not None:
        write(f"overgenerate-{args.label or 'labelled'}", labelled(args.labelled))
        return
    if not args.items:
        parser.error("give items files, or --labelled")
    rows = wordings(args.items, args.shard)
    calls = [int(c) for c in args.calls.split(",")]
    picks = args.picks.split(",")
    result = asyncio.run(supply(rows, calls, picks, args.k, args.model, args.cache))
    result["items"] = [str(p) for p in args.items]
    result["shard"] = args.shard
    write(f"overgenerate-{args.label or 'gsm8k'}", result)


if __name__ == "__main__":
    main()
