"""What an answer adds to its question: the core that two sentence answers must share to be one answer.

Natural answers restate the question ("The capital of France is Paris.", "The capital city
of France's nation is Paris."), so they rarely match exactly, and the short-answer checks
(`contains`, `numeric`) do not reach whole sentences. Take away the question's own words
and the words every answer is framed with, and what stays is the answer: its names,
numbers, yes or no, and remaining content words. Two answers whose cores say the same,
with no negation on one side only, give the same answer to this question.

`same_core` decides only "same" (or nothing): a core can miss that two answers differ, so
it runs after the `distinct` check, which vetoes answers that name different things.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from selfpara import mathanswer
from selfpara.quantities import number_set
from selfpara.text import STOPWORDS, entity_words, words

FRAMING = frozenset(
    "answer answers correct called known named also approximately about around roughly exactly nearly almost "
    "total equals equal equal sum result therefore thus hence so then because since which means indeed "
    "actually generally usually typically commonly often considered regarded widely one has have had yes no".split()
)
"""Words answers wrap an answer in, whatever the question (their stems are ignored)."""

NEGATIONS = frozenset(
    "not no never none neither nor isn't aren't wasn't weren't doesn't don't didn't cannot can't".split()
)

_YES_NO_QUESTION = re.compile(
    r"^\s*(is|are|was|were|do|does|did|can|could|will|would|should|has|have|had|am)\b", re.IGNORECASE
)

STEM = 5
"""Letters kept of a word to compare (a crude stem: city ~ cities, France ~ France's)."""


@dataclass(frozen=True)
class Core:
    """What one answer says beyond its question."""

    names: frozenset[str]
    """Stems of capitalised names the question does not hold."""
    numbers: frozenset[Fraction]
    """Values of the numbers the question does not hold."""
    content: frozenset[str]
    """Stems of every other content word the question does not hold."""
    polarity: str | None
    """'yes' or 'no' when the answer opens with one, else None."""
    negated: bool
    """Whether the answer holds a negation word the question does not."""
    final: Fraction | None
    """The value of the answer's final number (the result of a worked answer), if any."""

    @property
    def empty(self) -> bool:
        return not (self.names or self.numbers or self.content or self.polarity)


def _stem(word: str) -> str:
    return word.removesuffix("'s").removesuffix("’s").strip("'’")[:STEM]


def answer_core(question: str, answer: str) -> Core:
    """The core of `answer` as an answer to `question` (see the module docstring)."""
    asked = {_stem(w) for w in words(question)}
    said = words(answer)
    ignored = asked | {_stem(w) for w in STOPWORDS | FRAMING}
    numbers = frozenset(number_set(answer) - number_set(question))
    names = frozenset(s for w in entity_words(answer) if (s := _stem(w)) not in ignored)
    content = frozenset(
        s
        for w in said
        if (s := _stem(w)) not in ignored and s not in names and not number_set(w) and len(s) > 1 and w not in NEGATIONS
    )
    polarity = said[0] if said and said[0] in ("yes", "no") else None
    negated = bool(set(said[1:] if polarity else said) & NEGATIONS) and not set(words(question)) & NEGATIONS
    found = mathanswer.final_answer(answer)
    final = mathanswer.to_number(found) if found is not None else None
    return Core(names, numbers, content, polarity, negated, final)


def is_yes_no_question(question: str) -> bool:
    """Whether `question` asks for a yes or a no ("Is ...?", "Does ...?")."""
    return bool(_YES_NO_QUESTION.match(question))


def same_core(question: str, a: str, b: str) -> bool | None:
    """True when answers `a` and `b` give the same answer to `question`; None when their cores cannot tell.

    Same means, in this order of what the answers state: the same yes or no to a yes/no
    question; else, where both state numbers, the same numbers (or the same final result);
    else the same names; else the same other content words. One side may add to the other
    (a longer answer adds details) as long as everything the shorter one states is in the
    longer one. A negation on one side only,
    or numbers that disagree, leave the pair undecided.
    """
    ca, cb = answer_core(question, a), answer_core(question, b)
    if ca.negated != cb.negated or ca.empty or cb.empty:
        return None
    if is_yes_no_question(question) and ca.polarity and cb.polarity:
        return True if ca.polarity == cb.polarity else None
    if ca.numbers and cb.numbers:
        if ca.numbers == cb.numbers or (ca.final is not None and ca.final == cb.final and ca.final in ca.numbers):
            return True if _no_conflicting_names(ca, cb) else None
        return None
    if ca.names and cb.names:
        return True if _within(ca.names, cb.names) else None
    return True if _within(ca.names | ca.content, cb.names | cb.content) else None


def _within(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether the smaller of two non-empty sets lies inside the larger."""
    small, large = sorted((a, b), key=len)
    return bool(small) and small <= large


def _no_conflicting_names(ca: Core, cb: Core) -> bool:
    """Numbers agree; the names must too, where both answers give some (one may give none)."""
    return not ca.names or not cb.names or _within(ca.names, cb.names)
