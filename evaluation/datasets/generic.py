"""Generic tables: items from a CSV/TSV/JSONL/JSON file with chosen columns."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from evaluation.datasets.cells import cell, cell_text, require_columns, required_text, split_list, truthy
from evaluation.datasets.readers import Row, read_rows
from evaluation.records import Item, ItemKind, ItemVariant


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
    require_columns(
        rows,
        [
            question_col,
            gold_col if require_gold else None,
            id_col,
            group_col,
            variant_col,
            original_col,
            context_col,
            *paraphrase_cols,
        ],
    )
    if group_col:
        items = _grouped_items(
            rows,
            question_col=question_col,
            gold_col=gold_col,
            alias_sep=alias_sep,
            id_col=id_col,
            group_col=group_col,
            variant_col=variant_col,
            original_col=original_col,
            context_col=context_col,
            incorrect_col=incorrect_col,
            category_col=category_col,
            kind=kind,
            kind_col=kind_col,
            require_gold=require_gold,
        )
    else:
        items = []
        seen: dict[str, int] = {}
        for row in rows:
            question = required_text(row, question_col)
            gold = split_list(cell(row, gold_col), alias_sep)
            if require_gold and not gold:
                raise row.error(f"empty gold answer in column {gold_col!r}")
            paraphrases: list[str] = []
            for column in paraphrase_cols:
                paraphrases += split_list(cell(row, column), paraphrase_sep)
            context = cell_text(row, context_col)
            variants = [ItemVariant(id=0, question=question, context=context)]
            for text in paraphrases:
                if text != question and all(text != v.question for v in variants):
                    variants.append(ItemVariant(id=len(variants), question=text, context=context))
            item_id = cell_text(row, id_col, required=bool(id_col)) or f"row-{row.line}"
            if item_id in seen:
                raise row.error(f"duplicate id {item_id!r} (first on line {seen[item_id]})")
            seen[item_id] = row.line
            items.append(
                _make_item(row, item_id, gold, variants, incorrect_col, alias_sep, category_col, kind, kind_col)
            )
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
    item_kind = cell_text(row, kind_col) or kind
    if item_kind not in ("factual", "math", "truthful"):
        raise row.error(f"unknown kind {item_kind!r}; use factual, math or truthful")
    return Item(
        id=item_id,
        kind=cast(ItemKind, item_kind),  # checked just above
        gold=gold,
        incorrect=split_list(cell(row, incorrect_col), alias_sep) if incorrect_col else [],
        variants=variants,
        category=cell_text(row, category_col) or "",
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
        key = required_text(row, group_col)
        groups.setdefault(key, []).append(row)
    items = []
    for key, members in groups.items():
        if variant_col:
            numbered = []
            for row in members:
                raw = cell(row, variant_col, required=True)
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
            marked = [row for row in members if truthy(cell(row, original_col), row, original_col)]
            if len(marked) > 1:
                raise marked[1].error(f"question {key!r} has two original rows (also line {marked[0].line})")
            if not marked:
                raise members[0].error(f"question {key!r} has no row marked original in {original_col!r}")
            original_rows = marked
        elif variant_col and cell(members[0], variant_col) not in (0, "0"):
            raise members[0].error(f"question {key!r} has no variant 0 (the original) in {variant_col!r}")
        first = original_rows[0]
        ordered = [first] + [row for row in members if row is not first]
        gold: list[str] = []
        for row in ordered:  # gold from the original row, else the first row that has one
            gold = split_list(cell(row, gold_col), alias_sep)
            if gold:
                break
        if require_gold and not gold:
            raise first.error(f"question {key!r} has no gold answer in column {gold_col!r}")
        variants: list[ItemVariant] = []
        for row in ordered:
            question = required_text(row, question_col)
            context = cell_text(row, context_col)
            if any(v.question == question and v.context == context for v in variants):
                continue  # an exact duplicate wording adds nothing
            variants.append(ItemVariant(id=len(variants), question=question, context=context))
        item_id = (cell_text(first, id_col) if id_col else None) or key
        items.append(_make_item(first, item_id, gold, variants, incorrect_col, alias_sep, category_col, kind, kind_col))
    return items
