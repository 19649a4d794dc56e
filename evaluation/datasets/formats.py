"""The public formats by name (`FORMATS`, filled by their modules' `@register_format`), and
telling which one a file is from its columns and first rows."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

# The built-in formats register themselves on import, in this order: the order detection tries
# them in (MATH-500's problem/answer/solution before SimpleQA's problem/answer).
# isort: off
from evaluation.datasets import truthfulqa, math500, simpleqa, gsm8k, nq_open, comqa  # noqa: F401

# isort: on
from evaluation.datasets.gsm8k import looks_gsm8k
from evaluation.datasets.registry import FORMATS, DatasetFormat, FormatLoader, register_format

__all__ = ["FORMATS", "DatasetFormat", "FormatLoader", "detect_format", "looks_gsm8k", "register_format"]


def detect_format(columns: Iterable[str], rows: Sequence[Mapping[str, Any]] = ()) -> str | None:
    """Which format a file is, from its column names and first rows: `items` (a saved variant
    file), the name of the first registered format that recognises it, or None."""
    cols = {c.strip().lstrip("\ufeff") for c in columns}
    if {"id", "gold", "variants"} <= cols:
        return "items"
    first = list(rows[:20])
    for name, fmt in FORMATS.items():
        if fmt.detect is not None and fmt.detect(cols, first):
            return name
    return None
