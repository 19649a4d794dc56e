"""Per-variant label rows, their variant sets, and reading them from CSV/JSONL files."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluation.datasets.cells import parse_boolean
from evaluation.datasets.readers import DataError, read_rows
from evaluation.records import LABELS, Label

__all__ = [
    "DEFAULT_GROUP",
    "LabelRow",
    "VariantSet",
    "build_sets",
    "load_label_rows",
    "parse_label",
    "rows_from_records",
]

DEFAULT_GROUP = "all"
"""Group name of rows that carry none (one system, one arm)."""

_LABEL_SPELLINGS = {
    "correct": "correct",
    "incorrect": "incorrect",
    "not_attempted": "not_attempted",
    "not attempted": "not_attempted",
    "not-attempted": "not_attempted",
    "notattempted": "not_attempted",
}


def parse_label(value: Any) -> Label | None:
    """One of the three labels (case and `_`/`-`/space spellings of not_attempted accepted), else None."""
    if not isinstance(value, str):
        return None
    return _LABEL_SPELLINGS.get(value.strip().lower())  # type: ignore[return-value]


@dataclass(slots=True)
class LabelRow:
    """The correctness label of one answer to one variant of one question (by one system/arm)."""

    question_id: str
    variant_id: str
    is_original: bool
    label: Label
    answer: str | None = None
    group: str = DEFAULT_GROUP
    confidence: float | None = None
    source: str | None = None
    line: int | None = None

    def error(self, message: str) -> DataError:
        return DataError(message, path=self.source, line=self.line) if self.source else DataError(message)


@dataclass(slots=True)
class VariantSet:
    """One question's labels (and answers) in one group: the original and its m paraphrases."""

    question_id: str
    original_label: Label
    paraphrase_labels: list[Label] = field(default_factory=list)
    original_answer: str | None = None
    paraphrase_answers: list[str | None] = field(default_factory=list)
    variant_ids: list[str] = field(default_factory=list)

    @property
    def m(self) -> int:
        """Number of paraphrases."""
        return len(self.paraphrase_labels)

    def labels(self, include_original: bool = True) -> list[Label]:
        return ([self.original_label] if include_original else []) + self.paraphrase_labels

    def answers(self, include_original: bool = True) -> list[str | None]:
        return ([self.original_answer] if include_original else []) + self.paraphrase_answers


def build_sets(rows: Iterable[LabelRow]) -> dict[str, list[VariantSet]]:
    """Group rows into variant sets: {group: [VariantSet, ...]} in order of first appearance.

    Raises DataError (naming the file and line where rows carry one) for a repeated
    (group, question, variant), a question with no original row or with two.
    Paraphrases keep the order of their rows.
    """
    staged: dict[str, dict[str, list[LabelRow]]] = {}
    seen: dict[tuple[str, str, str], LabelRow] = {}
    for row in rows:
        if row.label not in LABELS:
            raise row.error(f"label {row.label!r} is not one of {', '.join(LABELS)}")
        key = (row.group, row.question_id, row.variant_id)
        if key in seen:
            first = seen[key]
            where = f" (first on line {first.line})" if first.line is not None else ""
            raise row.error(
                f"question {row.question_id!r} variant {row.variant_id!r}{_in_group(row.group)} appears twice{where}"
            )
        seen[key] = row
        staged.setdefault(row.group, {}).setdefault(row.question_id, []).append(row)
    out: dict[str, list[VariantSet]] = {}
    for group, questions in staged.items():
        sets = []
        for question_id, members in questions.items():
            originals = [r for r in members if r.is_original]
            if not originals:
                lines = ", ".join(str(r.line) for r in members[:5] if r.line is not None)
                raise members[0].error(
                    f"question {question_id!r}{_in_group(group)} has no original row (is_original true)"
                    + (f"; its rows are on lines {lines}" if lines else "")
                )
            if len(originals) > 1:
                where = f" (also line {originals[0].line})" if originals[0].line is not None else ""
                raise originals[1].error(f"question {question_id!r}{_in_group(group)} has two original rows{where}")
            original = originals[0]
            paraphrases = [r for r in members if not r.is_original]
            sets.append(
                VariantSet(
                    question_id=question_id,
                    original_label=original.label,
                    paraphrase_labels=[r.label for r in paraphrases],
                    original_answer=original.answer,
                    paraphrase_answers=[r.answer for r in paraphrases],
                    variant_ids=[original.variant_id] + [r.variant_id for r in paraphrases],
                )
            )
        out[group] = sets
    return out


def _in_group(group: str) -> str:
    return "" if group == DEFAULT_GROUP else f" in group {group!r}"


def rows_from_records(records: Iterable[Any], *, group_by: str | None = "arm") -> list[LabelRow]:
    """LabelRows from `SampleRecord`s (or dicts with the same keys), grouped by `group_by` (None: one group)."""
    out = []
    for record in records:
        data: Mapping[str, Any] = record if isinstance(record, Mapping) else record.model_dump()
        group = str(data.get(group_by, DEFAULT_GROUP)) if group_by else DEFAULT_GROUP
        out.append(
            LabelRow(
                question_id=str(data["item_id"]),
                variant_id=str(data["variant_id"]),
                is_original=bool(data["is_original"]),
                label=data["label"],
                answer=data.get("answer"),
                group=group,
                confidence=_vote_share(data.get("details") or {}),
            )
        )
    return out


def _vote_share(details: Mapping[str, Any]) -> float | None:
    """The answer's confidence as a voting arm recorded it; None otherwise."""
    value = details.get("vote_share")
    return float(value) if isinstance(value, int | float) else None


GROUP_COLUMNS = ("group", "arm", "model", "system")
"""Columns taken as the grouping column when none is named."""


def load_label_rows(
    path: str | Path,
    *,
    question_col: str = "question_id",
    variant_col: str = "variant_id",
    original_col: str = "is_original",
    label_col: str = "label",
    answer_col: str | None = "auto",
    group_col: str | None = "auto",
    confidence_col: str | None = None,
) -> tuple[list[LabelRow], dict[str, str | None]]:
    """Read per-variant label rows from a CSV/TSV/JSONL/JSON file.

    Args:
        answer_col: column of answer texts (for consistency); "auto": `answer` if present; None: none.
        group_col: grouping column (model, arm, ...); "auto": the first of group, arm, model,
            system that is present; None: one group.
        confidence_col: column of a confidence score per answer (higher = surer, e.g. a vote
            share), for the confidence metrics; None: none.

    Returns the rows and the columns used ({"answer": ..., "group": ...}).
    Raises DataError naming the file and line for missing columns, empty cells, labels
    outside correct / incorrect / not_attempted, and is_original values that are not booleans.
    """
    records = read_rows(path)
    columns = set().union(*(r.keys() for r in records))
    needed = [question_col, variant_col, original_col, label_col]
    if answer_col not in (None, "auto"):
        needed.append(answer_col)
    if group_col not in (None, "auto"):
        needed.append(group_col)
    if confidence_col is not None:
        needed.append(confidence_col)
    missing = [c for c in needed if c not in columns]
    if missing:
        raise DataError(
            f"missing column(s) {missing}; the file has {sorted(columns)} "
            "(name other columns with --question-col, --variant-col, --original-col, --label-col)",
            path=records[0].path,
            line=1 if str(path).lower().endswith((".csv", ".tsv")) else records[0].line,
        )
    if answer_col == "auto":
        answer_col = "answer" if "answer" in columns else None
    if group_col == "auto":
        group_col = next((c for c in GROUP_COLUMNS if c in columns), None)
    rows: list[LabelRow] = []
    for record in records:
        cell = functools.partial(_cell, record)
        raw_label = cell(label_col)
        label = parse_label(raw_label)
        if label is None:
            raise record.error(f"label {raw_label!r} is not one of correct, incorrect, not_attempted")
        raw_original = cell(original_col)
        is_original = parse_boolean(raw_original)
        if is_original is None:
            raise record.error(f"{original_col!r} must be true or false (or 1/0), got {raw_original!r}")
        answer = cell(answer_col, required=False) if answer_col else None
        group = cell(group_col, required=False) if group_col else None
        score = None
        if confidence_col is not None:
            raw_score = cell(confidence_col)
            try:
                score = float(raw_score)
            except (TypeError, ValueError):
                raise record.error(f"{confidence_col!r} must be a number, got {raw_score!r}") from None
            if score != score:  # NaN
                raise record.error(f"{confidence_col!r} is NaN")
        rows.append(
            LabelRow(
                question_id=str(cell(question_col)),
                variant_id=str(cell(variant_col)),
                is_original=is_original,
                label=label,
                answer=None if answer is None or answer == "" else str(answer),
                group=str(group) if group not in (None, "") else DEFAULT_GROUP,
                confidence=score,
                source=record.path,
                line=record.line,
            )
        )
    return rows, {"answer": answer_col, "group": group_col, "confidence": confidence_col}


def _cell(record: Any, column: str, *, required: bool = True) -> Any:
    value = record.get(column)
    if isinstance(value, str):
        value = value.strip()
    if required and (value is None or value == ""):
        raise record.error(f"empty {column!r}")
    return value
