"""Faithful rewordings made without a model, by the renamings table (`en/renamings.toml`, which says why
they exist and how an entry reads): the asked-for thing or relation named another way.

This module only applies the table; adding a shape of question is a pattern and its example there.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from selfpara.pipeline.lexicon.tables import LEXICON

_MUSIC = LEXICON.pattern("renaming_parts.music")
_KIND_OF_PLACE = LEXICON.pattern("renaming_parts.kind_of_place")
_DANGLING = LEXICON.pattern("renaming_parts.dangling")
_NOT_ONE_QUESTION = LEXICON.pattern("renaming_parts.not_one_question")
_NOT_A_NAME = LEXICON.pattern("renaming_parts.not_a_name")
_MAX_CAPTURE_WORDS = 16
"""The most words a capture may hold (an event a year question names runs to 13: "did the United Kingdom vote
in a referendum to leave the European Union")."""


def _whole_name(groups: Mapping[str, str]) -> bool:
    """The captured text is a place's name ('Vietnam', 'the United States', at most 8 words: 'the Democratic
    Republic of the Congo' has 6), and ends where it ends ('Vietnam', not 'Vietnam part of'; not 'covered
    almost entirely by ice')."""
    x = _KIND_OF_PLACE.sub("", groups.get("x", ""))
    return x[:1].isupper() and not _DANGLING.search(x) and len(x.split()) <= 8


def _no_music(groups: Mapping[str, str]) -> bool:
    """'Who wrote the music for X?' asks for a composer: not the author entry's."""
    return not _MUSIC.search(groups.get("x", ""))


def _divides(groups: Mapping[str, str]) -> bool:
    """'How many times does B go into A' asks for a whole number: only where B divides A."""
    try:
        a, b = float(groups["a"].replace(",", "")), float(groups["b"].replace(",", ""))
    except ValueError:
        return False
    return b != 0 and a % b == 0


ACCEPTS: dict[str, Callable[[Mapping[str, str]], bool]] = {
    "whole_name": _whole_name,
    "no_music": _no_music,
    "divides": _divides,
}
"""The tests an entry's `accept` may name, on its captured groups."""


@dataclass(frozen=True)
class Renaming:
    """One entry of the table: a shape of question and the other wordings that ask the same.

    Attributes:
        name: the relation renamed (what `Variant.source` reports after "renaming:").
        patterns: compiled, each to match the whole question (without its final "?" or ".").
        templates: the rewordings, in the order they are offered.
        accept: a test on the captured groups; the entry does not apply when it returns False.
        common: the captures are common nouns, written in lower case whatever case the question gave them.
        examples: (a question, its first rewording) pairs the tests hold the entry to.
    """

    name: str
    patterns: tuple[re.Pattern[str], ...]
    templates: tuple[str, ...]
    accept: Callable[[Mapping[str, str]], bool] = lambda groups: True
    common: bool = False
    examples: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_data(cls, entry: Mapping[str, Any]) -> Renaming:
        """An entry of `renamings.toml`. KeyError for an `accept` no test has."""
        return cls(
            name=entry["name"],
            patterns=tuple(re.compile(LEXICON.expand(p), re.IGNORECASE) for p in entry["patterns"]),
            templates=tuple(entry["templates"]),
            accept=ACCEPTS[entry["accept"]] if "accept" in entry else cls.accept,
            common=entry.get("common", False),
            examples=tuple((q, first) for q, first in entry.get("examples", ())),
        )


RENAMINGS: tuple[Renaming, ...] = tuple(Renaming.from_data(entry) for entry in LEXICON.raw("renaming"))
"""Every renaming, in the order they are tried; a question takes the first that matches."""


@dataclass(frozen=True)
class Renamed:
    """One wording the table made: its text and the entry that made it."""

    text: str
    renaming: str


def _article_lowered(text: str, start: int) -> str:
    """A capture that opened the question with an article ('The opera Carmen is the work of ...') in
    the case it takes inside a sentence ('the opera Carmen'); a title keeps its own ('The Thinker')."""
    ws = text.split(" ", 2)
    if start == 0 and len(ws) > 1 and ws[0] in ("The", "A", "An") and ws[1][:1].islower():
        return text[:1].lower() + text[1:]
    return text


def _possessive(text: str) -> str:
    return text + ("'" if text.endswith("s") else "'s")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _fill(template: str, groups: Mapping[str, str]) -> str:
    values: dict[str, str] = {}
    for key, value in groups.items():
        values[key] = value
        values[key.upper()] = _cap(value)
        values[f"{key}_s"] = _possessive(value)
        values[f"{key.upper()}_s"] = _cap(_possessive(value))
    return template.format(**values)


def _normalised(question: str) -> str:
    """The question as the patterns read it: one line, no final ? or ., `what's` spelled out."""
    text = " ".join(question.split()).rstrip("?.! ").strip()
    return re.sub(r"^what's\b", "what is", text, flags=re.I)


def renamings(question: str, table: tuple[Renaming, ...] = RENAMINGS) -> list[Renamed]:
    """The wordings the first matching entry of `table` makes of `question`, in its order, without
    one that only repeats the question; [] when no entry reads it.

    Args:
        question: the question as the user wrote it.
        table: the entries to try (the default table unless a test passes its own).
    """
    text = _normalised(question)
    if _NOT_ONE_QUESTION.search(text):
        return []
    for entry in table:
        for pattern in entry.patterns:
            match = pattern.fullmatch(text)
            if match is None:
                continue
            groups = {k: _article_lowered(v.strip(), match.start(k)) for k, v in match.groupdict().items() if v}
            if entry.common:
                groups = {k: v.lower() for k, v in groups.items()}
            if not entry.accept(groups) or any(
                len(v.split()) > _MAX_CAPTURE_WORDS or _NOT_A_NAME.search(v) for v in groups.values()
            ):
                break
            out: list[Renamed] = []
            for template in entry.templates:
                made = _fill(template, groups)
                same = _normalised(made).lower() == text.lower()
                if not same and all(made.lower() != r.text.lower() for r in out):
                    out.append(Renamed(made, entry.name))
            return out
    return []
