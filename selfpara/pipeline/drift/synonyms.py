"""Synonyms the drift checks read as the words they stand for.

The checks compare words, so a paraphrase that names the asked-for thing otherwise ("the seat of
government" for "the capital", "the monetary unit" for "the currency", "the Second World War"
for "World War II") looked like one that dropped it. Each phrase here is read as the words it
renames, in the question and the paraphrase alike, before any check compares them. A renaming is
listed only where it keeps the meaning whatever the question is about: "the largest city" or
"the most populous city" is not the capital, "atomic weight" is not the atomic number, "drew" is
not "painted", and none of them is here. Found on real candidates and human wordings
(docs/guards.md §1, third round).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

# A name after "government of" is kept: "the government of France sits" is "the capital of France".
_NAME = r"(?: of (?:the )?[A-Z][\w'’]*(?: [A-Z][\w'’]*)*)?"
_RENAMINGS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, flags), replacement)
    for pattern, replacement, flags in (
        # "Burkina Faso's seat of government", "the city where the government sits": the capital.
        (r"\bseats? of (?:the )?(?:national |central |federal )?government\b", "capital", re.I),
        (rf"\bgovernment({_NAME}) (?:sits|sit|is seated|is based|resides)\b", r"capital\1", re.I),
        # "the seat of Belize's national government" is "the capital of Belize".
        (
            r"\bseat of ([A-Z][\w'’]*(?: [A-Z][\w'’]*)*)['’]s? (?:national |central |federal |state )?government\b",
            r"capital of \1",
            0,
        ),
        # "From which city is X governed?", "X is governed from which city?": the city the government sits in.
        (r"\bfrom (which|what) city (is|are) (.+?) governed\b", r"\1 city \2 the capital of \3", re.I),
        (r"\b(which|what) city (is|are) (.+?) governed from\b", r"\1 city \2 the capital of \3", re.I),
        (r"\b(is|are) governed from (which|what) city\b", r"\1 the capital of \2 city", re.I),
        # "covers the most land area" asks what "the largest ... by area" asks.
        (r"\bmost ((?:land |surface )?area)\b", r"largest \1", re.I),
        # "the greatest height" is "the tallest" (read as "highest", as tallest is).
        (r"\b(?:greatest|largest|biggest) (height|elevation)\b", r"highest \1", re.I),
        (r"\bmonetary units?\b", "currency", re.I),
        # "wrote the music for X" asks for its composer, not its author.
        (r"\b(?:wrote|written|writes|write) the (?:music|score) (?:for|of|to)\b", "composed", re.I),
        # "Which composer wrote X?", "X was written by which composer?": composing, not authorship.
        (r"\b(which|what) composer (?:wrote|writes|write)\b", r"\1 composer composed", re.I),
        (r"\bwritten by (which|what) composer\b", r"composed by \1 composer", re.I),
        (r"\bthe majority of\b", "most of", re.I),
        (r"\bcomponents?\b", "part", re.I),
        # The world wars by ordinal, numeral or abbreviation.
        (r"\bWorld War (?:II|2|Two)\b|\bWW ?(?:II|2)\b", "Second World War", 0),
        (r"\bWorld War (?:I|1|One)\b|\bWW ?(?:I|1)\b", "First World War", 0),
    )
)


def renamed(text: str) -> str:
    """`text` with each renaming of the table read as the words it renames."""
    for pattern, replacement in _RENAMINGS:
        text = pattern.sub(replacement, text)
    return text


def reads_renamed(check: Callable[[str, str], str | None]) -> Callable[[str, str], str | None]:
    """The drift check `check` applied to the question and the paraphrase as `renamed` reads them."""

    @functools.wraps(check)
    def wrapped(question: str, paraphrase: str) -> str | None:
        return check(renamed(question), renamed(paraphrase))

    return wrapped
