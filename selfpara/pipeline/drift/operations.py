"""Which arithmetic operation a short question asks for, and on which operands in which order.

Read by the `asks` drift check (selfpara.pipeline.drift.asks): a paraphrase of "What is 48 minus 44?" keeps
both numbers (the `numbers` check passes) yet asks another thing when it swaps them ("44 minus
48 equals?", "the result when 48 is subtracted from 44") or turns a product into a quotient
("How many times 12 is 12?" for "What is 12 times 12?"): both kinds were kept by every
other cheap check on the labelled paraphrase set (docs/guards.md).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import NamedTuple

from selfpara.util.quantities import numbers

_N = r"(\d[\d,]*(?:\.\d+)?|[a-z]+(?:-[a-z]+)?)"
_D = r"(\d[\d,]*(?:\.\d+)?)"  # digits only: "forty-eight" is no difference, "1990-95" no range read
_AUX = r"(?:does|do|did|is|are|can|could|will|would|should|must)"

# (operation, pattern, which group is the first operand (a in a - b, a / b); None: order-free).
# "how many times ... go into / is" comes before "times": it asks for a quotient, not a product.
_PATTERNS: tuple[tuple[str, re.Pattern[str], int | None], ...] = tuple(
    (op, re.compile(pattern, re.I), first)
    for op, pattern, first in (
        ("quotient", rf"how many times (?:{_AUX} )?{_N} (?:go|goes|fit|fits) into {_N}", 2),
        ("quotient", rf"how many times (?:{_AUX} )?{_N} (?:{_AUX}|makes?|equals?|gives?) {_N}", 2),
        ("quotient", rf"{_N} divided by {_N}", 1),
        ("quotient", rf"divide {_N} by {_N}", 1),
        ("quotient", rf"{_N} divided into {_N}", 2),
        ("quotient", rf"split {_N} into {_N}", 1),
        ("quotient", rf"{_D} ?/ ?{_D}", 1),
        ("quotient", rf"quotient of {_N} (?:and|by) {_N}", 1),
        ("difference", rf"{_N} minus {_N}", 1),
        ("difference", rf"{_N} (?:is |are )?(?:subtracted|taken away|taken) from {_N}", 2),
        ("difference", rf"(?:subtract|take away|take|deduct) {_N} (?:away )?from {_N}", 2),
        ("difference", rf"{_N} less than {_N}", 2),
        ("difference", rf"{_D} - {_D}", 1),
        ("difference", rf"difference (?:between|of) {_N} and {_N}", None),
        ("product", rf"{_N} (?:times|multiplied by|x|\*|×) {_N}", None),
        ("product", rf"multiply {_N} (?:by|and|with) {_N}", None),
        ("product", rf"product of {_N} and {_N}", None),
        ("sum", rf"{_N} (?:plus|\+|added to) {_N}", None),
        ("sum", rf"add {_N} (?:and|to|plus) {_N}", None),
        ("sum", rf"sum of {_N} and {_N}", None),
    )
)


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
    for name, pattern, first in _PATTERNS:
        for m in pattern.finditer(text):
            a, b = _number(m.group(1)), _number(m.group(2))
            if a is None or b is None:
                continue
            pair = (a, b) if first in (1, None) else (b, a)
            found.append((m.start(), Operation(name, pair, first is not None)))
            break
    if not found:
        return None
    # The earliest mention wins; at one position the earlier pattern does ("how many times" over "times").
    return min(found, key=lambda f: f[0])[1]


def _symbol(name: str) -> str:
    return {"quotient": "/", "difference": "-", "product": "x", "sum": "+"}[name]


def operation_changed(question: str, paraphrase: str) -> str | None:
    """The paraphrase asks for another operation than the question, or swaps a difference's or a
    quotient's operands; None when either names no operation, or both ask the same."""
    q, p = operation(question), operation(paraphrase)
    if q is None or p is None:
        return None
    if q.name != p.name:
        return f"asks for a {p.name}, not a {q.name}"
    if q.ordered and p.ordered and q.operands != p.operands:
        sym = _symbol(q.name)
        return f"swapped operands: {p.operands[0]} {sym} {p.operands[1]}, not {q.operands[0]} {sym} {q.operands[1]}"
    return None
