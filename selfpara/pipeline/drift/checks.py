"""Cheap checks that a paraphrase kept the question's answer-critical content (METHOD §2.6).

Measured on a 1.5B model, fluent paraphrases that quietly changed the question (a
number dropped, "capital" turned into "largest city", "adult" left out) passed the
overlap filter and the model's own equivalence judge, then outvoted a correct
original. Each check here compares one kind of content between the question and a
candidate and returns a short detail when it changed (None when it survived).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Set
from fractions import Fraction

from selfpara.pipeline.drift.asks import asks_changed
from selfpara.pipeline.drift.synonyms import reads_renamed
from selfpara.util.quantities import NUMBER_WORDS, number_set, numbers
from selfpara.util.text import STOPWORDS, entity_words, name_survives, words

DriftCheck = Callable[[str, str], "str | None"]
"""(question, paraphrase) -> what changed, or None when the paraphrase kept it."""


def _fmt(values: object) -> str:
    return ", ".join(sorted(str(v) for v in values))  # type: ignore[attr-defined]


def _set_change(q: Set[object], p: Set[object]) -> str | None:
    """ "dropped ...; added ..." between the question's set `q` and the paraphrase's `p` (None: equal)."""
    parts = [f"{verb} {_fmt(values)}" for verb, values in (("dropped", q - p), ("added", p - q)) if values]
    return "; ".join(parts) or None


# "Between which two latitudes" counts what "between" implies: "In what range of latitude" asks the same,
# "What is the latitude of Ghana?" does not (one value).
_IMPLIED_PAIR = re.compile(r"\bbetween (?:which|what) two\b", re.I)
_RANGE = re.compile(r"\b(?:range|ranges|between|span|spans)\b|\bfrom\b.*\bto\b", re.I)


@reads_renamed
def numbers_changed(question: str, paraphrase: str) -> str | None:
    """The question's numbers (digits and number words, normalised) differ from the paraphrase's.

    The one exception: the "two" of "between which two ..." may go where the paraphrase still asks
    for a range ("range", "between", "span", "from ... to")."""
    q, p = number_set(question), number_set(paraphrase)
    if _IMPLIED_PAIR.search(question) and numbers(question).count(Fraction(2)) == 1 and _RANGE.search(paraphrase):
        q -= {Fraction(2)}
    return _set_change(q, p)


_NEGATORS = frozenset("not no never none nobody nothing neither nor without except excluding cannot non".split())


def negated(text: str) -> bool:
    """Whether `text` holds a negation ("not", "n't", "never", "without", "except", "non-")."""
    return any(w in _NEGATORS or w.endswith("n't") for w in words(text))


def negation_changed(question: str, paraphrase: str) -> str | None:
    """One of the two is negated and the other is not."""
    q, p = negated(question), negated(paraphrase)
    if q == p:
        return None
    return "negation dropped" if q else "negation added"


# A name a paraphrase may say in other words, and those words: "on Earth" is "in the world" or "on the
# planet", "the first President" is "the first head of state". An alias counts only where the question
# does not itself use it ("the closest planet to Earth" said as "the closest planet" has lost Earth).
_SAID_OTHERWISE = {
    "earth": ("world", "planet", "globe"),
    "president": ("head of state",),
}


def _said_otherwise(name: str, question: str, paraphrase: str) -> bool:
    q, p = question.lower(), paraphrase.lower()
    return any(
        re.search(rf"\b{alias}\b", p) and not re.search(rf"\b{alias}\b", q) for alias in _SAID_OTHERWISE.get(name, ())
    )


_ACRONYM = re.compile(r"\b[A-Z]{2,5}\b")
_NAME_RUN = re.compile(r"\b[A-Z][a-z]+(?: (?:of )?[A-Z][a-z]+)+")


def _initials(text: str) -> dict[str, set[str]]:
    """The initials of each run of capitalised words in `text` -> its words: {"uk": {"united", "kingdom"}}."""
    runs: dict[str, set[str]] = {}
    for run in _NAME_RUN.findall(text):
        ws = [w.lower() for w in run.split() if w != "of"]
        runs.setdefault("".join(w[0] for w in ws), set()).update(ws)
    return runs


def _abbreviated(question: str, paraphrase: str) -> set[str]:
    """The question's names the paraphrase says by their acronym ("United Kingdom" as "UK", "United
    States" as "USA") or writes out from the question's acronym ("UK" as "United Kingdom")."""

    def matches(initials: str, acronym: str) -> bool:
        # One letter more or less: "USA" for "United States", "US" for "... of America"; "USSR" is not.
        short, long = sorted((initials, acronym), key=len)
        return long.startswith(short) and len(long) - len(short) <= 1

    out = set()
    p_acronyms = [a.lower() for a in _ACRONYM.findall(paraphrase)]
    for initials, names in _initials(question).items():
        if any(matches(initials, a) for a in p_acronyms):
            out |= names
    p_runs = _initials(paraphrase)
    out |= {a.lower() for a in _ACRONYM.findall(question) if any(matches(i, a.lower()) for i in p_runs)}
    return out


@reads_renamed
def entities_changed(question: str, paraphrase: str) -> str | None:
    """A name of the question (a capitalised content word) is missing from the paraphrase (and not
    said in the other words `_SAID_OTHERWISE` allows, nor by its acronym)."""
    p_words = set(words(paraphrase))
    abbreviated = _abbreviated(question, paraphrase)
    missing = sorted(
        w
        for w in entity_words(question)
        if not name_survives(w, p_words) and not _said_otherwise(w, question, paraphrase) and w not in abbreviated
    )
    return f"dropped {', '.join(missing)}" if missing else None


# Words that narrow what is asked without being a name or a number: "capital" is not "largest city",
# "the adult body" is not "the body", a negative charge not a positive one. Measured on hand-labelled
# Qwen paraphrases (docs/guards.md), these were the drift that numbers and names missed.
_QUALIFIERS = frozenset(
    """capital adult largest smallest major most least populous highest lowest longest shortest
    oldest youngest earliest latest fastest slowest deepest heaviest lightest official main
    primary current former positive negative""".split()
)
# Same qualifier, other word: "the biggest ocean" asks what "the largest ocean" asks, "the fewest
# moons" what "the least moons" ask.
_QUALIFIER_SYNONYMS = {
    "biggest": "largest",
    "greatest": "largest",
    "tallest": "highest",
    "fewest": "least",
    "adults": "adult",
    "negatively": "negative",
    "positively": "positive",
}
# The same where what it qualifies is kept: "the smallest mass" is "the least mass", but "the
# smallest planet" does not ask for "the planet with the fewest moons".
_NEAR_SYNONYMS = {"smallest": "least"}
# Skipped when finding what a qualifier qualifies: "the least amount of rain" qualifies rain.
_NOT_QUALIFIED = frozenset({"amount", "number", "quantity"})


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
    p_stems = {w[:4] for w in words(text)}
    return [
        f"{said} {of} said as {p[key][0]}"
        for key, (said, of) in q.items()
        if key in p and (said in _NEAR_SYNONYMS) != (p[key][0] in _NEAR_SYNONYMS)
        if of is not None and of[:4] not in p_stems
    ]


@reads_renamed
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


_DISTRIBUTIVE = frozenset({"each", "per", "every"})


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
            nouns.add(b[:4])
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
    "negation": ("negation_changed", negation_changed),
    "qualifiers": ("qualifiers_changed", qualifiers_changed),
    "rates": ("rates_changed", rates_changed),
    "asks": ("asks_changed", asks_changed),
}
"""Check name -> (rejection reason, check)."""
