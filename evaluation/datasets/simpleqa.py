"""SimpleQA as distributed: `problem`, `answer`, `metadata` (a dict literal with topic and answer_type)."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

from evaluation.datasets.cells import require_columns, required_text
from evaluation.datasets.readers import Row, read_rows
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
    rows = read_rows(path)
    require_columns(rows, ["problem", "answer"], "SimpleQA")
    items = []
    for index, row in enumerate(rows):
        question = required_text(row, "problem")
        answer = required_text(row, "answer")
        meta = _simpleqa_meta(row)
        items.append(
            Item(
                id=f"simpleqa-{index}",
                kind="factual",
                gold=[answer],
                variants=[ItemVariant(id=0, question=question)],
                category=str(meta.get("topic", "")),
                meta={"answer_type": meta.get("answer_type"), "source": row.path, "line": row.line},
            )
        )
        if limit is not None and len(items) >= limit:
            break
    return items


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
