"""Faithful rewordings made without a model: the asked-for thing or relation named another way.

A vote gains only where the wordings' errors are independent, and on a small model that takes
wordings that name what is asked differently ("seat of government" for "capital", "74 protons"
for "atomic number 74", "the author of" for "wrote"); asked to write them itself, the model writes
its own confusion instead ("the largest city in X"). So they come from this table: each entry reads
one shape of question that asks for one relation and writes it again in other words that ask the
same, as people do. Entries are applied mechanically; every wording still goes through the drift
checks, which also catch a capture that went wrong.

A vote overrules the original only when the rewordings agree against it, so the order of an entry's
templates matters: the first ones are asked. Each entry offers the plain wording first (where one
wording misleads the model, the plain one is the likeliest answered right), then the others in the
order they were answered right on a development set of 106 items × 4 wordings the held-out runs do
not use (docs/results/lexical-held.md): "X's seat of government" (91%) before "the seat of
government of X" (80%) and "where the government of X sits" (73%); an element by its atomic
number (46%) before by its protons (15-23%).

A caveat the table accepts: "seat of government" names the capital everywhere but in a few
countries whose government sits elsewhere (the Netherlands, Benin, Malaysia, Bolivia, ...).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

NUM = r"-?\d[\d,]*(?:\.\d+)?"
"""A number as a question writes it: digits, thousands commas, a decimal part."""
ASK = r"(?:what is|how much is|calculate|compute)"
"""How an arithmetic question starts (`what's` is read as `what is`)."""
YEAR = r"(?P<lead>in what year|in which year|what year|which year)"
VERB = r"(?:did|was|were|is|does|do|had|has)"
_WRITER = r"(?:author|writer|novelist|poet|playwright)"
_WORK = r"(?:novel|book|play|poem|story|short story|epic|memoir)"
_ELEMENT = r"(?:the element )?(?P<x>[a-z][a-z]*(?: [a-z]+)??)(?: on the periodic table| in chemistry)?"
"""An element's name as a question writes it (one or two words, in any case: `common` lowers it), without
'on the periodic table'."""
_NOUNS = r"[a-z]+(?: [a-z]+)?"
"""What is counted, one or two words ('days', 'chromosome pairs')."""
_ONE_THING = r"(?:a|an|one) [a-z]+(?: [a-z]+)?"
"""One of what holds them ('a week', 'a standard deck')."""
_GOVERNMENT = r"(?:national |federal |central |state |provincial )?government"

_MUSIC = re.compile(r"\b(music|song|songs|symphony|opera|score|lyrics|anthem|concerto|sonata|ballet)\b", re.I)


@dataclass(frozen=True)
class Renaming:
    """One shape of question and the other wordings that ask the same.

    Attributes:
        name: the relation renamed (what `Variant.source` reports after "renaming:").
        patterns: regular expressions that must match the whole question (without its final
            "?" or "."), case-insensitively, capturing what the templates reuse.
        templates: the rewordings, in the order they are offered; `{x}` is a captured group as
            written, `{X}` the same with a capital first letter, `{x_s}` / `{X_s}` its possessive.
        accept: a test on the captured groups; the entry does not apply when it returns False.
        common: the captures are common nouns (an element's name), written in lower case whatever
            case the question gave them ("Tin is represented by ..." -> "the symbol for tin").
    """

    name: str
    patterns: tuple[str, ...]
    templates: tuple[str, ...]
    accept: Callable[[Mapping[str, str]], bool] = lambda groups: True
    common: bool = False


def _no_music(groups: Mapping[str, str]) -> bool:
    """'Who wrote the music for X?' asks for a composer: not the author entry's."""
    return not _MUSIC.search(groups.get("x", ""))


_KIND_OF_PLACE = re.compile(
    r"^(?:the )?(?:(?:U\.?S\.?|US|American|Canadian|Australian|Indian|Mexican|Brazilian|German|Russian)"
    r" )?(?:(?:state|province|territory|region|country|nation|republic|kingdom|island|canton|emirate) of )?",
    re.I,
)
"""What may come before a place's name ("the state of Louisiana", "the Canadian province of Manitoba")."""
_DANGLING = re.compile(r"\b(part|of|on|in|at|located|found|situated)$", re.I)


def _whole_name(groups: Mapping[str, str]) -> bool:
    """The captured text is a place's name ('Vietnam', 'the United States', at most 8 words: 'the Democratic
    Republic of the Congo' has 6), and ends where it ends ('Vietnam', not 'Vietnam part of'; not 'covered
    almost entirely by ice')."""
    x = _KIND_OF_PLACE.sub("", groups.get("x", ""))
    return x[:1].isupper() and not _DANGLING.search(x) and len(x.split()) <= 8


def _divides(groups: Mapping[str, str]) -> bool:
    """'How many times does B go into A' asks for a whole number: only where B divides A."""
    try:
        a, b = float(groups["a"].replace(",", "")), float(groups["b"].replace(",", ""))
    except ValueError:
        return False
    return b != 0 and a % b == 0


RENAMINGS: tuple[Renaming, ...] = (
    Renaming(
        "capital",
        (
            r"(?:what|which)(?: city)? is the capital(?: city)? of (?P<x>.+)",
            r"what is (?P<x>.+?)'s? capital(?: city)?",
            r"(?:what|which) city is (?P<x>.+?)'s? capital(?: city)?",
            r"(?P<x>.+?)'s? capital(?: city)? is (?:which|what)(?: city)?",
            r"(?:what|which) city serves as the capital of (?P<x>.+)",
            r"(?:can you )?(?:name|tell me) the capital(?: city)? of (?P<x>.+)",
            r"the capital(?: city)? of (?P<x>.+?) is (?:which|what)(?: city)?",
            r"what is the name of the capital(?: city)? of (?P<x>.+)",
            rf"(?:what|which) city is the seat of (?:the )?{_GOVERNMENT} of (?P<x>.+)",
            rf"(?:what|which) city is the seat of (?P<x>.+?)'s? {_GOVERNMENT}",
            rf"(?P<x>.+?)'s? seat of {_GOVERNMENT} is (?:in )?(?:which|what)(?: city)?",
            r"(?:in (?:which|what) city|where) does the (?:national )?government of (?P<x>.+?) sit",
            r"from (?:which|what) city is (?P<x>.+?) governed",
            r"(?:which|what) city is (?P<x>.+?) governed from",
            r"(?P<x>.+?) is governed from (?:which|what) city",
        ),
        (
            "What is the capital of {x}?",
            "{X_s} seat of government is in which city?",
            "Which city is the seat of government of {x}?",
            "Which city serves as the capital of {x}?",
            "In which city does the government of {x} sit?",
        ),
        _whole_name,
    ),
    Renaming(
        "author",
        (
            r"who wrote (?P<x>.+)",
            r"who (?:is|was) the (?:author|writer) of (?P<x>.+)",
            rf"(?P<x>.+?) was (?:written|penned) by (?:whom|which {_WRITER}|what {_WRITER})",
            rf"(?:which|what) {_WRITER} (?:wrote|penned) (?P<x>.+)",
            r"who penned (?P<x>.+)",
            r"(?:name|tell me) the (?:author|writer) of (?P<x>.+)",
            rf"(?P<x>.+?) is (?:a|an) {_WORK} by whom",
        ),
        (
            "Who wrote {x}?",
            "Who is the author of {x}?",
            "{X} was written by which author?",
            "Which writer penned {x}?",
            "Name the author of {x}.",
        ),
        _no_music,
    ),
    Renaming(
        "composer",
        (
            r"who composed (?P<x>.+)",
            r"who wrote the music (?:for|of|to) (?P<x>.+)",
            r"(?:which|what) composer (?:wrote|composed|created) (?P<x>.+)",
            r"who (?:is|was) the composer of (?P<x>.+)",
            r"(?P<x>.+?) was (?:composed|written) by (?:whom|which composer|what composer)",
            r"(?P<x>.+?) is the work of (?:which|what) composer",
            r"(?:name|tell me) the composer of (?P<x>.+)",
        ),
        (
            "Who composed {x}?",
            "Who is the composer of {x}?",
            "Which composer wrote {x}?",
            "{X} was composed by whom?",
            "Name the composer of {x}.",
        ),
    ),
    Renaming(
        "painter",
        (
            r"who painted (?P<x>.+)",
            r"(?:which|what) (?:artist|painter) painted (?P<x>.+)",
            r"(?:which|what) painter (?:created|made) (?P<x>.+)",
            r"who (?:is|was) the (?:painter|artist) of (?P<x>.+)",
            r"(?P<x>.+?) was painted by (?:whom|which artist|what artist|which painter|what painter)",
            r"(?:name|tell me) the (?:painter|artist) of (?P<x>.+)",
            r"(?P<x>.+?) is a painting by whom",
        ),
        (
            "Who painted {x}?",
            "Who is the painter of {x}?",
            "{X} was painted by which artist?",
            "Which artist painted {x}?",
            "Name the painter of {x}.",
        ),
    ),
    Renaming(
        "sculptor",
        (
            r"who (?:sculpted|carved) (?P<x>.+)",
            r"(?:which|what) (?:artist|sculptor) (?:sculpted|carved) (?P<x>.+)",
            r"(?:which|what) sculptor (?:created|made) (?P<x>.+)",
            r"who (?:is|was) the sculptor of (?P<x>.+)",
            r"(?P<x>.+?) was (?:sculpted|carved) by (?:whom|which artist|what artist|which sculptor|what sculptor)",
            r"(?P<x>.+?) was (?:created|made) by (?:which|what) sculptor",
            r"(?:name|tell me) the sculptor (?:of|who (?:created|made|sculpted)) (?P<x>.+)",
        ),
        (
            "Who sculpted {x}?",
            "Which artist sculpted {x}?",
            "Who is the sculptor of {x}?",
            "{X} was sculpted by which artist?",
        ),
    ),
    Renaming(
        "inventor",
        (
            r"who invented (?P<x>.+)",
            r"who (?:is|was) the inventor of (?P<x>.+)",
            r"(?P<x>.+?) was invented by (?:whom|which inventor|what inventor)",
            r"who is credited with (?:inventing|the invention of) (?P<x>.+)",
            r"(?:name|tell me) the inventor of (?P<x>.+)",
        ),
        (
            "Who invented {x}?",
            "Who was the inventor of {x}?",
            "{X} was invented by whom?",
            "Who is credited with inventing {x}?",
            "Name the inventor of {x}.",
        ),
    ),
    Renaming(
        "discoverer",
        (
            r"who discovered (?P<x>.+)",
            r"(?P<x>.+?) was discovered by (?:whom|which scientist|what scientist)",
            r"who (?:is|was) the discoverer of (?P<x>.+)",
            r"who is credited with (?:discovering|the discovery of) (?P<x>.+)",
            r"(?:which|what) scientist discovered (?P<x>.+)",
        ),
        (
            "Who discovered {x}?",
            "Who is credited with the discovery of {x}?",
            "{X} was discovered by whom?",
            "Who was the discoverer of {x}?",
        ),
    ),
    Renaming(
        "chemical symbol",
        (
            rf"what is the (?:chemical |periodic table |element )?symbol (?:for|of) {_ELEMENT}",
            rf"(?:which|what) (?:chemical )?symbol (?:stands for|represents|denotes) {_ELEMENT}",
            rf"what is {_ELEMENT}'s (?:chemical )?symbol",
            rf"{_ELEMENT}'s (?:chemical )?symbol is what",
            rf"(?:give|name|tell me) the (?:chemical )?symbol (?:for|of) {_ELEMENT}",
            rf"{_ELEMENT} is (?:represented|written|denoted) (?:by|with) (?:which|what) (?:chemical )?symbol",
            rf"(?:which|what) (?:chemical )?symbol does {_ELEMENT} (?:have|use|go by)",
        ),
        (
            "What is the chemical symbol for {x}?",
            "Which symbol represents {x} on the periodic table?",
            "What is {x_s} chemical symbol?",
            "On the periodic table, {x} is written with which symbol?",
            "Name the chemical symbol of {x}.",
        ),
        common=True,
    ),
    Renaming(
        "element by atomic number",
        (
            r"(?:which|what) (?:chemical )?element has (?:the |an )?atomic number(?: of)? (?P<n>\d+)",
            r"what is the (?:chemical )?element (?:with|of) (?:the |an )?atomic number(?: of)? (?P<n>\d+)",
            r"(?:which|what) (?:chemical )?element is (?:atomic )?number (?P<n>\d+)(?: on the periodic table)?",
            r"(?:name|tell me) the (?:chemical )?element with (?:the |an )?atomic number(?: of)? (?P<n>\d+)",
            r"the (?:chemical )?element with (?:the |an )?atomic number(?: of)? (?P<n>\d+)"
            r" is (?:called )?(?:what|which)"
            r"(?: element)?",
            r"(?:which|what) (?:chemical )?element has (?P<n>\d+) protons(?: in (?:its|the|each) (?:nucleus|atom))?",
            r"an atom with (?P<n>\d+) protons is (?:which|what)(?: element)?",
            r"(?:the )?(?:chemical )?element (?:number|no\.?) (?P<n>\d+) is (?:which|what|called what)(?: element)?",
            r"(?:which|what) (?:chemical )?element's atomic number is (?P<n>\d+)",
        ),
        (
            "Which element has atomic number {n}?",
            "Name the element whose atomic number is {n}.",
            "Which element has {n} protons in its nucleus?",
            "Which chemical element has {n} protons in each atom?",
            "An atom with {n} protons is which element?",
        ),
    ),
    Renaming(
        "atomic number",
        (
            rf"what is the atomic number of {_ELEMENT}",
            rf"what atomic number does {_ELEMENT} have",
            rf"{_ELEMENT} has (?:which|what) atomic number",
            rf"how many protons (?:does|do) (?:an? )?(?:atoms? of )?{_ELEMENT}(?: atoms?)? have"
            r"(?: in (?:its|the|each) nucleus)?",
        ),
        (
            "What is the atomic number of {x}?",
            "How many protons does an atom of {x} have?",
            "How many protons are in the nucleus of a {x} atom?",
            "{X} has what atomic number?",
        ),
        common=True,
    ),
    Renaming(
        "year",
        (rf"{YEAR} (?P<rest>{VERB} .+)",),
        (
            "When, by year, {rest}?",
            "In which year {rest}?",
            "In what year {rest}?",
        ),
    ),
    Renaming(
        "product",
        (
            rf"{ASK} (?P<a>{NUM})(?: (?:times|multiplied by) | ?(?:x|\*|×) ?)(?P<b>{NUM})",
            rf"what is the product of (?P<a>{NUM}) and (?P<b>{NUM})",
        ),
        (
            "What is the product of {a} and {b}?",
            "What do you get when you multiply {a} by {b}?",
            "How much is {a} multiplied by {b}?",
        ),
    ),
    Renaming(
        "sum",
        (
            rf"{ASK} (?P<a>{NUM})(?: plus | ?\+ ?)(?P<b>{NUM})",
            rf"what is the sum of (?P<a>{NUM}) and (?P<b>{NUM})",
        ),
        (
            "What is the sum of {a} and {b}?",
            "What do you get when you add {a} and {b}?",
            "How much is {a} and {b} added together?",
        ),
    ),
    Renaming(
        "difference",
        (rf"{ASK} (?P<a>{NUM})(?: minus | ?[-−] ?)(?P<b>{NUM})",),
        (
            "What do you get when you subtract {b} from {a}?",
            "How much is left when {b} is taken away from {a}?",
            "What is {a} take away {b}?",
        ),
    ),
    Renaming(
        "quotient",
        (rf"{ASK} (?P<a>{NUM})(?: divided by | ?[/÷] ?)(?P<b>{NUM})",),
        (
            "What do you get when you divide {a} by {b}?",
            "How many times does {b} go into {a}?",
            "What is the quotient when {a} is divided by {b}?",
        ),
        _divides,
    ),
    Renaming(
        "percent",
        (rf"{ASK} (?P<p>{NUM})(?: ?%| percent) of (?P<y>{NUM})",),
        (
            "How much is {p} percent of {y}?",
            "What number is {p}% of {y}?",
            "Calculate {p} percent of {y}.",
        ),
    ),
    Renaming(
        "count",
        (
            rf"how many (?P<x>{_NOUNS}) are (?:there )?in (?P<y>{_ONE_THING})",
            rf"how many (?P<x>{_NOUNS}) (?:does|do) (?P<y>{_ONE_THING}) have",
            rf"what is the number of (?P<x>{_NOUNS}) in (?P<y>{_ONE_THING})",
        ),
        (
            "How many {x} does {y} have?",
            "{Y} has how many {x}?",
            "What is the number of {x} in {y}?",
        ),
    ),
    Renaming(
        "currency",
        (
            r"what is the currency of (?P<x>.+)",
            r"what currency is used in (?P<x>.+)",
            r"what currency does (?P<x>.+?) use",
        ),
        (
            "Which currency do people in {x} pay with?",
            "What is the name of the currency used in {x}?",
            "{X_s} currency is called what?",
        ),
        _whole_name,
    ),
    Renaming(
        "continent",
        (
            r"(?:on )?(?:which|what) continent is (?P<x>.+?)(?: located| found)?(?: on| in)?",
            r"(?P<x>.+?) is (?:located |found )?on which continent",
        ),
        (
            "{X} lies on which continent?",
            "Which continent is {x} part of?",
            "Name the continent where {x} lies.",
        ),
        _whole_name,
    ),
)
"""Every renaming, in the order they are tried; a question takes the first that matches."""


@dataclass(frozen=True)
class Renamed:
    """One wording the table made: its text and the entry that made it."""

    text: str
    renaming: str


def _article_lowered(text: str, start: int) -> str:
    """A capture that opened the question with an article ('The opera Carmen is the work of ...') in
    the case it takes inside a sentence ('the opera Carmen'); a title keeps its own ('The Thinker')."""
    words = text.split(" ", 2)
    if start == 0 and len(words) > 1 and words[0] in ("The", "A", "An") and words[1][:1].islower():
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


_NOT_ONE_QUESTION = re.compile(r"[?!()\[\]{}<>;]")
"""Marks of a second sentence or an aside inside the question: the table reads one plain question only,
so that text riding on it (a note to whoever rewords it) is not copied into its wordings."""
_NOT_A_NAME = re.compile(
    r"\b(?:(?:and|or|but|also)\s+(?:in\s+)?(?:what|which|who|whom|whose|when|where|why|how)|please)\b"
    r"|^is\s+it\b",
    re.I,
)
"""What a captured name or event never holds: a second question joined on ("antigone and what are the dates of
his birth", "the printing press and in what year"), a request's politeness ("Peru please"), or the "is it" of
"What year is it ...?" (which asks for the year now, not an event's). Measured on the public sets' 1,931
wordings (data/public), these were the table's malformed wordings."""
_MAX_CAPTURE_WORDS = 16
"""The most words a capture may hold (an event a year question names runs to 13: "did the United Kingdom vote
in a referendum to leave the European Union")."""


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
            match = re.fullmatch(pattern, text, flags=re.I)
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
