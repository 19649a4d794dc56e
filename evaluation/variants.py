"""The items of a run and the variants every arm answers: the dataset's own, a saved file, or generated.

Generated variants come from the pipeline's own paraphrase and filter steps, and are
saved with the run (items.jsonl) so that every arm and every rerun sees the same ones.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

from evaluation.bench_config import BenchConfig, RunOptions, parse_shard
from evaluation.cache import caching_client
from evaluation.datasets import load_dataset, load_items, save_items
from evaluation.records import Item, ItemVariant
from evaluation.rundir import ITEMS_FILE
from selfpara.config import MAX_K
from selfpara.errors import ConfigError
from selfpara.models import ModelClient
from selfpara.result import Usage

DEFAULT_ARMS = ("raw", "selfpara")
"""The arms `selfpara bench` runs when none are named; the oracle joins them where it can (`default_arms`)."""


def default_arms(dataset: str, variants: str, max_variants: int | None, data_dir: str | None = None) -> list[str]:
    """raw and selfpara, and the oracle wherever the run answers the dataset's own wordings and an
    item has more than one: the oracle votes with them, and the report then measures selfpara's
    efficiency against it (`evaluation.report.ceiling`). Generated wordings are the model's own,
    not a ceiling, so `--variants generate:N` gets no oracle.

    Args:
        dataset, variants, max_variants, data_dir: as the bench's (`BenchConfig`, `RunOptions`).
    """
    own = parse_variants(variants)[0] == "data" and (max_variants is None or max_variants > 1)
    several = own and any(len(item.variants) > 1 for item in load_dataset(dataset, data_dir=data_dir))
    return [*DEFAULT_ARMS, "oracle"] if several else list(DEFAULT_ARMS)


def select_items(items: list[Item], limit: int | None, seed: int) -> list[Item]:
    """A seeded random subset of `limit` items, kept in dataset order (all items without a limit)."""
    if limit is None or limit >= len(items):
        return list(items)
    chosen = sorted(random.Random(seed).sample(range(len(items)), limit))
    return [items[i] for i in chosen]


def shard_items(items: list[Item], spec: str | None) -> list[Item]:
    """Every N-th item starting at the I-th (shard I/N), so that shards of a sorted subset are alike.

    Shards are disjoint and together hold every item: run one per core, then join them with
    `scripts/merge_runs.py`.
    """
    shard = parse_shard(spec)
    if shard is None:
        return list(items)
    i, n = shard
    return items[i - 1 :: n]


def parse_variants(spec: str) -> tuple[str, int | str | None]:
    """`data` -> ("data", None); `generate:N` -> ("generate", N); anything else -> ("file", path)."""
    s = spec.strip()
    if s == "data":
        return "data", None
    if s.startswith("generate"):
        _, _, n = s.partition(":")
        try:
            count = int(n) if n else 3
        except ValueError:
            raise ConfigError(f"--variants {spec!r}: write generate:N with N a whole number, e.g. generate:3") from None
        if not 1 <= count <= MAX_K:
            raise ConfigError(f"--variants {spec!r}: N must be between 1 and {MAX_K}")
        return "generate", count
    if not s:
        raise ConfigError("--variants is empty: use data, generate:N or the path of an items JSONL file")
    return "file", s


def variants_from_file(items: list[Item], path: str) -> list[Item]:
    """Each item with the variants the file holds for its id (gold and the rest from the dataset)."""
    p = Path(path).expanduser()
    if not p.exists():
        raise ConfigError(f"--variants {path!r}: no such file (use data, generate:N or an items JSONL path)")
    saved = {item.id: item for item in load_items(p)}
    missing = [i.id for i in items if i.id not in saved]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise ConfigError(f"{p}: has no variants for item(s) {shown} of the dataset")
    return [item.model_copy(update={"variants": saved[item.id].variants}) for item in items]


async def generate_variants(
    items: list[Item], n: int, client: ModelClient, model: str, check: str, usage: Usage, concurrency: int
) -> list[Item]:
    """Each item's original plus up to `n` paraphrases made and verified by selfpara's own paraphrase step."""
    from selfpara import SelfParaphraser
    from selfpara.config import build_config

    cfg = build_config(model=model, k=n, paraphrase_check=check)
    sp = SelfParaphraser(cfg, client=client)
    limit = asyncio.Semaphore(concurrency)

    async def one(item: Item) -> Item:
        original = item.original
        async with limit:  # the pipeline's own paraphrase and filter steps, not a copy
            kept, rejected, sources = await sp.paraphrase(original.question, usage=usage)
        paraphrases = [ItemVariant(id=i + 1, question=t, context=original.context) for i, t in enumerate(kept)]
        variants = [original, *paraphrases]
        generated = {
            "requested": n,
            "kept": len(kept),
            "sources": [sources[t] for t in kept],
            "rejected": [r.model_dump() for r in rejected],
        }
        meta = {**item.meta, "generated_variants": generated}
        return item.model_copy(update={"variants": variants, "meta": meta})

    return list(await asyncio.gather(*(one(item) for item in items)))


async def build_items(
    config: BenchConfig, out: Path, options: RunOptions, client: ModelClient
) -> tuple[list[Item], dict[str, Any]]:
    """The run's items: from items.jsonl when resuming, else loaded, subset, with their variants (saved)."""
    saved = out / ITEMS_FILE
    if saved.exists():
        return load_items(saved), {}
    kind, arg = parse_variants(config.variants)
    items = load_dataset(config.dataset, data_dir=options.data_dir)
    if not items:
        raise ConfigError(f"dataset {config.dataset!r} holds no items")
    items = shard_items(select_items(items, config.limit, config.seed), config.shard)
    if not items:
        raise ConfigError(f"shard {config.shard} of {config.dataset!r} holds no items")
    extra: dict[str, Any] = {}
    if kind == "file":
        items = variants_from_file(items, str(arg))
    elif kind == "generate":
        usage = Usage()
        gen_client, _ = caching_client(client, options.cache, {"arm": "_variants"}, api_key=options.api_key)
        items = await generate_variants(
            items, int(arg or 3), gen_client, config.model, config.paraphrase_check, usage, max(1, options.concurrency)
        )
        extra["variant_generation_usage"] = usage.model_dump()
    if config.max_variants is not None:
        items = [i.model_copy(update={"variants": i.variants[: config.max_variants]}) for i in items]
    save_items(items, saved)
    return items, extra
