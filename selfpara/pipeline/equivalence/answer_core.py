"""What an answer adds to its question: the core that two sentence answers must share to be one answer.

Natural answers restate the question ("The capital of France is Paris.", "The capital city
of France's nation is Paris."), so they rarely match exactly, and the short-answer checks
(`contains`, `numeric`) do not reach whole sentences. Take away the question's own words
and the words answers are framed with, and what stays is the answer: its names, numbers,
yes or no, and remaining content words. A long answer usually states its answer first and then
elaborates, so its first sentence counts first; when that leaves a pair open, every
sentence of it is tried, since some answers lead with context and say the answer later
("... The process of this conversion is known as photosynthesis.").

`same_core` decides only "same" (or nothing): a core can miss that two answers differ, so
it runs after the `distinct` check, which vetoes answers that name different things.
Measured on hand-labelled pairs of the default model's answers by
`research/equivalence.py` (docs/guards.md).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from fractions import Fraction

from selfpara.pipeline.lexicon import quantities
from selfpara.pipeline.lexicon.quantities import number_set
from selfpara.pipeline.lexicon.tables import LEXICON
from selfpara.pipeline.lexicon.text import (
    MONTHS,
    NAME_RUN,
    STOPWORDS,
    acronyms,
    as_heads,
    base,
    entity_words,
    enumerated,
    expansion,
    first_sentence,
    is_negation,
    joined_lists,
    said_as,
    sentences,
    stem,
    words,
)

FRAMING = frozenset(
    w for part in ("framing", "places", "verbs", "prepositions") for w in LEXICON.words(f"answers.{part}")
)
"""Words answers wrap an answer in, whatever the question: never part of a core."""

_YES_NO = LEXICON.word_set("answers.yes_no")
_YES_NO_QUESTION = LEXICON.pattern("answers.yes_no_question")
_NUMBER_QUESTION = LEXICON.pattern("answers.number_question")
_ASIDE = LEXICON.pattern("answers.aside")
_ASIDE_ENDS = LEXICON.pattern("answers.aside_ends")
_SPECIFIES = LEXICON.pattern("answers.specifies")
_LISTS = LEXICON.pattern("answers.lists")
_SPANS = LEXICON.pattern("numbers_check.range")
_MOUNT = LEXICON.pattern("case_sensitive.mount", case=True)
_BRACKETS = re.compile(r"\s*[(（][^()（）]*[)）]|\s*[(（].*$", re.DOTALL)
"""A bracketed aside ("Everest (8,848 m) is ..."), or an unclosed one to the end."""

_MONTH_STEMS = frozenset(stem(m, 5) for m in MONTHS)
_COMPOUND = re.compile(r"\b([A-Za-z]+)-([a-z]+)\b")
"""A hyphenated compound of a lower-case second part ("rear-view"; "Rolls-Royce" is a name)."""

LONG = 30
"""Words past which only an answer's first sentence counts."""

STEM = 5
"""Letters kept of a word to compare two answers (a crude stem: transport ~ transported, gravity ~ gravitational)."""


@dataclass(frozen=True)
class Core:
    """What one answer says beyond its question."""

    names: frozenset[str]
    """Stems of capitalised names the question does not hold (with the question's words a name holds:
    "Mexico City" to "What is the capital of Mexico?" is {mexic, city})."""
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
    spans: bool = False
    """Whether the counted text states a span ("from 1933 to 1945", "between 5 and 7")."""
    items: frozenset[str] = frozenset()
    """Stems of what the counted text enumerates ("Mercury, Venus, and Mars"), if it does."""
    name_runs: tuple[tuple[frozenset[str], frozenset[str]], ...] = ()
    """Each name in `names` that holds a name of the question: (its other stems, its question stems), as
    ({city}, {mexic}) for "Mexico City" answering "What is the capital of Mexico?"."""
    echoes: frozenset[str] = frozenset()
    """Stems of the question's words said after the answer began ("the city of Mexico" echoes mexic)."""

    @property
    def empty(self) -> bool:
        return not (self.names or self.numbers or self.content or self.polarity)


def _without_asides(text: str) -> str:
    """`text` without its asides: brackets, and a comma clause about the answer.

    A comma aside that closes with a comma where the main verb resumes ("The powerhouse of
    the cell, which is part of ..., is the mitochondria.") is cut out; one that does not
    close runs to the end ("honey, which is a sweet, sticky substance ...") and is cut off.
    """
    text = _BRACKETS.sub("", text)
    while found := _ASIDE.search(text):
        if _SPECIFIES.match(text, found.start()) and _LISTS.search(first_sentence(text[found.end() :])):
            return text  # the list a sentence specifies is what it names ("occupied several countries,
            # including: France, Belgium and Denmark."): no aside
        resumes = _ASIDE_ENDS.search(text, found.end())
        stop = re.search(r"[.!?;]", text[found.end() : resumes.start()]) if resumes else True
        if resumes and not stop:
            text = text[: found.start()] + " " + text[resumes.start() + 1 :]
        else:
            return text[: found.start()] or text
    return text


def _counted(question: str, answer: str, *, cut: bool = True) -> str:
    """The part of `answer` its core is read from: its first sentence if the answer is long or that
    sentence restates the whole question (see `_restates`), else all of it; without brackets, and
    with `cut`, without comma asides (see `_without_asides`)."""
    text = joined_lists(answer.strip())
    first = first_sentence(text)
    if len(words(text)) > LONG or _restates(question, first):
        text = first
    kept = _BRACKETS.sub("", text)
    if cut:
        without = _without_asides(text)
        # A number question's answer may be what the aside says ("Lincoln was the 16th President, serving
        # from March 4, 1861, to April 15, 1865."): an aside holding a number of its own stays.
        if not (_NUMBER_QUESTION.search(question) and number_set(kept) - number_set(without) - number_set(question)):
            kept = without
    return kept or text


def _restates(question: str, sentence: str) -> bool:
    """Whether `sentence` says every content word of `question` (by stem): where an answer states its answer."""
    asked = {stem(w, STEM) for w in words(question)} - {stem(w, STEM) for w in STOPWORDS | FRAMING}
    return asked <= {stem(w, STEM) for w in words(sentence)}


def _sentences(answer: str) -> list[str]:
    """The sentences of `answer`, each without asides; [] if it has only one."""
    found = [s for s in sentences(answer) if words(s)]
    return [_without_asides(s) or s for s in found] if len(found) > 1 else []


def answer_core(question: str, answer: str) -> Core:
    """The core of `answer` as an answer to `question` (see the module docstring)."""
    return _core_of(question, _counted(question, answer), answer)


def _core_of(question: str, text: str, answer: str) -> Core:
    """The core of `text`, the counted part (or one sentence) of `answer`; if cutting an aside off the
    counted part left nothing, with the aside ("Norway is on the Northern hemisphere, located in
    Europe.": the aside is the answer)."""
    core = _read_core(question, text, answer)
    if core.empty and text == _counted(question, answer):
        return _read_core(question, _counted(question, answer, cut=False), answer)
    return core


def _spelled_out(text: str, answer: str) -> str:
    """`text` with each acronym the whole answer writes out as its name ("the NFL (National Football
    League)", where the bracket is cut from the counted text): "NFL" and the name are one answer."""
    for acronym in set(acronyms(text, lower=False)):
        name = expansion(acronym, answer)
        if name:
            text = re.sub(rf"\b{acronym}\b", name, text)
    return text


def _joined(text: str) -> str:
    """`text` with its hyphenated compounds written as one word, as another answer may write them
    ("rear-view mirror", "rearview mirror"); not a negation's ("non-stop") or a number's ("twenty-one")."""

    def join(m: re.Match[str]) -> str:
        first, second = m.group(1), m.group(2)
        kept = is_negation(first.lower()) or number_set(first) or number_set(second)
        return m.group() if kept else first + second

    return _COMPOUND.sub(join, text)


def _read_core(question: str, text: str, answer: str) -> Core:
    """The core read from `text`, a part of `answer` (the whole answer gives the final number)."""
    text = as_heads(_spelled_out(_MOUNT.sub("Mount", text), answer), question)
    asked = {base(w) for w in words(question)}
    asked_phrase = f" {' '.join(base(w) for w in words(question))} "
    asked_names = {base(w) for w in entity_words(question)}
    framing = {base(w) for w in STOPWORDS | FRAMING}
    said = words(_joined(text))
    names: set[str] = set()
    runs = []
    dates_aside = not asks_for_number(question)
    for run in NAME_RUN.finditer(text):
        if dates_aside and _month_of_a_date(text, run):
            continue  # a date the question does not ask for is a detail, as a year is ("held on August 15, 1969")
        run_words = [base(w) for w in words(run.group())]
        named = list(itertools.dropwhile(lambda w: _frames(w, framing), run_words))  # "In Baja California"
        if any(len(r) > 1 and f" {' '.join(r)} " in asked_phrase for r in (run_words, named)):
            continue  # the question's own words in a row, capitalised ("the Super Bowl" to "... the super bowl")
        whole = entity_words(run.group()) | _month_of_a_date(text, run)
        parts = [w for w in whole if not _frames(w, framing)]
        # A name of several words that only its framing words set apart from the question's ("North Sea" to
        # "What sea separates ...?") is a name all the same: without them it would say nothing.
        if len(whole) > 1 and parts and all(base(w) in asked for w in parts) and len(parts) < len(whole):
            parts = list(whole)
        # a name beyond the question, with any question word in it; or one made of the question's words
        # that the question does not write as this name ("Belize City" to "Which city is Belize governed
        # from?"; "Gulf of California" to "Which Gulf is between Baja California and Mexico?")
        if any(base(w) not in asked for w in parts) or len(parts) > 1:
            names |= {stem(w, STEM) for w in parts}
            # only the question's own names ("Mexico"), not its common nouns ("river" of "the Danube River")
            held = frozenset(stem(w, STEM) for w in parts if base(w) in asked_names)
            if held:
                runs.append((frozenset(stem(w, STEM) for w in parts) - held, held))
    content = frozenset(
        stem(w, STEM)
        for w in said
        if not said_as(w, asked)
        and not _frames(w, framing)
        and stem(w, STEM) not in names
        and not number_set(w)
        and len(w) > 1
    )
    start = next((i for i, w in enumerate(said) if stem(w, STEM) in names | content), len(said))
    echoes = frozenset(stem(w, STEM) for w in said[start + 1 :] if base(w) in asked and not _frames(w, framing))
    polarity = said[0] if said and said[0] in _YES_NO else None
    # "not only ... but also" adds, it does not deny
    denials = [i for i, w in enumerate(said) if is_negation(w) and said[i + 1 : i + 2] != ["only"]]
    negated = any(i > 0 or not polarity for i in denials) and not any(is_negation(w) for w in words(question))
    found = quantities.final_answer(joined_lists(answer))  # a list's last marker ("3. ...") is no result
    final = quantities.to_number(found) if found is not None else None
    numbers = frozenset(number_set(text) - number_set(question))
    lists, spans = bool(_LISTS.search(text)), bool(_SPANS.search(text))
    items = frozenset(stem(w, STEM) for item in enumerated(text) for w in words(item) if w not in STOPWORDS)
    return Core(frozenset(names), numbers, content, polarity, negated, final, lists, spans, items, tuple(runs), echoes)


def _frames(word: str, framing: set[str]) -> bool:
    """Whether `word` frames an answer rather than saying it: a framing word, a stopword or a negation (a
    month is not, although "may" is a stopword: `_month_of_a_date` lets only a date's through)."""
    return base(word) not in MONTHS and (base(word) in framing or is_negation(word))


def _months(names: frozenset[str]) -> frozenset[str]:
    """The month names among a core's name stems."""
    return frozenset(n for n in names if n in _MONTH_STEMS)


def _month_of_a_date(text: str, run: re.Match[str]) -> set[str]:
    """The month a name run is, where a number stands just before or after it ("May 5, 1821", "5 May"):
    "May" is a stopword, and without this "died on May 5" and "died on January 5" would say the same."""
    word = run.group().lower()
    dated = re.match(r"\s*\d", text[run.end() :]) or re.search(r"\d\s*$", text[: run.start()])
    return {word} if word in MONTHS and dated else set()


def is_yes_no_question(question: str) -> bool:
    """Whether `question` asks for a yes or a no ("Is ...?", "Does ...?")."""
    return bool(_YES_NO_QUESTION.match(question))


def asks_for_number(question: str) -> bool:
    """Whether `question` asks for a quantity, a year or a date, or to compute with its numbers (an ordinal is
    none to compute with: "Who was the first American in space?")."""
    return bool(_NUMBER_QUESTION.search(question)) or bool(number_set(question, ordinals=False))


def same_core(question: str, a: str, b: str) -> bool | None:
    """True when answers `a` and `b` give the same answer to `question`; None when their cores cannot tell.

    What decides, by what the question asks: a yes/no question, the same yes or no; a question
    asking for a number, the same final result of two worked (long) answers, or the same numbers
    (or final result) where both state some, as also where numbers are all an answer states or
    both give a date (then the day too: "June 26, 2004" is not "June 4, 2004", "June 2004" is
    either), and never an answer with a number beside one without where a number is asked for;
    otherwise the same names where both give some, else the same other content words. Two sets
    are the same when they overlap by more than half (Jaccard > 0.5), or when one holds the other
    and the larger lists nothing beside it ("Paris" and "Paris, the City of Light" agree; "oxygen"
    and "carbon dioxide and oxygen" do not), and two lists never when each names something the
    other does not; failing that, the same without the question's words in another form ("Indian
    Rupee" and "rupee" for "the currency of India"), unless the other answer names something else
    in their place. A negation on one side only leaves the pair undecided, and so does a name that
    holds a question's word the other answer never says after its own answer ("Mexico City" and
    "The capital of Mexico is City"; "the city of Mexico" agrees).
    When the first sentences leave a pair open, every sentence of an answer of several is compared
    with the other answer (or its every sentence), and one that agrees decides, unless the answer's
    first sentence restates the whole question and says something beyond it (then it is the
    answer; "Jackson had two parents." is not); so does what a specifying aside names ("...,
    specifically in the Book of Proverbs").
    """
    first_a, first_b = answer_core(question, a), answer_core(question, b)
    worked = len(words(a)) > LONG and len(words(b)) > LONG
    if asks_for_number(question) and worked:  # reasoning first, the result last
        if first_a.negated != first_b.negated or first_a.empty or first_b.empty:
            return None
        # A final number the question gave is a restated given (an answer cut off mid-way), not a result.
        result = first_a.final is not None and first_a.final == first_b.final
        return True if result and first_a.final not in number_set(question) else None
    if _same_counted(question, first_a, first_b):
        return True
    if first_a.negated != first_b.negated:  # "Ethiopia has no official capital. It's using Addis Ababa ..."
        return None
    sa = (_later_answers(question, a) or [first_a]) + _specified(question, a)
    sb = (_later_answers(question, b) or [first_b]) + _specified(question, b)
    if len(sa) == len(sb) == 1:
        return None
    # Where the first sentences give two dates, a later sentence of each alike is background ("died on April 19,
    # 1882. He was born on February 12, 1809." / "died on February 19, 1882. He was born on ..."): one side's
    # first sentence must agree.
    background = _dates_differ(first_a, first_b)
    pairs = ((x, y) for i, x in enumerate(sa) for j, y in enumerate(sb) if not (background and i and j))
    return True if any(_same_counted(question, x, y) for x, y in pairs) else None


def _later_answers(question: str, answer: str) -> list[Core]:
    """The cores of every sentence of `answer`, if it has several and its first does not restate the question.

    A first sentence that says all the question's words ("The capital of Australia is Canberra.")
    is where the answer is stated; a later one ("Sydney is the largest city.") is then no answer.
    """
    sentences = _sentences(answer)
    if not sentences or _restates(question, sentences[0]) and _names_something(question, sentences[0], answer):
        return []
    return [_core_of(question, sentence, answer) for sentence in sentences]


def _names_something(question: str, sentence: str, answer: str) -> bool:
    """Whether `sentence` of `answer` names or says something beyond a number the question does not ask for
    ("President Andrew Jackson had two parents." names none of them: the next sentence does)."""
    core = _core_of(question, sentence, answer)
    said = (core.names | core.content) - {stem(w, STEM) for w in words(question)}
    return bool(said or core.polarity) or bool(core.numbers and _NUMBER_QUESTION.search(question))


def _specified(question: str, answer: str) -> list[Core]:
    """The cores of what each specifying aside of the counted text names, to its sentence's end ("The song
    of Solomon is a chapter in the Bible, specifically in the Book of Proverbs.": the Book of Proverbs)."""
    text = _counted(question, answer, cut=False)
    found = (first_sentence(text[m.end() :]).split(";")[0] for m in _SPECIFIES.finditer(text))
    return [_read_core(question, part, answer) for part in found if words(part)]


def _same_counted(question: str, ca: Core, cb: Core) -> bool:
    """Whether two cores (of short answers, or of one sentence each) give the same answer (see `same_core`)."""
    if ca.negated != cb.negated or ca.empty or cb.empty:
        return False
    if is_yes_no_question(question) and ca.polarity and cb.polarity:
        return ca.polarity == cb.polarity
    if ca.items and cb.items and ca.items != cb.items:
        return False  # two enumerations are one answer only when they name the same things
    textless = not (ca.names or ca.content) or not (cb.names or cb.content)
    months_a, months_b = _months(ca.names), _months(cb.names)
    dated = bool(months_a and months_b)
    if (asks_for_number(question) or textless or dated) and ca.numbers and cb.numbers:
        agree = ca.numbers == cb.numbers
        if ca.spans and cb.spans:
            # Two spans are one where one holds the other's ends ("from 1933 to 1945" / "from March 4, 1933, to
            # January 20, 1945"), not where they only end alike ("from 1960 to 1964" / "from 1961 to 1964").
            small, large = sorted((ca.numbers, cb.numbers), key=len)
            agree = agree or (len(small) > 1 and small <= large)
        else:  # the same result: "born in 1776, died in 1812" / "born in 1801, died in 1812" to "When did he die?"
            agree = agree or (ca.final is not None and ca.final == cb.final)
        # Names beside the same number need only not contradict ("The RMS Titanic" / "the Titanic ... 1912"); two
        # dates agree by `_dates_differ`.
        if dated:
            agree = not _dates_differ(ca, cb)
        return agree and (not ca.names or not cb.names or bool(ca.names & cb.names))
    if _NUMBER_QUESTION.search(question) and bool(ca.numbers) != bool(cb.numbers):
        return False  # a number asked for, given by one answer only: "invented it in 2004" / "invented it"
    if ca.names and cb.names:
        return _agree(question, ca.names, cb.names, ca, cb)
    return _agree(question, ca.names | ca.content, cb.names | cb.content, ca, cb)


def _dates_differ(ca: Core, cb: Core) -> bool:
    """Whether two cores that both give a date give two dates: a date's month is part of its number ("May 5, 1821"
    is not "January 5, 1821"), and so is its day ("June 26, 2004" is not "June 4, 2004"; "June 2004" is either)."""
    months_a, months_b = _months(ca.names), _months(cb.names)
    if not (months_a and months_b and ca.numbers and cb.numbers):
        return False
    return months_a != months_b or not (ca.numbers <= cb.numbers or cb.numbers <= ca.numbers)


def _agree(question: str, sa: frozenset[str], sb: frozenset[str], ca: Core, cb: Core) -> bool:
    """Whether two cores' sets say the same (see `same_core`)."""
    if not sa or not sb:
        return False
    # A name holding a question's word, of which the other answer says the rest but that word only in
    # restating the question: "Mexico City" and "The capital of Mexico is City".
    for runs, other, other_core in ((ca.name_runs, sb, cb), (cb.name_runs, sa, ca)):
        if any(rest <= other and not held <= other | other_core.echoes for rest, held in runs):
            return False
    sa, sb = _same_stems(sa, sb)
    if _overlap(sa, sb, ca, cb):
        return True
    # The question's words in another form ("Indian Rupee" to "the currency of India") say nothing, unless
    # the other answer names something else in their place ("Pakistani Rupee").
    asked = {stem(w, STEM) for w in words(question)}
    ra, rb = sa - asked, sb - asked
    if (ra, rb) == (sa, sb) or not ra or not rb or (ra ^ rb) & (ca.names | cb.names):
        return False
    return _overlap(ra, rb, ca, cb)


def _overlap(sa: frozenset[str], sb: frozenset[str], ca: Core, cb: Core) -> bool:
    """Jaccard above one half, or one set inside the other with no list beside it (see `same_core`); two lists
    that each name something the other does not are two answers, however much they share."""
    if ca.lists and cb.lists and sa - sb and sb - sa:
        return False
    if len(sa & sb) / len(sa | sb) > 0.5:
        return True
    small, large = (sa, sb) if len(sa) <= len(sb) else (sb, sa)
    lister = cb if large is sb else ca
    return small <= large and not lister.lists


def _same_stems(sa: frozenset[str], sb: frozenset[str]) -> tuple[frozenset[str], frozenset[str]]:
    """Both sets with a stem cut to a shorter one of the pair it begins with ("asian" to "asia"): a
    word of four letters keeps them all, so its adjective's stem is longer."""
    short = {w for w in sa | sb if len(w) == STEM - 1}
    if not short:
        return sa, sb

    def cut(stems: frozenset[str]) -> frozenset[str]:
        return frozenset(stem(w, STEM - 1) if len(w) == STEM and stem(w, STEM - 1) in short else w for w in stems)

    return cut(sa), cut(sb)
