"""Supply: how many rewordings the defaults make and keep for each wording of an items file, when every
one is wanted (no answers, no vote), on the default model.

    python research/supply.py ITEMS.jsonl [--limit 40] [-k 3]

A bench run's supply counts only what adaptive k asked for (a vote settled by the first rewording
counts 1); this asks for all k of every wording, as `SelfParaphraser().paraphrase` makes them:
renamings first, then the model's forms, then the drift checks. Takes the first `--limit` items in
file order (the held-out files are in a seeded shuffle) and all their wordings. Prints the share of
wordings kept 0 … k, the share with ≥ k − 1, where the kept ones came from, and the rejections by
reason; figures in research/results/supply.json.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
from pathlib import Path

from _results import write

from evaluation.datasets.items import load_items
from selfpara import SelfParaphraser


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("items", type=Path)
    parser.add_argument("--limit", type=int, default=40, help="items, first in file order (0: all)")
    parser.add_argument("-k", type=int, default=3)
    args = parser.parse_args()
    items = load_items(args.items)
    items = items[: args.limit] if args.limit else items
    sp = SelfParaphraser(k=args.k, cache="off")
    kept: collections.Counter[int] = collections.Counter()
    sources: collections.Counter[str] = collections.Counter()
    reasons: collections.Counter[str] = collections.Counter()
    by_category: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for item in items:
        for variant in item.variants:
            made, rejected, where = await sp.paraphrase(variant.question)
            n = len(made)
            kept[n] += 1
            by_category[item.category or "-"]["wordings"] += 1
            by_category[item.category or "-"]["enough"] += n >= args.k - 1
            reasons.update(r.reason for r in rejected)
            sources.update(where.get(text, "?").split(":")[0] for text in made)
            print(f"{n}/{args.k}  {variant.question[:70]!r}  {[where.get(text) for text in made]}")
    total = sum(kept.values())
    enough = sum(c for n, c in kept.items() if n >= args.k - 1)
    figures = {
        "items_file": str(args.items),
        "items": len(items),
        "wordings": total,
        "k": args.k,
        "kept": {str(n): kept[n] for n in range(args.k + 1)},
        "at_least_k_minus_1": round(enough / total, 3),
        "sources": dict(sources),
        "rejections": dict(reasons),
        "by_category": {c: dict(v) for c, v in sorted(by_category.items())},
    }
    print(f"\n{total} wordings of {len(items)} items, k = {args.k}")
    print("kept " + " / ".join(f"{n}: {kept[n]}" for n in range(args.k + 1)))
    print(f">= k - 1: {enough} of {total} ({100 * enough / total:.1f}%)")
    print(f"kept from: {dict(sources)}; rejected: {dict(reasons)}")
    for category, counts in sorted(by_category.items()):
        print(f"  {category:12s} {counts['enough']:3d} of {counts['wordings']:3d} >= k - 1")
    print("written to", write("supply", figures))


if __name__ == "__main__":
    asyncio.run(main())
