"""MATH-500 as distributed: `problem`, `solution`, `answer`, `subject`, `level`, `unique_id`."""

from __future__ import annotations

from pathlib import Path

from evaluation.datasets.cells import cell_text, items_from_rows, required_text
from evaluation.datasets.readers import Row
from evaluation.datasets.registry import register_format
from evaluation.records import Item, ItemVariant


@register_format(
    "math500",
    detect=lambda columns, rows: {"problem", "answer", "solution"} <= columns,
    files=("HuggingFaceH4_MATH_500_test.csv", "math500.csv", "MATH-500.csv", "math500.jsonl"),
    hf="HuggingFaceH4/MATH-500",
)
def load_math500(path: str | Path, *, limit: int | None = None) -> list[Item]:
    """MATH-500 (`problem`, `solution`, `answer`, `subject`, `level`, optional `unique_id`). Kind "math"."""
    return items_from_rows(path, ["problem", "answer"], "MATH-500", _math500_item, limit=limit)


def _math500_item(index: int, row: Row) -> Item:
    return Item(
        id=cell_text(row, "unique_id") or f"math500-{index}",
        kind="math",
        gold=[required_text(row, "answer")],
        variants=[ItemVariant(id=0, question=required_text(row, "problem"))],
        category=cell_text(row, "subject") or "",
        meta={
            "level": cell_text(row, "level"),
            "solution": cell_text(row, "solution"),
            "source": row.path,
            "line": row.line,
        },
    )
