"""Cheap checks that a paraphrase kept the question's answer-critical content (METHOD §2.6).

Measured on a 1.5B model, fluent paraphrases that quietly changed the question (a
number dropped, "capital" turned into "largest city", "adult" left out) passed the
overlap filter and the model's own equivalence judge, then outvoted a correct
original. Each check here compares one kind of content between the question and a
candidate and returns a short detail when it changed (None when it survived). The words
each reads are the lexicon's (`selfpara.pipeline.lexicon`, `en/words.toml`), which says why
each list holds what it holds.
"""

from __future__ import annotations

from collections.abc import Callable, Set
from fractions import Fraction

from selfpara.pipeline.drift.asks import asks_changed
from selfpara.pipeline.lexicon.quantities import NUMBER_WORDS, number_set, numbers
from selfpara.pipeline.lexicon.tables import LEXICON
from selfpara.pipeline.lexicon.text import (
    STOPWORDS,
    abbreviated,
    entity_words,
    name_survives,
    reads_synonyms,
    said_otherwise,
    stem,
    stems,
    words,
)

DriftCheck = Callable[[str, str], "str | None"]
"""(question, paraphrase) -> what changed, or None when the paraphrase kept it."""

_IMPLIED_PAIR = LEXICON.pattern("numbers_check.implied_pair")
_RANGE = LEXICON.pattern("numbers_check.range")
_QUALIFIERS = LEXICON.word_set("qualifiers.words")
_QUALIFIER_SYNONYMS: dict[str, str] = LEXICON.table("qualifiers.synonyms")
_NEAR_SYNONYMS: dict[str, str] = LEXICON.table("qualifiers.near_synonyms")
_NOT_QUALIFIED = LEXICON.word_set("qualifiers.not_qualified")
_DISTRIBUTIVE = LEXICON.word_set("qualifiers.distributive")


def _fmt(values: object) -> str:
    return ", ".join(sorted(str(v) for v in values))  # type: ignore[attr-defined]


def _set_change(q: Set[object], p: Set[object]) -> str | None:
    """ "dropped ...; added ..." between the question's set `q` and the paraphrase's `p` (None: equal)."""
    parts = [f"{verb} {_fmt(values)}" for verb, values in (("dropped", q - p), ("added", p - q)) if values]
    return "; ".join(parts) or None


@reads_synonyms
def numbers_changed(question: str, paraphrase: str) -> str | None:
    """The question's numbers (digits and number words, normalised) differ from the paraphrase's.

    The one exception: the "two" of "between which two ..." may go where the paraphrase still asks
    for a range ("range", "between", "span", "from ... to")."""
    q, p = number_set(question), number_set(paraphrase)
    if _IMPLIED_PAIR.search(question) and numbers(question).count(Fraction(2)) == 1 and _RANGE.search(paraphrase):
        q -= {Fraction(2)}
    return _set_change(q, p)


@reads_synonyms
def entities_changed(question: str, paraphrase: str) -> str | None:
    """A name of the question (a capitalised content word) is missing from the paraphrase (and not
    said by an alias of the lexicon's alias table, nor by its acronym)."""
    p_words = set(words(paraphrase))
    said_short = abbreviated(question, paraphrase)
    missing = sorted(
        w
        for w in entity_words(question)
        if not name_survives(w, p_words) and not said_otherwise(w, question, paraphrase) and w not in said_short
    )
    return f"dropped {', '.join(missing)}" if missing else None


_Qualifiers = dict[str, tuple[str, str | None]]
"""Qualifier -> (the word that said it, what it qualifies: the next content word, or None)."""


def _qualifiers(text: str, kept: frozenset[str] = frozenset()) -> _Qualifiers:
    """The qualifiers in `text`, each with the word that said it and what it qualifies; a word that
    extends one of `kept` counts as it (capital's, capitals)."""
    ws = words(text)
    found: _Qualifiers = {}
    for i, w in enumerate(ws):
        q = _QUALIFIER_SYNONYMS.get(w, _NEAR_SYNONYMS.get(w, w))
        q = next((k for k in kept if q.startswith(k)), q)
        if q in _QUALIFIERS and q not in found:
            after = (x for x in ws[i + 1 :] if x not in STOPWORDS and x not in _NOT_QUALIFIED)
            found[q] = (w, next(after, None))
    return found


def _synonym_lost_its_noun(q: _Qualifiers, p: _Qualifiers, text: str) -> list[str]:
    """The question's qualifiers `q` that the paraphrase (`p`, its words `text`) says by a near synonym
    without the word they qualify: "the fewest moons" said as "the smallest" is another question."""
    p_stems = stems(words(text), 4)
    return [
        f"{said} {of} said as {p[key][0]}"
        for key, (said, of) in q.items()
        if key in p and (said in _NEAR_SYNONYMS) != (p[key][0] in _NEAR_SYNONYMS)
        if of is not None and stem(of, 4) not in p_stems
    ]


@reads_synonyms
def qualifiers_changed(question: str, paraphrase: str) -> str | None:
    """A narrowing word ("capital", "adult", "largest", "most", ...) was dropped or added; a synonym
    ("smallest" for "least") counts only where what the question's word qualifies is kept."""
    q = _qualifiers(question)
    p = _qualifiers(paraphrase, kept=frozenset(q))
    parts = [
        f"{verb} {', '.join(sorted(said for said, _ in (a[k] for k in a.keys() - b.keys())))}"
        for verb, a, b in (("dropped", q, p), ("added", p, q))
        if a.keys() - b.keys()
    ]
    return "; ".join(parts + _synonym_lost_its_noun(q, p, paraphrase)) or None


def _rates(text: str) -> tuple[set[str], int]:
    """(4-letter stems of the nouns rates are counted by, rates whose noun is left implicit):
    "5 tons per acre" -> ({"acre"}, 0); "3 packs with 5 in each" -> (set(), 1)."""
    ws = [*words(text), ""]
    nouns, implicit = set(), 0
    for a, b in zip(ws, ws[1:], strict=False):
        if a not in _DISTRIBUTIVE:
            continue
        if not b or b in STOPWORDS:
            implicit += 1
        elif b not in NUMBER_WORDS and not b.isdigit():
            nouns.add(stem(b, 4))
    return nouns, implicit


def rates_changed(question: str, paraphrase: str) -> str | None:
    """A rate of the question ("each acre", "per hour", "every day") lost its unit in the paraphrase.

    Measured on GSM8K: "Each acre produces 5 tons" became "the farm produces 5 tons" in all
    three paraphrases, numbers intact, and the three outvoted a correct original.
    """
    q, _ = _rates(question)
    p, implicit = _rates(paraphrase)
    dropped = q - p
    return f"dropped per {', '.join(sorted(dropped))}…" if len(dropped) > implicit else None


DRIFT_CHECKS: dict[str, tuple[str, DriftCheck]] = {
    "numbers": ("numbers_changed", numbers_changed),
    "entities": ("entities_changed", entities_changed),
    "qualifiers": ("qualifiers_changed", qualifiers_changed),
    "rates": ("rates_changed", rates_changed),
    "asks": ("asks_changed", asks_changed),
}
"""Check name -> (rejection reason, check)."""
