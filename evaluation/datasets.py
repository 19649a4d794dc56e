"""Loaders that turn datasets into `Item`s with their variant sets.

Sources:

- generic CSV / TSV / JSON / JSONL with chosen columns (`load_table`): one row per
  question (paraphrases in columns, or in one column as a list), or one row per
  variant grouped by a question-id column (as published paraphrase sets are);
- the four public formats (`load_simpleqa`, `load_truthfulqa`, `load_gsm8k`,
  `load_math500`), as distributed (CSV or JSONL with the original column names);
- a Hugging Face `datasets` name (`load_hf`, needs the `datasets` package and network);
- the built-in sample set (`load_sample`): short factual and arithmetic questions with
  gold aliases and three written paraphrases each;
- a saved variant file (`save_items` / `load_items`): items with their variants as
  JSONL, so that every arm and every rerun sees the same variants.

`load_dataset(spec)` picks one of them by name. Every error names the file and line.
"""

from __future__ import annotations

import ast
import csv
import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evaluation.schema import Item, ItemKind, ItemVariant
from selfpara.errors import ConfigError, InputError

__all__ = [
    "DATASETS",
    "DataError",
    "Row",
    "detect_format",
    "load_dataset",
    "load_gsm8k",
    "load_hf",
    "load_items",
    "load_math500",
    "load_sample",
    "load_simpleqa",
    "load_table",
    "load_truthfulqa",
    "read_rows",
    "sample_path",
    "save_items",
]

DATASETS = ("sample", "simpleqa", "truthfulqa", "gsm8k", "math500")
"""Dataset names `load_dataset` knows (besides paths and `hf:NAME`)."""

DATA_DIR_ENV = "SELFPARA_DATA_DIR"
"""Environment variable naming a folder that holds the public benchmark files."""

# File names the public benchmarks are commonly distributed under, looked up in the data dir.
_KNOWN_FILES: dict[str, tuple[str, ...]] = {
    "simpleqa": ("simple_qa_test_set.csv", "simpleqa.csv", "simpleqa.jsonl", "simple_qa.jsonl"),
    "truthfulqa": ("TruthfulQA.csv", "truthfulqa.csv", "truthful_qa.csv", "truthfulqa.jsonl"),
    "gsm8k": ("openai_gsm8k_main_test.csv", "gsm8k_test.csv", "gsm8k.csv", "gsm8k.jsonl"),
    "math500": ("HuggingFaceH4_MATH_500_test.csv", "math500.csv", "MATH-500.csv", "math500.jsonl"),
}
_HF_NAMES = {
    "simpleqa": "basicv8vc/SimpleQA",
    "truthfulqa": "truthfulqa/truthful_qa",
    "gsm8k": "openai/gsm8k",
    "math500": "HuggingFaceH4/MATH-500",
}


class DataError(InputError):
    """A data file cannot be used. The message starts with `file:line:` where a line is known."""

    def __init__(self, message: str, *, path: str | Path | None = None, line: int | None = None) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        where = ""
        if self.path is not None:
            where = f"{self.path}:{line}: " if line is not None else f"{self.path}: "
        super().__init__(where + message)


class Row(dict):  # type: ignore[type-arg]
    """One record of a data file, with the file and the line where it starts."""

    path: str
    line: int

    @classmethod
    def make(cls, data: dict[str, Any], path: str, line: int) -> Row:
        row = cls(data)
        row.path, row.line = path, line
        return row

    def error(self, message: str) -> DataError:
        return DataError(message, path=self.path, line=self.line)


# ---------------------------------------------------------------------------------------
# reading raw rows


def read_rows(path: str | Path) -> list[Row]:
    """Rows of a CSV/TSV (header line), JSONL (one object a line) or JSON (a list of objects) file.

    Raises DataError for a missing or empty file, a malformed line, or a record that is not an object.
    """
    p = Path(path).expanduser()
    if not p.exists():
        raise DataError("no such file", path=p)
    if p.is_dir():
        raise DataError("is a directory, not a data file", path=p)
    suffix = p.suffix.lower()
    try:
        text = p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", path=p) from None
    if not text.strip():
        raise DataError("file is empty", path=p)
    if suffix in (".jsonl", ".ndjson"):
        rows = list(_jsonl_rows(text, str(p)))
    elif suffix == ".json":
        rows = _json_rows(text, str(p))
    elif suffix in (".csv", ".tsv", ".txt", ""):
        rows = list(_csv_rows(text, str(p), "\t" if suffix == ".tsv" else ","))
    else:
        raise DataError(f"unknown file type {suffix!r}: use .csv, .tsv, .jsonl or .json", path=p)
    if not rows:
        raise DataError("file has a header but no records", path=p)
    return rows


def _jsonl_rows(text: str, path: str) -> Iterator[Row]:
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"not valid JSON ({exc.msg} at column {exc.colno})", path=path, line=number) from None
        if not isinstance(data, dict):
            raise DataError(f"expected a JSON object, got {type(data).__name__}", path=path, line=number)
        yield Row.make(data, path, number)


def _json_rows(text: str, path: str) -> list[Row]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"not valid JSON ({exc.msg} at column {exc.colno})", path=path, line=exc.lineno) from None
    if isinstance(data, dict):  # {"data": [...]} or {"rows": [...]}
        lists = [v for v in data.values() if isinstance(v, list)]
        if len(lists) != 1:
            raise DataError("expected a JSON list of objects", path=path)
        data = lists[0]
    if not isinstance(data, list):
        raise DataError("expected a JSON list of objects", path=path)
    rows = []
    for index, record in enumerate(data):
        if not isinstance(record, dict):
            raise DataError(f"record {index} is {type(record).__name__}, not an object", path=path)
        rows.append(Row.make(record, path, index + 1))  # "line" = record number for .json
    return rows


def _csv_rows(text: str, path: str, delimiter: str) -> Iterator[Row]:
    reader = csv.reader(text.splitlines(keepends=True), delimiter=delimiter)
    try:
        header = next(reader)
    except StopIteration:
        return
    except csv.Error as exc:
        raise DataError(f"malformed CSV header ({exc})", path=path, line=1) from None
    header = [h.strip() for h in header]
    if not any(header):
        raise DataError("the header line is empty", path=path, line=1)
    dupes = sorted({h for h in header if h and header.count(h) > 1})
    if dupes:
        raise DataError(f"duplicate column(s) {dupes} in the header", path=path, line=1)
    end = reader.line_num
    while True:
        start = end + 1
        try:
            values = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise DataError(f"malformed CSV ({exc})", path=path, line=start) from None
        end = reader.line_num
        if not values or all(not v.strip() for v in values):
            continue
        if len(values) > len(header):
            raise DataError(
                f"{len(values)} fields but the header names {len(header)} columns", path=path, line=start
            )
        values = values + [""] * (len(header) - len(values))
        yield Row.make(dict(zip(header, values)), path, start)


# ---------------------------------------------------------------------------------------
# cell helpers


def _require_columns(rows: Sequence[Row], columns: Iterable[str | None], what: str = "") -> None:
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


def _cell(row: Row, column: str | None, *, required: bool = False) -> Any:
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


def _text(row: Row, column: str | None, *, required: bool = False) -> str | None:
    value = _cell(row, column, required=required)
    if value is None or value == "":
        return None
    if isinstance(value, (list, dict)):
        raise row.error(f"column {column!r} holds a {type(value).__name__}, expected text")
    return str(value)


def _split(value: Any, separator: str | None) -> list[str]:
    """A cell as a list of strings: a JSON/Python list, a separated string, or one string."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        items = [str(v).strip() for v in value]
    else:
        text = str(value).strip()
        if not text:
            return []
        items = None
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
        if items is None:
            items = [s.strip() for s in text.split(separator)] if separator else [text]
    seen: list[str] = []
    for item in items:
        if item and item not in seen:
            seen.append(item)
    return seen


def _truthy(value: Any, row: Row, column: str) -> bool:
    from evaluation.metrics.rows import _boolean

    parsed = _boolean(value) if str(value).strip() else False
    if parsed is None:
        raise row.error(f"column {column!r} must be true/false (or 1/0), got {value!r}")
    return parsed


# ---------------------------------------------------------------------------------------
# generic tables


def load_table(
    path: str | Path,
    *,
    question_col: str = "question",
    gold_col: str | None = "answer",
    alias_sep: str | None = "|",
    id_col: str | None = None,
    paraphrase_cols: Sequence[str] = (),
    paraphrase_sep: str | None = None,
    group_col: str | None = None,
    variant_col: str | None = None,
    original_col: str | None = None,
    context_col: str | None = None,
    incorrect_col: str | None = None,
    category_col: str | None = None,
    kind: ItemKind = "factual",
    kind_col: str | None = None,
    require_gold: bool = True,
    limit: int | None = None,
) -> list[Item]:
    """Items from a CSV/TSV/JSONL/JSON file with the given columns.

    Args:
        question_col: the question text.
        gold_col: the gold answer; several aliases separated by `alias_sep` (or a JSON list).
        id_col: item id; default: the group id, else `row-<line>`.
        paraphrase_cols: columns holding paraphrases of the question (one per column; a
            single column may also hold a JSON list or `paraphrase_sep`-separated texts).
        group_col: rows sharing this column's value are the variants of one item (one row
            per variant). The original is the row whose `original_col` is true, else the
            row whose `variant_col` is 0, else the first row of the group.
        variant_col: variant number within a group (orders the variants; 0 = original).
        original_col: true/false marking the original row of a group.
        context_col: an optional passage; with grouped rows a variant may change only it.
        incorrect_col: false references (TruthfulQA style), separated like the gold.
        category_col: a category label kept on each item.
        kind: kind of every item ("factual", "math", "truthful"), unless `kind_col` says.
        require_gold: raise for a row without gold (set False to load questions only).
        limit: keep the first `limit` items.
    """
    rows = read_rows(path)
    _require_columns(
        rows,
        [question_col, gold_col if require_gold else None, id_col, group_col, variant_col, original_col,
         context_col, *paraphrase_cols],
    )
    if group_col:
        items = _grouped_items(
            rows, question_col=question_col, gold_col=gold_col, alias_sep=alias_sep, id_col=id_col,
            group_col=group_col, variant_col=variant_col, original_col=original_col, context_col=context_col,
            incorrect_col=incorrect_col, category_col=category_col, kind=kind, kind_col=kind_col,
            require_gold=require_gold,
        )
    else:
        items = []
        seen: dict[str, int] = {}
        for row in rows:
            question = _text(row, question_col, required=True)
            assert question is not None
            gold = _split(_cell(row, gold_col), alias_sep)
            if require_gold and not gold:
                raise row.error(f"empty gold answer in column {gold_col!r}")
            paraphrases: list[str] = []
            for column in paraphrase_cols:
                paraphrases += _split(_cell(row, column), paraphrase_sep)
            context = _text(row, context_col)
            variants = [ItemVariant(id=0, question=question, context=context)]
            for text in paraphrases:
                if text != question and all(text != v.question for v in variants):
                    variants.append(ItemVariant(id=len(variants), question=text, context=context))
            item_id = _text(row, id_col, required=bool(id_col)) or f"row-{row.line}"
            if item_id in seen:
                raise row.error(f"duplicate id {item_id!r} (first on line {seen[item_id]})")
            seen[item_id] = row.line
            items.append(_make_item(row, item_id, gold, variants, incorrect_col, alias_sep, category_col, kind, kind_col))
    if limit is not None:
        items = items[: max(limit, 0)]
    return items


def _make_item(
    row: Row,
    item_id: str,
    gold: list[str],
    variants: list[ItemVariant],
    incorrect_col: str | None,
    alias_sep: str | None,
    category_col: str | None,
    kind: ItemKind,
    kind_col: str | None,
    meta: dict[str, Any] | None = None,
) -> Item:
    item_kind = _text(row, kind_col) or kind
    if item_kind not in ("factual", "math", "truthful"):
        raise row.error(f"unknown kind {item_kind!r}; use factual, math or truthful")
    return Item(
        id=item_id,
        kind=item_kind,  # type: ignore[arg-type]
        gold=gold,
        incorrect=_split(_cell(row, incorrect_col), alias_sep) if incorrect_col else [],
        variants=variants,
        category=_text(row, category_col) or "",
        meta={"source": row.path, "line": row.line, **(meta or {})},
    )


def _grouped_items(
    rows: list[Row],
    *,
    question_col: str,
    gold_col: str | None,
    alias_sep: str | None,
    id_col: str | None,
    group_col: str,
    variant_col: str | None,
    original_col: str | None,
    context_col: str | None,
    incorrect_col: str | None,
    category_col: str | None,
    kind: ItemKind,
    kind_col: str | None,
    require_gold: bool,
) -> list[Item]:
    groups: dict[str, list[Row]] = {}
    for row in rows:
        key = _text(row, group_col, required=True)
        assert key is not None
        groups.setdefault(key, []).append(row)
    items = []
    for key, members in groups.items():
        if variant_col:
            numbered = []
            for row in members:
                raw = _cell(row, variant_col, required=True)
                try:
                    numbered.append((int(str(raw)), row))
                except ValueError:
                    raise row.error(f"variant number in {variant_col!r} must be an integer, got {raw!r}") from None
            numbers = [n for n, _ in numbered]
            for n, row in numbered:
                if numbers.count(n) > 1:
                    raise row.error(f"question {key!r} has variant {n} twice")
            members = [row for _, row in sorted(numbered, key=lambda t: t[0])]
        original_rows = members[:1]
        if original_col:
            marked = [row for row in members if _truthy(_cell(row, original_col), row, original_col)]
            if len(marked) > 1:
                raise marked[1].error(f"question {key!r} has two original rows (also line {marked[0].line})")
            if not marked:
                raise members[0].error(f"question {key!r} has no row marked original in {original_col!r}")
            original_rows = marked
        elif variant_col and _cell(members[0], variant_col) not in (0, "0"):
            raise members[0].error(f"question {key!r} has no variant 0 (the original) in {variant_col!r}")
        first = original_rows[0]
        ordered = [first] + [row for row in members if row is not first]
        gold: list[str] = []
        for row in ordered:  # gold from the original row, else the first row that has one
            gold = _split(_cell(row, gold_col), alias_sep)
            if gold:
                break
        if require_gold and not gold:
            raise first.error(f"question {key!r} has no gold answer in column {gold_col!r}")
        variants: list[ItemVariant] = []
        for row in ordered:
            question = _text(row, question_col, required=True)
            assert question is not None
            context = _text(row, context_col)
            if any(v.question == question and v.context == context for v in variants):
                continue  # an exact duplicate wording adds nothing
            variants.append(ItemVariant(id=len(variants), question=question, context=context))
        item_id = (_text(first, id_col) if id_col else None) or key
        items.append(_make_item(first, item_id, gold, variants, incorrect_col, alias_sep, category_col, kind, kind_col))
    return items


# ---------------------------------------------------------------------------------------
# the four public formats

_GSM8K_FINAL = re.compile(r"####\s*(.+?)\s*$", re.S)


def gsm8k_gold(solution: str) -> str | None:
    """The number after `####` in a GSM8K solution, commas removed ("#### 1,000" -> "1000")."""
    m = _GSM8K_FINAL.search(solution.strip())
    return m.group(1).replace(",", "").strip() if m else None


def load_simpleqa(path: str | Path, *, limit: int | None = None) -> list[Item]:
    """SimpleQA (columns `problem`, `answer`, optional `metadata` with topic and answer_type)."""
    rows = read_rows(path)
    _require_columns(rows, ["problem", "answer"], "SimpleQA")
    items = []
    for index, row in enumerate(rows):
        question = _text(row, "problem", required=True)
        answer = _text(row, "answer", required=True)
        meta = _simpleqa_meta(row)
        items.append(
            Item(
                id=f"simpleqa-{index}",
                kind="factual",
                gold=[answer],  # type: ignore[list-item]
                variants=[ItemVariant(id=0, question=question)],  # type: ignore[arg-type]
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


def load_truthfulqa(path: str | Path, *, limit: int | None = None) -> list[Item]:
    """TruthfulQA (`Question`, `Best Answer`, `Correct Answers`, `Incorrect Answers` split on ";").

    The gold list is the best answer followed by the other correct answers; the false
    references go to `incorrect`. Kind "truthful".
    """
    rows = read_rows(path)
    _require_columns(rows, ["Question", "Best Answer", "Correct Answers", "Incorrect Answers"], "TruthfulQA")
    items = []
    for index, row in enumerate(rows):
        question = _text(row, "Question", required=True)
        best = _text(row, "Best Answer", required=True)
        correct = _split(_cell(row, "Correct Answers"), ";")
        gold = [best] + [c for c in correct if c != best]  # type: ignore[list-item]
        incorrect = _split(_cell(row, "Incorrect Answers"), ";")
        if not incorrect:
            raise row.error("empty 'Incorrect Answers'")
        items.append(
            Item(
                id=f"truthfulqa-{index}",
                kind="truthful",
                gold=gold,
                incorrect=incorrect,
                variants=[ItemVariant(id=0, question=question)],  # type: ignore[arg-type]
                category=_text(row, "Category") or "",
                meta={"type": _text(row, "Type"), "source_url": _text(row, "Source"), "source": row.path,
                      "line": row.line},
            )
        )
        if limit is not None and len(items) >= limit:
            break
    return items


def load_gsm8k(path: str | Path, *, limit: int | None = None) -> list[Item]:
    """GSM8K (`question`, `answer` = worked solution ending in `#### N`). Kind "math", gold N."""
    rows = read_rows(path)
    _require_columns(rows, ["question", "answer"], "GSM8K")
    items = []
    for index, row in enumerate(rows):
        question = _text(row, "question", required=True)
        solution = _text(row, "answer", required=True)
        gold = gsm8k_gold(solution)  # type: ignore[arg-type]
        if not gold:
            raise row.error("the 'answer' does not end in '#### <number>' (is this GSM8K?)")
        items.append(
            Item(
                id=f"gsm8k-{index}",
                kind="math",
                gold=[gold],
                variants=[ItemVariant(id=0, question=question)],  # type: ignore[arg-type]
                meta={"solution": solution, "source": row.path, "line": row.line},
            )
        )
        if limit is not None and len(items) >= limit:
            break
    return items


def load_math500(path: str | Path, *, limit: int | None = None) -> list[Item]:
    """MATH-500 (`problem`, `solution`, `answer`, `subject`, `level`, optional `unique_id`). Kind "math"."""
    rows = read_rows(path)
    _require_columns(rows, ["problem", "answer"], "MATH-500")
    items = []
    for index, row in enumerate(rows):
        question = _text(row, "problem", required=True)
        answer = _text(row, "answer", required=True)
        items.append(
            Item(
                id=_text(row, "unique_id") or f"math500-{index}",
                kind="math",
                gold=[answer],  # type: ignore[list-item]
                variants=[ItemVariant(id=0, question=question)],  # type: ignore[arg-type]
                category=_text(row, "subject") or "",
                meta={"level": _text(row, "level"), "solution": _text(row, "solution"), "source": row.path,
                      "line": row.line},
            )
        )
        if limit is not None and len(items) >= limit:
            break
    return items


_LOADERS = {
    "simpleqa": load_simpleqa,
    "truthfulqa": load_truthfulqa,
    "gsm8k": load_gsm8k,
    "math500": load_math500,
}


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
    return None  # GSM8K's question/answer is too generic to tell by name: see load_path


# ---------------------------------------------------------------------------------------
# the sample set, saved variant files


def sample_path() -> Path:
    """Path of the built-in sample set (packaged as evaluation/data/sample.jsonl)."""
    return Path(str(resources.files("evaluation") / "data" / "sample.jsonl"))


def load_sample(*, limit: int | None = None, categories: Sequence[str] | None = None) -> list[Item]:
    """The built-in sample set: short factual and arithmetic questions, each with 3 written paraphrases."""
    items = load_items(sample_path())
    if categories:
        wanted = set(categories)
        unknown = wanted - {i.category for i in items}
        if unknown:
            raise ConfigError(
                f"unknown sample categories {sorted(unknown)}; known: {sorted({i.category for i in items})}"
            )
        items = [i for i in items if i.category in wanted]
    return items[:limit] if limit is not None else items


def save_items(items: Iterable[Item], path: str | Path) -> Path:
    """Write items with their variants as JSONL (one item a line), atomically. Returns the path."""
    p = Path(path).expanduser()
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(p.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for item in items:
            fh.write(item.model_dump_json() + "\n")
    os.replace(tmp, p)
    return p


def load_items(path: str | Path, *, limit: int | None = None) -> list[Item]:
    """Items saved by `save_items` (or written by hand in the same schema), validated line by line."""
    rows = read_rows(path)
    items: list[Item] = []
    seen: dict[str, int] = {}
    for row in rows:
        try:
            item = Item.model_validate(dict(row))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "item"
            raise row.error(f"not a valid item: {where}: {first['msg']}") from None
        _check_item(item, row)
        if item.id in seen:
            raise row.error(f"duplicate item id {item.id!r} (first on line {seen[item.id]})")
        seen[item.id] = row.line
        items.append(item)
        if limit is not None and len(items) >= limit:
            break
    return items


def _check_item(item: Item, row: Row) -> None:
    if not item.variants:
        raise row.error(f"item {item.id!r} has no variants (variants[0] must be the original)")
    ids = [v.id for v in item.variants]
    if ids[0] != 0:
        raise row.error(f"item {item.id!r}: variants[0] must be the original (id 0), got id {ids[0]}")
    if len(set(ids)) != len(ids):
        raise row.error(f"item {item.id!r} repeats a variant id: {ids}")
    if not item.gold:
        raise row.error(f"item {item.id!r} has no gold answer")
    for variant in item.variants:
        if not variant.question.strip():
            raise row.error(f"item {item.id!r}: variant {variant.id} has an empty question")


# ---------------------------------------------------------------------------------------
# Hugging Face datasets


def load_hf(
    name: str,
    *,
    config: str | None = None,
    split: str = "test",
    format: str | None = None,
    limit: int | None = None,
    **columns: Any,
) -> list[Item]:
    """A Hugging Face dataset (needs the `datasets` package and network, or a local HF cache).

    The format is detected from the column names (SimpleQA, TruthfulQA, GSM8K, MATH-500
    layouts) unless `format` names one; otherwise pass the `load_table` column options
    (question_col=..., gold_col=...).
    """
    try:
        import datasets as hf  # noqa: PLC0415
    except ImportError:
        raise ConfigError(
            f"loading hf:{name} needs the 'datasets' package: pip install datasets "
            "(or download the file and pass its path)"
        ) from None
    try:
        data = hf.load_dataset(name, config, split=split)
    except Exception as exc:  # offline, unknown name, bad split: all the user's to fix
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(
            f"cannot load Hugging Face dataset {name!r} (config={config!r}, split={split!r}): {first}. "
            "Without network, download the file and pass its path."
        ) from None
    records = [dict(r) for r in (data.select(range(min(limit, len(data)))) if limit else data)]
    if not records:
        raise ConfigError(f"Hugging Face dataset {name!r} split {split!r} is empty")
    # The TruthfulQA generation config spells its columns differently from the CSV.
    if {"question", "best_answer", "correct_answers", "incorrect_answers"} <= set(records[0]):
        records = [
            {"Question": r["question"], "Best Answer": r["best_answer"],
             "Correct Answers": ";".join(r["correct_answers"]), "Incorrect Answers": ";".join(r["incorrect_answers"]),
             "Category": r.get("category", ""), "Type": r.get("type", ""), "Source": r.get("source", "")}
            for r in records
        ]
    fmt = format or (None if columns else detect_format(records[0]) or ("gsm8k" if _looks_gsm8k(records) else None))
    import tempfile  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name.replace('/', '_')}.jsonl"
        with path.open("w", encoding="utf-8") as fh:
            for r in records:
                fh.write(json.dumps(r, default=str) + "\n")
        if fmt in _LOADERS:
            items = _LOADERS[fmt](path)
        elif fmt == "items":
            items = load_items(path)
        elif columns:
            items = load_table(path, **columns)
        else:
            raise ConfigError(
                f"cannot tell the layout of hf:{name} (columns {sorted(records[0])}); pass format= "
                "or question_col=/gold_col="
            )
    for item in items:
        item.meta["source"] = f"hf:{name}"
        item.meta.pop("line", None)
    return items


def _looks_gsm8k(records: list[dict[str, Any]]) -> bool:
    return {"question", "answer"} <= set(records[0]) and "####" in str(records[0].get("answer", ""))


# ---------------------------------------------------------------------------------------
# the dispatcher


def load_dataset(
    spec: str,
    *,
    limit: int | None = None,
    data_dir: str | Path | None = None,
    **options: Any,
) -> list[Item]:
    """Load items by name or path.

    `spec` is one of:

    - `sample`: the built-in sample set;
    - `simpleqa`, `truthfulqa`, `gsm8k`, `math500`: the public file, found under its usual
      name in `data_dir`, `$SELFPARA_DATA_DIR`, `./data` or `../shared/data`;
      `simpleqa:PATH` (etc.) names the file;
    - `hf:NAME` (or `hf:NAME:CONFIG`, `hf:NAME@SPLIT`): a Hugging Face dataset;
    - a path: a saved variant file (JSONL of items), a file in one of the public layouts
      (detected by its columns), or a generic table read with `load_table(**options)`;
      without options a generic table uses `question` and `answer` (or `gold`), and `id`,
      `paraphrases` (a JSON list or one text), `context`, `kind`, `category`, `incorrect`
      where present.

    Raises ConfigError for an unknown name, DataError for a bad file.
    """
    spec = spec.strip()
    if not spec:
        raise ConfigError("no dataset named: use sample, simpleqa, truthfulqa, gsm8k, math500, hf:NAME or a path")
    name, _, rest = spec.partition(":")
    low = name.lower().replace("-", "").replace("_", "")
    if low == "sample" and not rest:
        return load_sample(limit=limit, **options)
    if low == "hf":
        if not rest:
            raise ConfigError("hf: needs a dataset name, e.g. hf:openai/gsm8k:main@test")
        rest, _, split = rest.partition("@")
        hf_name, _, config = rest.partition(":")
        return load_hf(hf_name, config=config or None, split=split or "test", limit=limit, **options)
    if low in _LOADERS and (rest or not Path(spec).exists()):
        path = Path(rest).expanduser() if rest else _find_known(low, data_dir)
        return _LOADERS[low](path, limit=limit)
    path = Path(spec).expanduser()
    if not path.exists():
        raise ConfigError(
            f"unknown dataset {spec!r}: not a file, and not one of {', '.join(DATASETS)} or hf:NAME"
        )
    return load_path(path, limit=limit, **options)


def load_path(path: str | Path, *, limit: int | None = None, **options: Any) -> list[Item]:
    """A file whose layout is detected: saved items, a public format, or a generic table (`options`)."""
    p = Path(path).expanduser()
    if options:
        return load_table(p, limit=limit, **options)
    rows = read_rows(p)
    columns = set().union(*(r.keys() for r in rows[:20]))
    fmt = detect_format(columns)
    if fmt == "items":
        return load_items(p, limit=limit)
    if fmt == "simpleqa" or fmt == "truthfulqa" or fmt == "math500":
        return _LOADERS[fmt](p, limit=limit)
    if {"question", "answer"} <= columns and any("####" in str(r.get("answer", "")) for r in rows[:5]):
        return load_gsm8k(p, limit=limit)
    # a generic table: use the conventional optional columns where present
    auto: dict[str, Any] = {}
    for option, column in (("id_col", "id"), ("context_col", "context"), ("kind_col", "kind"),
                           ("category_col", "category"), ("incorrect_col", "incorrect")):
        if column in columns:
            auto[option] = column
    if "paraphrases" in columns:
        auto["paraphrase_cols"] = ["paraphrases"]
    if "answer" not in columns and "gold" in columns:
        auto["gold_col"] = "gold"
    return load_table(p, limit=limit, **auto)


def _find_known(name: str, data_dir: str | Path | None) -> Path:
    dirs = [Path(d).expanduser() for d in (data_dir, os.environ.get(DATA_DIR_ENV), "data", "../shared/data") if d]
    for directory in dirs:
        for filename in _KNOWN_FILES[name]:
            if (directory / filename).is_file():
                return directory / filename
    where = ", ".join(str(d) for d in dirs) + f" (set ${DATA_DIR_ENV} to point at the folder)"
    raise ConfigError(
        f"dataset {name!r} needs its file: looked for {', '.join(_KNOWN_FILES[name])} in {where}. "
        f"Pass {name}:PATH, or hf:{_HF_NAMES[name]} with network."
    )
