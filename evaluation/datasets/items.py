"""Saved variant files (items with their variants as JSONL) and the built-in sample set stored as one."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path

from pydantic import ValidationError

from evaluation.datasets.readers import Row, read_rows
from evaluation.records import Item
from selfpara.errors import ConfigError


def sample_path() -> Path:
    """Path of the built-in sample set (packaged as evaluation/data/sample.jsonl)."""
    return Path(str(resources.files("evaluation") / "data" / "sample.jsonl"))


def load_sample(*, limit: int | None = None, categories: Sequence[str] | None = None) -> list[Item]:
    """The built-in sample set: short factual and arithmetic questions, each with 3 written paraphrases."""
    items = load_items(sample_path())
    if categories:
        wanted = set(categories)
        unknown = wanted - {i.category for i in items}
        if unknown:
            raise ConfigError(
                f"unknown sample categories {sorted(unknown)}; known: {sorted({i.category for i in items})}"
            )
        items = [i for i in items if i.category in wanted]
    return items[:limit] if limit is not None else items


def save_items(items: Iterable[Item], path: str | Path) -> Path:
    """Write items with their variants as JSONL (one item a line), atomically. Returns the path."""
    p = Path(path).expanduser()
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for item in items:
            fh.write(item.model_dump_json() + "\n")
    os.replace(tmp, p)
    return p


def load_items(path: str | Path, *, limit: int | None = None) -> list[Item]:
    """Items saved by `save_items` (or written by hand in the same schema), validated line by line."""
    rows = read_rows(path)
    items: list[Item] = []
    seen: dict[str, int] = {}
    for row in rows:
        try:
            item = Item.model_validate(dict(row))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "item"
            raise row.error(f"not a valid item: {where}: {first['msg']}") from None
        _check_item(item, row)
        if item.id in seen:
            raise row.error(f"duplicate item id {item.id!r} (first on line {seen[item.id]})")
        seen[item.id] = row.line
        items.append(item)
        if limit is not None and len(items) >= limit:
            break
    return items


def _check_item(item: Item, row: Row) -> None:
    if not item.variants:
        raise row.error(f"item {item.id!r} has no variants (variants[0] must be the original)")
    ids = [v.id for v in item.variants]
    if ids[0] != 0:
        raise row.error(f"item {item.id!r}: variants[0] must be the original (id 0), got id {ids[0]}")
    if len(set(ids)) != len(ids):
        raise row.error(f"item {item.id!r} repeats a variant id: {ids}")
    if not item.gold:
        raise row.error(f"item {item.id!r} has no gold answer")
    for variant in item.variants:
        if not variant.question.strip():
            raise row.error(f"item {item.id!r}: variant {variant.id} has an empty question")
