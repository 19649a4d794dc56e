"""SimpleQA as distributed: `problem`, `answer`, `metadata` (a dict literal with topic and answer_type)."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

from evaluation.datasets.cells import items_from_rows, required_text
from evaluation.datasets.readers import Row
from evaluation.datasets.registry import register_format
from evaluation.records import Item, ItemVariant


@register_format(
    "simpleqa",
    detect=lambda columns, rows: {"problem", "answer"} <= columns,
    files=("simple_qa_test_set.csv", "simpleqa.csv", "simpleqa.jsonl", "simple_qa.jsonl"),
    hf="basicv8vc/SimpleQA",
)
def load_simpleqa(path: str | Path, *, limit: int | None = None) -> list[Item]:
    """SimpleQA (columns `problem`, `answer`, optional `metadata` with topic and answer_type)."""
    return items_from_rows(path, ["problem", "answer"], "SimpleQA", _simpleqa_item, limit=limit)


def _simpleqa_item(index: int, row: Row) -> Item:
    meta = _simpleqa_meta(row)
    return Item(
        id=f"simpleqa-{index}",
        kind="factual",
        gold=[required_text(row, "answer")],
        variants=[ItemVariant(id=0, question=required_text(row, "problem"))],
        category=str(meta.get("topic", "")),
        meta={"answer_type": meta.get("answer_type"), "source": row.path, "line": row.line},
    )


def _simpleqa_meta(row: Row) -> dict[str, Any]:
    raw = row.get("metadata")
    if isinstance(raw, dict):
        return raw
    if not raw:
        return {}
    try:
        value = ast.literal_eval(str(raw))  # distributed as a Python dict literal
    except (ValueError, SyntaxError):
        try:
            value = json.loads(str(raw))
        except json.JSONDecodeError:
            return {}
    return value if isinstance(value, dict) else {}
