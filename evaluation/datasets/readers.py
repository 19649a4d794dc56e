"""Raw rows of a data file: CSV/TSV (header line), JSONL, or JSON, each row knowing its file and line."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from selfpara.errors import InputError


class DataError(InputError):
    """A data file cannot be used. The message starts with `file:line:` where a line is known."""

    def __init__(self, message: str, *, path: str | Path | None = None, line: int | None = None) -> None:
        self.path = str(path) if path is not None else None
        self.line = line
        where = ""
        if self.path is not None:
            where = f"{self.path}:{line}: " if line is not None else f"{self.path}: "
        super().__init__(where + message)


class Row(dict[str, Any]):
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
            raise DataError(f"{len(values)} fields but the header names {len(header)} columns", path=path, line=start)
        values = values + [""] * (len(header) - len(values))
        yield Row.make(dict(zip(header, values, strict=True)), path, start)
