"""Final-answer extraction and comparison for math: `\\boxed{}`, `####`, "the answer is", last number."""

from __future__ import annotations

import re
from fractions import Fraction

_BOXED = re.compile(r"\\boxed\s*\{")
_HASHES = re.compile(r"####\s*([^\n]+)")
_ANSWER_IS = re.compile(r"(?:final answer|the answer|answer)\s*(?:is|:|=)\s*([^\n]+)", re.IGNORECASE)
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


def final_answer(text: str) -> str | None:
    """The stated final answer: boxed, then `####`, then "the answer is", then the last number."""
    found = boxed(text)
    if found is not None:
        return found
    for pattern in (_HASHES, _ANSWER_IS):
        matches = pattern.findall(text)
        if matches:
            return matches[-1].strip().rstrip(".")
    numbers = _NUMBER.findall(text)
    return numbers[-1].strip() if numbers else None


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
