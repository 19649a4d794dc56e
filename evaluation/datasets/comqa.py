"""ComQA (Abujabal et al., NAACL 2019): clusters of questions real users asked on WikiAnswers that a
crowd judged to be paraphrases, with their answers. Distributed as a JSON list of
`{"cluster_id", "questions": [...], "answers": [...]}`; an answer is a Wikipedia URL, a date or a string.

Every cluster is one item whose variants are its questions, so A_strict, flips and the oracle (the
vote over the people's own wordings) apply. A Wikipedia URL is graded by its page title
("https://en.wikipedia.org/wiki/north_sea" → "north sea"; a "(disambiguation)" suffix dropped), the
convention of the dataset's own evaluation (an answer is right when it names the page). A cluster whose
answer list is empty (`[""]`: ComQA's mark for a question with no answer) has nothing to grade against
and is left out; the loader logs how many."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from evaluation.datasets.cells import cell, required_text, split_list
from evaluation.datasets.readers import Row, read_rows
from evaluation.datasets.registry import register_format
from evaluation.records import Item, ItemVariant

log = logging.getLogger(__name__)

_WIKI = re.compile(r"^https?://[a-z]+\.wikipedia\.org/wiki/(.+)$", re.IGNORECASE)
_QUALIFIER = re.compile(r"\s*\([^)]*\)\s*$")
_ISO_DATE = re.compile(r"^(\d{3,4})-(\d{2})-(\d{2})$")
_MONTHS = "January February March April May June July August September October November December".split()


def looks_comqa(columns: set[str], rows: Sequence[Mapping[str, Any]]) -> bool:
    """A ComQA file: `cluster_id`, `questions` and `answers` (lists)."""
    return {"cluster_id", "questions", "answers"} <= columns


@register_format("comqa", detect=looks_comqa, files=("comqa_dev.json", "comqa_train.json", "comqa.json"))
def load_comqa(path: str | Path, *, limit: int | None = None) -> list[Item]:
    """ComQA clusters: one factual item per cluster, its questions as the variants (the first is the original)."""
    rows = read_rows(path)
    items: list[Item] = []
    unanswered = 0
    for row in rows:
        if not any(str(a).strip() for a in split_list(cell(row, "answers", required=True), None)):
            unanswered += 1
            continue
        items.append(_comqa_item(row))
        if limit is not None and len(items) >= limit:
            break
    if unanswered:
        log.info("%s: left out %d cluster(s) with no answer", path, unanswered)
    return items


def _comqa_item(row: Row) -> Item:
    cluster = required_text(row, "cluster_id")
    questions = split_list(cell(row, "questions", required=True), None)
    answers = split_list(cell(row, "answers", required=True), None)
    gold = [alias for raw in answers for alias in answer_aliases(raw)]
    if not questions or not gold:
        raise row.error(f"cluster {cluster!r} has no questions or no answers")
    return Item(
        id=f"comqa-{cluster.removeprefix('cluster-')}",
        kind="factual",
        gold=list(dict.fromkeys(gold)),
        variants=[ItemVariant(id=i, question=_asked(q)) for i, q in enumerate(questions)],
        meta={"cluster_id": cluster, "answers": answers, "source": row.path, "line": row.line},
    )


def answer_aliases(raw: str) -> list[str]:
    """What an answer may be graded against: a Wikipedia URL's page title; an ISO date as written and as
    people write it ("1941-05-23", "May 23, 1941", "23 May 1941"); else the answer as given."""
    text = raw.strip()
    found = _WIKI.match(text)
    if found:
        title = unquote(found.group(1)).replace("_", " ").strip()
        return [_QUALIFIER.sub("", title) or title]
    date = _ISO_DATE.match(text)
    if date:
        year, month, day = int(date.group(1)), int(date.group(2)), int(date.group(3))
        if 1 <= month <= 12 and 1 <= day <= 31:
            name = _MONTHS[month - 1]
            return [text, f"{name} {day}, {year}", f"{day} {name} {year}", f"{name} {day} {year}"]
    return [text] if text else []


def _asked(question: str) -> str:
    """The question with its first letter upper case, as typed into a chat (the words as the user wrote them)."""
    text = question.strip()
    return text[:1].upper() + text[1:]
