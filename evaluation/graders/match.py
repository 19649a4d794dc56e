"""`match` / `exact` / `contains`: the answer against the gold aliases after normalization."""

from __future__ import annotations

import re
from collections.abc import Sequence

from evaluation.graders.base import label_by_match
from evaluation.graders.registry import register_grader
from evaluation.records import Item, Label
from selfpara.errors import ConfigError
from selfpara.pipeline.offline import contains_phrase, normalize_answer, number_set, to_number


class MatchGrader:
    """Normalized match of the answer against the gold aliases.

    Modes:
        exact: the normalized answer equals a normalized alias;
        contains: a normalized alias occurs in the normalized answer on word boundaries;
        alias (default): exact or contains; for a numeric alias also any number in the
            answer with the same value ("8.0", "1,000", "eight" for "8"); and, for sentence
            answers, the alias with a plural or adjective ending on its words ("British
            pounds" for "pound", "the African continent" for "Africa": -s, -es, -n, -an).

    Normalization is `selfpara.pipeline.offline.normalize_answer` (case, punctuation, articles, spaces).
    A missing answer is not_attempted; so is an abstention (`selfpara.pipeline.offline.is_abstention`)
    unless it still gives a gold answer ("I'm not sure, but it is Paris" is correct, as a
    hedged but correct answer is in the SimpleQA convention).
    """

    def __init__(self, mode: str = "alias") -> None:
        if mode not in ("alias", "exact", "contains"):
            raise ConfigError(f"unknown match mode {mode!r}; use alias, exact or contains")
        self.mode = mode
        self.name = "match" if mode == "alias" else mode

    def matches(self, answer: str, aliases: Sequence[str]) -> bool:
        norm = normalize_answer(answer)
        for alias in aliases:
            target = normalize_answer(alias)
            if not target:
                continue
            if norm == target:
                return True
            if self.mode != "exact" and contains_phrase(answer, alias):
                return True
            if self.mode == "alias" and (_number_in(answer, alias) or _inflected_in(norm, target)):
                return True
        return False

    async def grade(self, item: Item, answer: str | None) -> Label:
        return label_by_match(answer, item.gold, self.matches)


_NUMBER_TOKEN = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?(?![\w])")


def _number_in(answer: str, alias: str) -> bool:
    """Whether a numeric alias's value appears as a number in the answer (digits or number words)."""
    target = to_number(alias)
    if target is None or not re.fullmatch(r"\s*-?[\d,]*\.?\d+\s*", alias):
        return False
    for token in _NUMBER_TOKEN.findall(answer):
        value = to_number(token.rstrip(".,"))
        if value is not None and value == target:
            return True
    return target in number_set(answer)


_ENDINGS = ("s", "es", "n", "an")
"""Endings a sentence puts on an alias's words: plurals (pounds) and adjectives of places (African).
Not -ia or -ian: "Niger" must not match "Nigeria"."""


def _inflected_in(norm_answer: str, norm_alias: str) -> bool:
    """Whether the normalised alias occurs in the normalised answer with `_ENDINGS` on some of its words."""
    want, have = norm_alias.split(), norm_answer.split()
    for start in range(len(have) - len(want) + 1):
        window = have[start : start + len(want)]
        if all(h == w or any(h == w + e for e in _ENDINGS) for h, w in zip(window, want, strict=True)):
            return True
    return False


@register_grader("match", "alias")
def _alias(**_: object) -> MatchGrader:
    return MatchGrader("alias")


@register_grader("exact")
def _exact(**_: object) -> MatchGrader:
    return MatchGrader("exact")


@register_grader("contains")
def _contains(**_: object) -> MatchGrader:
    return MatchGrader("contains")
