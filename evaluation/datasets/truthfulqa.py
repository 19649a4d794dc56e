"""TruthfulQA as distributed: `Question`, `Best Answer`, `Correct Answers`, `Incorrect Answers`."""

from __future__ import annotations

from pathlib import Path

from evaluation.datasets.cells import cell, cell_text, items_from_rows, required_text, split_list
from evaluation.datasets.readers import Row
from evaluation.datasets.registry import register_format
from evaluation.records import Item, ItemVariant


@register_format(
    "truthfulqa",
    detect=lambda columns, rows: {"Question", "Best Answer", "Incorrect Answers"} <= columns,
    files=("TruthfulQA.csv", "truthfulqa.csv", "truthful_qa.csv", "truthfulqa.jsonl"),
    hf="truthfulqa/truthful_qa",
)
def load_truthfulqa(path: str | Path, *, limit: int | None = None) -> list[Item]:
    """TruthfulQA (`Question`, `Best Answer`, `Correct Answers`, `Incorrect Answers` split on ";").

    The gold list is the best answer followed by the other correct answers; the false
    references go to `incorrect`. Kind "truthful".
    """
    columns = ["Question", "Best Answer", "Correct Answers", "Incorrect Answers"]
    return items_from_rows(path, columns, "TruthfulQA", _truthfulqa_item, limit=limit)


def _truthfulqa_item(index: int, row: Row) -> Item:
    best = required_text(row, "Best Answer")
    correct = split_list(cell(row, "Correct Answers"), ";")
    incorrect = split_list(cell(row, "Incorrect Answers"), ";")
    if not incorrect:
        raise row.error("empty 'Incorrect Answers'")
    return Item(
        id=f"truthfulqa-{index}",
        kind="truthful",
        gold=[best] + [c for c in correct if c != best],
        incorrect=incorrect,
        variants=[ItemVariant(id=0, question=required_text(row, "Question"))],
        category=cell_text(row, "Category") or "",
        meta={
            "type": cell_text(row, "Type"),
            "source_url": cell_text(row, "Source"),
            "source": row.path,
            "line": row.line,
        },
    )
