"""TruthfulQA as distributed: `Question`, `Best Answer`, `Correct Answers`, `Incorrect Answers`."""

from __future__ import annotations

from pathlib import Path

from evaluation.datasets.cells import cell, cell_text, require_columns, required_text, split_list
from evaluation.datasets.readers import read_rows
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
    rows = read_rows(path)
    require_columns(rows, ["Question", "Best Answer", "Correct Answers", "Incorrect Answers"], "TruthfulQA")
    items = []
    for index, row in enumerate(rows):
        question = required_text(row, "Question")
        best = required_text(row, "Best Answer")
        correct = split_list(cell(row, "Correct Answers"), ";")
        gold = [best] + [c for c in correct if c != best]
        incorrect = split_list(cell(row, "Incorrect Answers"), ";")
        if not incorrect:
            raise row.error("empty 'Incorrect Answers'")
        items.append(
            Item(
                id=f"truthfulqa-{index}",
                kind="truthful",
                gold=gold,
                incorrect=incorrect,
                variants=[ItemVariant(id=0, question=question)],
                category=cell_text(row, "Category") or "",
                meta={
                    "type": cell_text(row, "Type"),
                    "source_url": cell_text(row, "Source"),
                    "source": row.path,
                    "line": row.line,
                },
            )
        )
        if limit is not None and len(items) >= limit:
            break
    return items
