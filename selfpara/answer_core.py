"""What an answer adds to its question: the core that two sentence answers must share to be one answer.

Natural answers restate the question ("The capital of France is Paris.", "The capital city
of France's nation is Paris."), so they rarely match exactly, and the short-answer checks
(`contains`, `numeric`) do not reach whole sentences. Take away the question's own words
and the words answers are framed with, and what stays is the answer: its names, numbers,
yes or no, and remaining content words. A long answer states its answer first and then
elaborates, so only its first sentence counts.

`same_core` decides only "same" (or nothing): a core can miss that two answers differ, so
it runs after the `distinct` check, which vetoes answers that name different things.
Measured on hand-labelled pairs of the default model's answers by
`benchmarks/bench_equivalence.py` (docs/guards.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from selfpara import mathanswer
from selfpara.quantities import number_set
from selfpara.text import STOPWORDS, entity_words, words

FRAMING = frozenset(
    # how answers frame an answer, whatever the question
    "answer answers correct called call known named also approximately about around roughly exactly nearly almost "
    "total equals equal sum result therefore thus hence so then because since which means indeed actually generally "
    "usually typically commonly often considered regarded widely one has have had yes no type kind part thing things "
    "process located lies lie situated found stands stand "
    # common verbs a rewording swaps for one another (make / produce, carry / transport)
    "make makes made produce produces produced carry carries carried transport transports transported change changes "
    "changed become becomes became turn turns turning turned use uses used give gives gave pull pulls pulled cause "
    "causes caused form forms formed occur occurs involve involves include includes contain contains get gets got "
    # prepositions STOPWORDS leaves in
    "through into onto around toward towards across along during within without upon over under above below "
    "between among via per than as".split()
)
"""Words answers wrap an answer in, whatever the question: never part of a core."""

NEGATIONS = frozenset(
    "not no never none neither nor isn't aren't wasn't weren't doesn't don't didn't cannot can't".split()
)

_YES_NO_QUESTION = re.compile(
    r"^\s*(is|are|was|were|do|does|did|can|could|will|would|should|has|have|had|am)\b", re.IGNORECASE
)
_NUMBER_QUESTION = re.compile(
    r"\b(how (many|much|long|far|old|tall|high|big|large|fast|heavy|deep|wide)|what (year|percentage|percent|number|"
    r"time|date|age)|which year|when)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])|\n+")
_ASIDE = re.compile(r",\s*(which|who|whose|where|located|known|making|with)\b|\s\(", re.IGNORECASE)
"""Where an aside about the answer starts ("honey, which is a sweet ...", "Everest (8,848 m)")."""
_LISTS = re.compile(r"\b(and|or)\b|,.*,", re.IGNORECASE)

LONG = 30
"""Words past which only an answer's first sentence counts."""

STEM = 5
"""Letters kept of a word to compare two answers (a crude stem: transport ~ transported, gravity ~ gravitational)."""


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
    lists: bool
    """Whether the counted text joins several things ("carbon dioxide and oxygen")."""

    @property
    def empty(self) -> bool:
        return not (self.names or self.numbers or self.content or self.polarity)


def _base(word: str) -> str:
    """A word without possessive or plural ending, to tell whether the question already holds it."""
    word = word.lower().removesuffix("'s").removesuffix("’s").strip("'’")
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _counted(answer: str) -> str:
    """The part of `answer` its core is read from: its first sentence if it is long, without asides."""
    text = answer.strip()
    if len(words(text)) > LONG:
        text = _SENTENCE.split(text, maxsplit=1)[0]
    return _ASIDE.split(text, maxsplit=1)[0] or text


def answer_core(question: str, answer: str) -> Core:
    """The core of `answer` as an answer to `question` (see the module docstring)."""
    text = _counted(answer)
    asked = {_base(w) for w in words(question)}
    ignored = asked | {_base(w) for w in STOPWORDS | FRAMING | NEGATIONS}
    said = words(text)
    names = frozenset(w[:STEM] for w in entity_words(text) if _base(w) not in ignored)
    content = frozenset(
        w[:STEM]
        for w in said
        if _base(w) not in ignored and w[:STEM] not in names and not number_set(w) and len(w) > 1
    )
    polarity = said[0] if said and said[0] in ("yes", "no") else None
    negated = bool(set(said[1:] if polarity else said) & NEGATIONS) and not set(words(question)) & NEGATIONS
    found = mathanswer.final_answer(answer)
    final = mathanswer.to_number(found) if found is not None else None
    numbers = frozenset(number_set(text) - number_set(question))
    return Core(names, numbers, content, polarity, negated, final, bool(_LISTS.search(text)))


def is_yes_no_question(question: str) -> bool:
    """Whether `question` asks for a yes or a no ("Is ...?", "Does ...?")."""
    return bool(_YES_NO_QUESTION.match(question))


def asks_for_number(question: str) -> bool:
    """Whether `question` asks for a quantity, a year or a date, or to compute with its numbers."""
    return bool(_NUMBER_QUESTION.search(question)) or bool(number_set(question))


def same_core(question: str, a: str, b: str) -> bool | None:
    """True when answers `a` and `b` give the same answer to `question`; None when their cores cannot tell.

    What decides, by what the question asks: a yes/no question, the same yes or no; a
    question asking for a number, the same final result of two worked (long) answers, or
    the same numbers (or final result) where both state some, as also where numbers are
    all an answer states; otherwise the same names where both give some, else the same
    other content words. Two sets are the same when they overlap by more than half
    (Jaccard > 0.5), or when one holds the other and the larger lists nothing beside it
    ("Paris" and "Paris, the City of Light" agree; "oxygen" and "carbon dioxide and
    oxygen" do not). A negation on one side only leaves the pair undecided.
    """
    ca, cb = answer_core(question, a), answer_core(question, b)
    if ca.negated != cb.negated or ca.empty or cb.empty:
        return None
    if is_yes_no_question(question) and ca.polarity and cb.polarity:
        return True if ca.polarity == cb.polarity else None
    worked = len(words(a)) > LONG and len(words(b)) > LONG
    if asks_for_number(question) and worked:  # reasoning first, the result last
        # A final number the question gave is a restated given (an answer cut off mid-way), not a result.
        result = ca.final is not None and ca.final == cb.final and ca.final not in number_set(question)
        return True if result else None
    textless = not (ca.names or ca.content) or not (cb.names or cb.content)
    if (asks_for_number(question) or textless) and ca.numbers and cb.numbers:
        agree = ca.numbers == cb.numbers or (ca.final is not None and ca.final == cb.final)
        return True if agree and _agree(ca.names, cb.names, ca, cb, optional=True) else None
    if ca.names and cb.names:
        return True if _agree(ca.names, cb.names, ca, cb) else None
    return True if _agree(ca.names | ca.content, cb.names | cb.content, ca, cb) else None


def _agree(sa: frozenset[str], sb: frozenset[str], ca: Core, cb: Core, *, optional: bool = False) -> bool:
    """Whether two cores' sets say the same (see `same_core`); with `optional`, an empty side agrees."""
    if not sa or not sb:
        return optional
    if len(sa & sb) / len(sa | sb) > 0.5:
        return True
    small, large = (sa, sb) if len(sa) <= len(sb) else (sb, sa)
    lister = cb if large is sb else ca
    return small <= large and not lister.lists
