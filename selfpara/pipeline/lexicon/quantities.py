"""Numbers in text: the values a text states (digits and number words alike: "two" = 2 = "2.0"), the
final answer of a worked answer (`\\boxed{}`, `####`, "the answer is", the last number), and the
arithmetic operation a question asks for.

Read by the drift checks (a rewording keeps the question's numbers and its operation), the
equivalence functions (two short answers with different numbers differ) and the graders.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import NamedTuple

from selfpara.pipeline.lexicon.tables import LEXICON

UNIT_WORDS: dict[str, int] = LEXICON.table("numbers.units")
TENS_WORDS: dict[str, int] = LEXICON.table("numbers.tens")
_SCALES: dict[str, int] = LEXICON.table("numbers.scales")
_ORDINALS: dict[str, int] = LEXICON.table("numbers.ordinals")
_MULTIPLES = {word: Fraction(value) for word, value in LEXICON.table("numbers.multiples").items()}
NUMBER_WORDS = frozenset(
    {*UNIT_WORDS, *TENS_WORDS, *_SCALES, *_ORDINALS, *_MULTIPLES, *LEXICON.words("numbers.more_words")}
)
"""Words that state a number (or, like "second", often do)."""

# A number glued to a letter before it is part of a name (H2O, B12, v1), not a quantity;
# letters after it are a unit or an ordinal suffix (5km, 3rd).
_TOKEN = re.compile(
    r"(?<![A-Za-z\d.,])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"|(?P<word>[A-Za-z]+)"
    r"|(?P<pct>%)"
)


def numbers(text: str, *, ordinals: bool = True) -> list[Fraction]:
    """Every number `text` states, in order, as exact values.

    Digits ("1,000", "2.0", "3rd"), number words ("twenty-one", "two hundred and six",
    "1.5 million"), ordinals ("first" = 1) and "twice"/"double"/"half". "20%" and "20 percent"
    are 20. A lone "one" ("which one", "one of") is not counted: it is a pronoun far
    more often than a quantity, and paraphrases add and drop it freely. Without `ordinals`, "first" is no
    number.
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
        if word in _ORDINALS and ordinals:
            out.append(Fraction(_ORDINALS[word]))
        elif word in _MULTIPLES:
            out.append(_MULTIPLES[word])
        i += 1
    return out


def number_set(text: str, *, ordinals: bool = True) -> frozenset[Fraction]:
    """The distinct numbers of `text` (see `numbers`)."""
    return frozenset(numbers(text, ordinals=ordinals))


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


# --- the final answer of a worked answer ------------------------------------------------------------

_BOXED = re.compile(r"\\boxed\s*\{")
_HASHES = re.compile(r"####\s*([^\n]+)")
_ANSWER_IS = LEXICON.pattern("numbers.answer_is")
_MARKED = LEXICON.pattern("numbers.marked_answer")
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:\s*/\s*\d+)?|-?\.\d+")
_LATEX_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]+)\}\s*\{([^{}]+)\}")
_UNITS = re.compile(r"(\\(?:text|mbox|mathrm)\{[^{}]*\}|\\[,;!]|\\%|%|\$|\\\$|°|\^\\circ|\^\{\\circ\})")


def boxed(text: str) -> str | None:
    """Content of the last `\\boxed{...}`, braces balanced; None if there is none."""
    starts = [m.end() for m in _BOXED.finditer(text)]
    if not starts:
        return None
    i = start = starts[-1]
    depth = 1
    while i < len(text) and depth:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[start : i - 1].strip() if depth == 0 else None


def marks_answer(text: str) -> bool:
    """Whether `text` marks its final answer (\\boxed, ####, "the answer is")."""
    return boxed(text) is not None or "####" in text or _MARKED.search(text) is not None


def final_answer(text: str) -> str | None:
    """The stated final answer: boxed, then `####`, then "the answer is", then the last number."""
    found = boxed(text)
    if found is not None:
        return found
    for pattern in (_HASHES, _ANSWER_IS):
        matches = pattern.findall(text)
        if matches:
            return matches[-1].strip().rstrip(".")
    found_numbers = _NUMBER.findall(text)
    return found_numbers[-1].strip() if found_numbers else None


def to_number(answer: str) -> Fraction | None:
    """The value of a final answer ("1,234", "3/4", "\\frac{3}{4}", "0.75", "$5", "12 cm"), else None."""
    s = _LATEX_FRAC.sub(r"(\1)/(\2)", answer)
    s = _UNITS.sub("", s).replace("{", "").replace("}", "").strip().rstrip(".")
    s = re.sub(r"^\\?\(|\\?\)$", "", s) if s.count("(") <= 1 else s
    m = re.fullmatch(r"\(?\s*(-?[\d,]*\.?\d+)\s*\)?\s*/\s*\(?\s*(-?[\d,]*\.?\d+)\s*\)?", s)
    try:
        if m:
            den = Fraction(m.group(2).replace(",", ""))
            return Fraction(m.group(1).replace(",", "")) / den if den else None
        m = re.fullmatch(r"(-?[\d,]*\.?\d+)\s*[A-Za-z ]{0,20}", s)
        if m:
            return Fraction(m.group(1).replace(",", ""))
    except (ValueError, ZeroDivisionError):
        return None
    return None


def same_value(a: str, b: str) -> bool | None:
    """Whether two final answers are equal: by value where both parse, else by normalised text."""
    va, vb = to_number(a), to_number(b)
    if va is not None and vb is not None:
        return va == vb
    if va is not None or vb is not None:
        return False
    norm = lambda s: re.sub(r"\s+|\\left|\\right|\\!|\$", "", s).rstrip(".")  # noqa: E731
    return norm(a) == norm(b)


# --- the arithmetic a question asks for -------------------------------------------------------------

_SHAPES: tuple[tuple[str, re.Pattern[str], int], ...] = tuple(
    (op, re.compile(LEXICON.expand(shape), re.IGNORECASE), first)
    for op, shape, first in LEXICON.raw("arithmetic.shapes")
)
_SYMBOLS = {"quotient": "/", "difference": "-", "product": "x", "sum": "+"}


class Operation(NamedTuple):
    """An arithmetic operation a text asks for: its name and operands (in order where order matters)."""

    name: str
    operands: tuple[Fraction, ...]
    ordered: bool


def _number(token: str) -> Fraction | None:
    found = numbers(token)
    return found[0] if len(found) == 1 else None


def operation(text: str) -> Operation | None:
    """The first arithmetic operation `text` names between two numbers, or None.

    Order matters for a difference or a quotient: "48 minus 44", "subtract 44 from 48" and
    "take 44 away from 48" are all (48, 44); "how many times does 4 go into 32" is 32 / 4.
    A sum, a product and "the difference between a and b" are read without order.
    """
    found: list[tuple[int, Operation]] = []
    for name, pattern, first in _SHAPES:
        for m in pattern.finditer(text):
            a, b = _number(m.group(1)), _number(m.group(2))
            if a is None or b is None:
                continue
            pair = (a, b) if first in (0, 1) else (b, a)
            found.append((m.start(), Operation(name, pair, first != 0)))
            break
    if not found:
        return None
    # The earliest mention wins; at one position the earlier shape does ("how many times" over "times").
    return min(found, key=lambda f: f[0])[1]


def operation_changed(question: str, paraphrase: str) -> str | None:
    """The paraphrase asks for another operation than the question, or swaps a difference's or a
    quotient's operands; None when either names no operation, or both ask the same."""
    q, p = operation(question), operation(paraphrase)
    if q is None or p is None:
        return None
    if q.name != p.name:
        return f"asks for a {p.name}, not a {q.name}"
    if q.ordered and p.ordered and q.operands != p.operands:
        sym = _SYMBOLS[q.name]
        return f"swapped operands: {p.operands[0]} {sym} {p.operands[1]}, not {q.operands[0]} {sym} {q.operands[1]}"
    return None
