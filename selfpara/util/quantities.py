"""The numbers a text states, normalised: digits and number words alike ("two" = 2 = "2.0").

Used by the paraphrase drift guard (a rewording must keep the question's numbers) and by
the answer-equivalence functions (two short answers with different numbers differ).
"""

from __future__ import annotations

import re
from fractions import Fraction

UNIT_WORDS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
TENS_WORDS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_ORDINALS = {
    "first": 1,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "eleventh": 11,
    "twelfth": 12,
    "twentieth": 20,
    "hundredth": 100,
}
# "double" is here because the 1.5B paraphraser writes it for "twice" (GSM8K).
_MULTIPLES: dict[str, Fraction] = {
    "twice": Fraction(2),
    "double": Fraction(2),
    "thrice": Fraction(3),
    "triple": Fraction(3),
    "half": Fraction(1, 2),
}
NUMBER_WORDS = frozenset({*UNIT_WORDS, *TENS_WORDS, *_SCALES, *_ORDINALS, *_MULTIPLES, "hundred", "second", "dozen"})
"""Words that state a number (or, like "second", often do)."""
# "second" is left out of the ordinals: in "60 metres per second" it is a unit, not a rank.

# A number glued to a letter before it is part of a name (H2O, B12, v1), not a quantity;
# letters after it are a unit or an ordinal suffix (5km, 3rd).
_TOKEN = re.compile(
    r"(?<![A-Za-z\d.,])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"|(?P<word>[A-Za-z]+)"
    r"|(?P<pct>%)"
)


def numbers(text: str) -> list[Fraction]:
    """Every number `text` states, in order, as exact values.

    Digits ("1,000", "2.0", "3rd"), number words ("twenty-one", "two hundred and six",
    "1.5 million"), ordinals ("first" = 1) and "twice"/"double"/"half". "20%" and "20 percent"
    are 20. A lone "one" ("which one", "one of") is not counted: it is a pronoun far
    more often than a quantity, and paraphrases add and drop it freely.
    """
    out: list[Fraction] = []
    tokens = [m for m in _TOKEN.finditer(text.replace("-", " "))]
    i = 0
    while i < len(tokens):
        m = tokens[i]
        if m.group("num") is not None:
            value = Fraction(m.group("num").replace(",", ""))
            j = i + 1
            # "1.5 million", "3 thousand"
            while j < len(tokens) and (w := (tokens[j].group("word") or "").lower()) in _SCALES:
                value *= _SCALES[w]
                j += 1
            out.append(value)
            i = j
            continue
        word = (m.group("word") or "").lower()
        spelled_start = word in UNIT_WORDS or word in TENS_WORDS or word == "hundred"
        if spelled_start or (word in ("a", "an") and _scale_follows(tokens, i)):
            value, j, spelled = _spelled(tokens, i)
            if spelled != ["one"]:
                out.append(value)
            i = j
            continue
        if word in _ORDINALS:
            out.append(Fraction(_ORDINALS[word]))
        elif word in _MULTIPLES:
            out.append(_MULTIPLES[word])
        i += 1
    return out


def number_set(text: str) -> frozenset[Fraction]:
    """The distinct numbers of `text` (see `numbers`)."""
    return frozenset(numbers(text))


def _scale_follows(tokens: list[re.Match[str]], i: int) -> bool:
    nxt = (tokens[i + 1].group("word") or "").lower() if i + 1 < len(tokens) else ""
    return nxt == "hundred" or nxt in _SCALES


def _spelled(tokens: list[re.Match[str]], i: int) -> tuple[Fraction, int, list[str]]:
    """Read a spelled-out number starting at token i: (value, next index, words used)."""
    total, current = 0, 0
    used: list[str] = []
    j = i
    while j < len(tokens):
        word = (tokens[j].group("word") or "").lower()
        if word in ("a", "an") and not used and _scale_follows(tokens, j):
            current = 1
        elif word in UNIT_WORDS:
            current += UNIT_WORDS[word]
        elif word in TENS_WORDS:
            current += TENS_WORDS[word]
        elif word == "hundred":
            current = (current or 1) * 100
        elif word in _SCALES:
            total += (current or 1) * _SCALES[word]
            current = 0
        elif (
            word == "and"
            and used
            and j + 1 < len(tokens)
            and ((tokens[j + 1].group("word") or "").lower() in {**UNIT_WORDS, **TENS_WORDS})
            and used[-1] in ("hundred", *_SCALES)
        ):
            pass  # "two hundred and six"
        else:
            break
        used.append(word)
        j += 1
    return Fraction(total + current), j, used
