"""Reading one cell of a row: required columns, text, lists of aliases, booleans.

Shared by every dataset source and by the label-file reader of `evaluation.metrics`.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from evaluation.datasets.readers import Row, read_rows
from evaluation.records import Item

_TRUE = frozenset(("1", "true", "t", "yes", "y"))
_FALSE = frozenset(("0", "false", "f", "no", "n"))


def parse_boolean(value: Any) -> bool | None:
    """True/False from a bool, 0/1, or a yes/no/true/false spelling; None when it is none of them."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    text = str(value).strip().lower()
    return True if text in _TRUE else False if text in _FALSE else None


def require_columns(rows: Sequence[Row], columns: Iterable[str | None], what: str = "") -> None:
    """Raise DataError naming the file and the first row if a needed column is absent."""
    needed = [c for c in columns if c]
    if not rows:
        return
    present = set().union(*(r.keys() for r in rows[:50]))
    missing = [c for c in needed if c not in present]
    if missing:
        have = ", ".join(sorted(map(str, present))) or "none"
        label = f" for {what}" if what else ""
        raise rows[0].error(f"missing column(s) {missing}{label}; the file has: {have}")


def cell(row: Row, column: str | None, *, required: bool = False) -> Any:
    if not column:
        return None
    if column not in row:
        if required:
            raise row.error(f"missing column {column!r}")
        return None
    value = row[column]
    if isinstance(value, str):
        value = value.strip()
    if required and (value is None or value == "" or value == []):
        raise row.error(f"empty {column!r}")
    return value


def cell_text(row: Row, column: str | None, *, required: bool = False) -> str | None:
    value = cell(row, column, required=required)
    if value is None or value == "":
        return None
    if isinstance(value, (list, dict)):
        raise row.error(f"column {column!r} holds a {type(value).__name__}, expected text")
    return str(value)


def required_text(row: Row, column: str) -> str:
    """The cell as text; DataError naming the row when the column is missing or the cell empty."""
    value = cell_text(row, column, required=True)
    if value is None:  # cell_text raises first; this only narrows the type
        raise row.error(f"empty {column!r}")
    return value


def split_list(value: Any, separator: str | None) -> list[str]:
    """A cell as a list of strings: a JSON/Python list, a separated string, or one string."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        items = [str(v).strip() for v in value]
    else:
        text = str(value).strip()
        if not text:
            return []
        parsed: Any = None
        if text.startswith("[") and text.endswith("]"):
            try:
                parsed = json.loads(text)
            except json.JSONDecodeError:
                try:
                    parsed = ast.literal_eval(text)
                except (ValueError, SyntaxError):
                    parsed = None
        if isinstance(parsed, list):
            items = [str(v).strip() for v in parsed]
        else:
            items = [s.strip() for s in text.split(separator)] if separator else [text]
    seen: list[str] = []
    for item in items:
        if item and item not in seen:
            seen.append(item)
    return seen


def truthy(value: Any, row: Row, column: str) -> bool:
    """A true/false cell (empty: false); DataError naming the row for anything else."""
    parsed = parse_boolean(value) if str(value).strip() else False
    if parsed is None:
        raise row.error(f"column {column!r} must be true/false (or 1/0), got {value!r}")
    return parsed


def items_from_rows(
    path: str | Path, columns: Sequence[str], what: str, make: Callable[[int, Row], Item], *, limit: int | None
) -> list[Item]:
    """The items of a dataset file whose every row is one question: its rows read, the `columns` required
    (ConfigError naming `what` otherwise), each row made into an item by `make(index, row)`, at most
    `limit` of them."""
    rows = read_rows(path)
    require_columns(rows, columns, what)
    items: list[Item] = []
    for index, row in enumerate(rows):
        items.append(make(index, row))
        if limit is not None and len(items) >= limit:
            break
    return items
