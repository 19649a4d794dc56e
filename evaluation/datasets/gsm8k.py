"""GSM8K as distributed: `question`, `answer` (a worked solution ending in `#### N`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from evaluation.datasets.cells import items_from_rows, required_text
from evaluation.datasets.readers import Row
from evaluation.datasets.registry import register_format
from evaluation.records import Item, ItemVariant

_GSM8K_FINAL = re.compile(r"####\s*(.+?)\s*$", re.S)


def gsm8k_gold(solution: str) -> str | None:
    """The number after `####` in a GSM8K solution, commas removed ("#### 1,000" -> "1000")."""
    m = _GSM8K_FINAL.search(solution.strip())
    return m.group(1).replace(",", "").strip() if m else None


def looks_gsm8k(records: Iterable[Mapping[str, Any]]) -> bool:
    """GSM8K's `question`/`answer` columns are too generic to tell by name: a solution holds `####`."""
    first = list(records)[:5]
    columns = set().union(*(r.keys() for r in first))
    return {"question", "answer"} <= columns and any("####" in str(r.get("answer", "")) for r in first)


@register_format(
    "gsm8k",
    detect=lambda columns, rows: looks_gsm8k(rows),
    files=("openai_gsm8k_main_test.csv", "gsm8k_test.csv", "gsm8k.csv", "gsm8k.jsonl"),
    hf="openai/gsm8k",
)
def load_gsm8k(path: str | Path, *, limit: int | None = None) -> list[Item]:
    """GSM8K (`question`, `answer` = worked solution ending in `#### N`). Kind "math", gold N."""
    return items_from_rows(path, ["question", "answer"], "GSM8K", _gsm8k_item, limit=limit)


def _gsm8k_item(index: int, row: Row) -> Item:
    solution = required_text(row, "answer")
    gold = gsm8k_gold(solution)
    if not gold:
        raise row.error("the 'answer' does not end in '#### <number>' (is this GSM8K?)")
    return Item(
        id=f"gsm8k-{index}",
        kind="math",
        gold=[gold],
        variants=[ItemVariant(id=0, question=required_text(row, "question"))],
        meta={"solution": solution, "source": row.path, "line": row.line},
    )
