"""NQ-open as distributed (google-research-datasets/natural-questions, `nq_open/`): one JSON object a
line, `question` (lower case, no question mark, as people typed it into Google) and `answer` (a list of
acceptable short answers). One wording per question: the user's view of the wrapper (A_orig, calls per
answer), not A_strict."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evaluation.datasets.cells import cell, items_from_rows, required_text, split_list
from evaluation.datasets.readers import Row
from evaluation.datasets.registry import register_format
from evaluation.records import Item, ItemVariant


def looks_nq_open(columns: set[str], rows: Sequence[Mapping[str, Any]]) -> bool:
    """NQ-open's columns are `question` and `answer` only, and its answers are lists (GSM8K's are text)."""
    return columns == {"question", "answer"} and bool(rows) and all(isinstance(r.get("answer"), list) for r in rows)


@register_format(
    "nq-open",
    detect=looks_nq_open,
    files=("NQ-open.dev.jsonl", "nq_open.dev.jsonl", "nq-open.jsonl"),
    hf="google-research-datasets/nq_open",
)
def load_nq_open(path: str | Path, *, limit: int | None = None) -> list[Item]:
    """NQ-open (`question`, `answer` = a list of short answers). Kind "factual"; the answers are the gold aliases."""
    return items_from_rows(path, ["question", "answer"], "NQ-open", _nq_item, limit=limit)


def _nq_item(index: int, row: Row) -> Item:
    gold = split_list(cell(row, "answer", required=True), None)
    if not gold:
        raise row.error("empty 'answer'")
    return Item(
        id=f"nq-{index}",
        kind="factual",
        gold=gold,
        variants=[ItemVariant(id=0, question=asked(required_text(row, "question")))],
        meta={"source": row.path, "line": row.line},
    )


def asked(query: str) -> str:
    """A search query as a question: first letter upper case and a question mark ("who wrote x" → "Who wrote
    x?"), as a chat user would type it; the words stay as the user wrote them."""
    text = query.strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith(("?", ".", "!")) else text + "?"
