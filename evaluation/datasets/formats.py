"""The public formats by name, and telling which one a file is from its column names."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from evaluation.datasets.gsm8k import load_gsm8k
from evaluation.datasets.math500 import load_math500
from evaluation.datasets.simpleqa import load_simpleqa
from evaluation.datasets.truthfulqa import load_truthfulqa
from evaluation.schema import Item

FormatLoader = Callable[..., list[Item]]
"""`loader(path, *, limit=None) -> items` of one public format."""

LOADERS: dict[str, FormatLoader] = {
    "simpleqa": load_simpleqa,
    "truthfulqa": load_truthfulqa,
    "gsm8k": load_gsm8k,
    "math500": load_math500,
}
"""Loader of each public format: a new format is one module and one entry here."""


def detect_format(columns: Iterable[str]) -> str | None:
    """Which public format a set of column names is: simpleqa, truthfulqa, gsm8k, math500, items, or None."""
    cols = {c.strip().lstrip("\ufeff") for c in columns}
    if {"id", "gold", "variants"} <= cols:
        return "items"
    if {"Question", "Best Answer", "Incorrect Answers"} <= cols:
        return "truthfulqa"
    if {"problem", "answer", "solution"} <= cols:
        return "math500"
    if {"problem", "answer"} <= cols:
        return "simpleqa"
    return None  # GSM8K's question/answer is too generic to tell by name: see looks_gsm8k


def looks_gsm8k(records: Iterable[dict[str, Any]]) -> bool:
    """GSM8K's `question`/`answer` columns are too generic to tell by name: a solution holds `####`."""
    first = list(records)[:5]
    columns = set().union(*(r.keys() for r in first))
    return {"question", "answer"} <= columns and any("####" in str(r.get("answer", "")) for r in first)
