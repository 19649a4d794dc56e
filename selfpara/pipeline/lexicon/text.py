"""The text analysers every stage shares: words, stems, sentences, names and their aliases and acronyms,
negation, abstention, and the normalisation the equivalence functions and graders compare answers by.
Each exists once; the words they know are the lexicon's (`tables.LEXICON`)."""

from __future__ import annotations

import itertools
import re
import string
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from functools import wraps

from selfpara.pipeline.lexicon.quantities import NUMBER_WORDS
from selfpara.pipeline.lexicon.tables import LEXICON

STOPWORDS = LEXICON.word_set("common.stopwords")
MONTHS = LEXICON.word_set("common.months")
NEGATIONS = LEXICON.word_set("common.negations")
_OPENERS = LEXICON.word_set("common.sentence_openers")
_WORD = LEXICON.pattern("text.word", case=True)
_SENTENCE_BREAK = LEXICON.pattern("text.sentence_break", case=True)
_RUNS_ON = LEXICON.pattern("text.runs_on", case=True)
_INITIALS = LEXICON.pattern("text.initials", case=True)
_LIST_ITEM = LEXICON.pattern("text.list_item", case=True)
_ITEM_ENDS = LEXICON.pattern("text.item_ends", case=True)
_CLAUSE_END = LEXICON.pattern("text.clause_end")
_LAST_ITEM = LEXICON.pattern("text.last_item")
_DECLINES = LEXICON.pattern("abstention.declines")
_HEDGES = LEXICON.pattern("abstention.hedges")
_SYNONYMS = tuple(
    (re.compile(s["phrase"], 0 if s.get("case") else re.IGNORECASE), s["means"]) for s in LEXICON.raw("synonym")
)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)
_CAP = re.compile(r"[A-Z][A-Za-z'’]*")
_ACRONYM = re.compile(r"\b[A-Z]{2,5}\b")
NAME_RUN = LEXICON.pattern("text.name_run", case=True)
"""A name: capitalised words in a row, or joined by a name's particle ("Gulf of California")."""
_PARTICLES = LEXICON.word_set("common.name_particles")


def words(text: str) -> list[str]:
    """Lowercase word tokens: `[A-Za-z0-9']+`, as METHOD §2.2 defines them."""
    return [w.lower() for w in _WORD.findall(text)]


def unaccented(text: str) -> str:
    """`text` without its accents ("René" → "Rene"), which the word pattern would otherwise cut words at."""
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))


def base(word: str) -> str:
    """A word as the stems read it: lower case, without a possessive, quotes or a plural 's' ("gases" keeps
    its 'e': only the 's' goes; "glass", "virus" and "Paris" keep theirs)."""
    word = word.lower().removesuffix("'s").removesuffix("’s").strip("'’")
    plural = len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is"))
    return word[:-1] if plural else word


def stem(word: str, letters: int = 5) -> str:
    """The one stemmer: the first `letters` letters of `base(word)`. Five tell content words apart
    (transport ~ transported, gravity ~ gravitational); four match a name to its adjective (Canada ~
    Canadian) and a noun to its forms, where the reader says so."""
    return base(word)[:letters]


_VERB_ENDINGS = (("ied", ("y",)), ("ed", ("", "e")), ("ing", ("", "e")))
"""A verb's endings and what its plain form ends with in their place ("occupied" ~ "occupy", "ruled" ~ "rule")."""


def said_as(word: str, said: set[str]) -> bool:
    """Whether `word` is one of `said` (words as `base` reads them), or a form of one of its verbs ("ruled" for
    "rule", "played" for "play", "occupied" for "occupy")."""
    plain = base(word)
    if plain in said:
        return True
    return any(
        plain.endswith(ending)
        and any(len(form) >= 3 and form in said for form in (plain[: -len(ending)] + t for t in tails))
        for ending, tails in _VERB_ENDINGS
    )


def stems(text_words: Iterable[str], letters: int = 5) -> set[str]:
    """The stems of `text_words`."""
    return {stem(w, letters) for w in text_words}


def joined_lists(text: str) -> str:
    """`text` with each list written one item a line ("1. Canada", "- Mexico") joined into one sentence on the
    line that introduces it: "The countries are: Canada, Mexico, and Chile." A list is one answer; read item
    by item, each of its names would be a sentence of its own, and agree with any answer that names it."""
    lines: list[str] = []
    items: list[str] = []

    def close() -> None:
        if not items:
            return
        names = ", ".join(items[:-1]) + ("," if len(items) > 2 else "") + " and " + items[-1] if items[1:] else items[0]
        while lines and not lines[-1].strip():
            lines.pop()
        lines.append(f"{lines.pop().rstrip()} {names}." if lines else f"{names}.")
        items.clear()

    for line in text.split("\n"):
        item = _LIST_ITEM.match(line)
        if item:
            name = _ITEM_ENDS.split(item.group(1).replace("**", ""), maxsplit=1)[0].strip().rstrip(".")
            items.append(name)
        elif line.strip() or not items:
            close()
            lines.append(line)
    close()
    return "\n".join(lines)


def enumerated(text: str) -> list[str]:
    """The things the first enumeration of `text` names ("Mercury, Venus, and Mars" -> the three), without the
    words that frame it: of its first item only the name or word it ends with, of its last only the name or
    word it starts with ("The planets are Mercury, Venus, and Mars, all rocky."); [] if it enumerates nothing."""
    for clause in _CLAUSE_END.split(text):  # split, not one pattern: nested repeats backtrack for minutes
        parts = clause.split(",")
        for end in range(1, len(parts)):
            tail = _LAST_ITEM.split(parts[end], maxsplit=1)
            if len(tail) < 2:
                continue
            items = [i.split() for i in (*parts[:end], *tail) if i.strip()]
            if len(items) >= 3:
                last = list(itertools.dropwhile(lambda w: w.lower() in STOPWORDS, items[-1])) or items[-1]
                first = _name_at(items[0][::-1])[::-1]
                return [" ".join(first), *(" ".join(i) for i in items[1:-1]), " ".join(_name_at(last))]
    return []


def _name_at(tokens: list[str]) -> list[str]:
    """The name `tokens` start with (its capitalised words and particles), or else their first word."""
    name = list(itertools.takewhile(lambda w: w[:1].isupper() or w in _PARTICLES, tokens))
    return name or tokens[:1]


def sentences(text: str) -> list[str]:
    """The sentences of `text`, in order, without empty ones: the one sentence splitter (a stop after a
    name's initial or a title does not end one: "John F. Kennedy", "J. K. Rowling"; a list written one
    item a line is one sentence: see `joined_lists`)."""
    text = joined_lists(text.strip())
    found, start = [], 0
    for brk in _SENTENCE_BREAK.finditer(text):
        runs_on = _RUNS_ON.search(text[start : brk.start()]) or _INITIALS.match(text, max(brk.start() - 2, 0))
        if "\n" not in brk.group() and runs_on:
            continue
        found.append(text[start : brk.start()])
        start = brk.end()
    found.append(text[start:])
    return [s for s in found if s.strip()]


def first_sentence(text: str) -> str:
    """The first sentence of `text` (all of it when it has one)."""
    return next(iter(sentences(text)), "")


def overlap(a: str, b: str) -> float:
    """|multiset(a) ∩ multiset(b)| / min(|a|, |b|) over word tokens; 1.0 if either is empty."""
    wa, wb = words(a), words(b)
    if not wa or not wb:
        return 1.0
    shared = sum((Counter(wa) & Counter(wb)).values())
    return shared / min(len(wa), len(wb))


def word_changes(a: str, b: str) -> int:
    """Words added plus words removed between `a` and `b` (as multisets of word tokens)."""
    wa, wb = Counter(words(a)), Counter(words(b))
    return sum((wa - wb).values()) + sum((wb - wa).values())


def content_stems(text: str) -> set[str]:
    """The stems of the content words of `text`: words of 3 letters or more that are not stopwords, and numbers."""
    return {stem(w) for w in words(text) if len(w) >= 3 and w not in STOPWORDS or w.isdigit()}


def shares_content(a: str, b: str) -> bool:
    """Whether two texts share at least one content word (by stem), e.g. France ~ France's."""
    return bool(content_stems(a) & content_stems(b))


def entity_words(text: str) -> set[str]:
    """Lowercased capitalised words of `text` that look like names (not stopwords, not sentence openers)."""
    out = set()
    for m in _CAP.finditer(text):
        word = m.group().lower().removesuffix("'s").removesuffix("’s").strip("'’")
        if len(word) < 2 or word in STOPWORDS or word in _OPENERS or word in NUMBER_WORDS:
            continue
        out.add(word)
    return out


def name_survives(word: str, text_words: set[str]) -> bool:
    """Whether the name `word` (lowercased) is in `text_words`, on a 4-letter stem (Canada ~ Canadian,
    Australia ~ Australia's) or as the end of a word (entity_words reads "Phone" in "iPhone")."""
    bases = {w.removesuffix("'s").removesuffix("’s") for w in text_words}
    return any(stem(w, 4) == stem(word, 4) or w.endswith(word) for w in bases)


def _alias_groups() -> list[list[str]]:
    """The alias table's groups: a name and its aliases, as written (capitalised: a name; else a common word)."""
    return [[head, *others] for head, others in LEXICON.table("aliases").items()]


_ALIAS_GROUPS = _alias_groups()


def aliases_of(name: str) -> tuple[str, ...]:
    """The other names of what `name` (any case) names, as the alias table writes them ("earth" -> world,
    planet, globe; "french" -> france, its head)."""
    found: list[str] = []
    for group in _ALIAS_GROUPS:
        if name.lower() in (a.lower() for a in group):
            found += [a for a in group if a.lower() != name.lower() and a not in found]
    return tuple(found)


def _named_heads() -> dict[str, str]:
    """Each name of the alias table (capitalised) that its group knows by another name -> the first name of its
    groups, groups that share a name read as one ("Dutch" joins Netherlands and Holland)."""
    heads: dict[str, str] = {}
    for group in _ALIAS_GROUPS:
        named = [a for a in group if a[:1].isupper()]
        if len(named) > 1:
            head = next((heads[a] for a in named if a in heads), named[0])
            heads.update({a: head for a in named})
    return heads


_HEADS = _named_heads()
_NAMED_ALIAS = re.compile(r"\b(" + "|".join(sorted(map(re.escape, _HEADS), key=len, reverse=True)) + r")s?\b")
_NAMED_ALIAS_ANY_CASE = re.compile(_NAMED_ALIAS.pattern, re.IGNORECASE)
"""A question names them in any case: people type "the french revolution", "the us president"."""
_HEADS_ANY_CASE = {name.lower(): head for name, head in _HEADS.items()}


def as_heads(text: str, question: str) -> str:
    """`text` with each name the alias table knows by several names written by one of them ("Muslims" as Islam),
    where `question` names that thing by none: then two answers that name it two ways name it alike. Where the
    question names it ("the United Kingdom"), an answer's "British" is the question said otherwise, as it was."""
    asked = {_HEADS_ANY_CASE[m.group(1).lower()] for m in _NAMED_ALIAS_ANY_CASE.finditer(question)}
    return _NAMED_ALIAS.sub(lambda m: m.group() if _HEADS[m.group(1)] in asked else _HEADS[m.group(1)], text)


def _says(text: str, phrase: str) -> bool:
    return re.search(rf"\b{re.escape(phrase)}\b", text, re.IGNORECASE) is not None


def said_otherwise(name: str, question: str, wording: str) -> bool:
    """Whether `wording` says the question's name `name` by an alias: a name wherever it stands ("Holland"
    for "Dutch"), a common word only where the question does not use it ("on Earth" as "in the world", but
    not where the question says "planet" and the wording only drops Earth)."""
    return any(
        _says(wording, alias) and (alias[:1].isupper() or not _says(question, alias)) for alias in aliases_of(name)
    )


def with_aliases(text_words: set[str], text: str) -> set[str]:
    """`text_words` with the words of every alias of a name `text` says ("the US" adds american, united, ...)."""
    said = {name for group in _ALIAS_GROUPS for name in group if _says(text, name)}
    return text_words | {w.lower() for name in said for alias in aliases_of(name) for w in alias.split()}


def initials(text: str) -> dict[str, set[str]]:
    """The initials of each run of capitalised words in `text` -> its words: {"uk": {"united", "kingdom"}}."""
    runs: dict[str, set[str]] = {}
    for run in _named(text):
        runs.setdefault(_initials_of(run), set()).update(w.lower() for w in run.split() if w not in _PARTICLES)
    return runs


def _named(text: str) -> list[str]:
    """The names of several words `text` writes: those that have initials."""
    return [run for run in NAME_RUN.findall(text) if len([w for w in run.split() if w not in _PARTICLES]) > 1]


def acronyms(text: str, *, lower: bool = True) -> list[str]:
    """The acronyms `text` writes ("UK", "NASA"), lowercased unless `lower` is False."""
    return [a.lower() if lower else a for a in _ACRONYM.findall(text)]


def _abbreviates(letters: str, acronym: str) -> bool:
    """Whether `acronym` is `letters`, the initials of a name, give or take one letter at the end: "USA" for
    "United States", "US" for "... of America"; "USSR" is not "US"."""
    short, long = sorted((letters, acronym.lower()), key=len)
    return long.startswith(short) and len(long) - len(short) <= 1


def stands_for(acronym: str, text: str) -> bool:
    """Whether `acronym` abbreviates a name `text` writes out ("usa" in "... the United States ...")."""
    return any(_abbreviates(letters, acronym) for letters in initials(text))


def expansion(acronym: str, text: str) -> str | None:
    """The name `text` writes out that `acronym` abbreviates ("National Football League" for "NFL"), if any."""
    return next((run for run in _named(text) if _abbreviates(_initials_of(run), acronym)), None)


def _initials_of(run: str) -> str:
    return "".join(w[0] for w in run.lower().split() if w not in _PARTICLES)


def abbreviated(question: str, wording: str) -> set[str]:
    """The question's names the wording says by their acronym ("United Kingdom" as "UK", "United States"
    as "USA") or writes out from the question's acronym ("UK" as "United Kingdom")."""
    out = set()
    said = acronyms(wording)
    for letters, names in initials(question).items():
        if any(_abbreviates(letters, a) for a in said):
            out |= names
    out |= {a for a in acronyms(question) if stands_for(a, wording)}
    return out


def is_negation(word: str) -> bool:
    """Whether the (lowercased) word denies: the negation list, or an "n't" ending."""
    return word in NEGATIONS or word.endswith("n't")


def normalize_answer(text: str) -> str:
    """Lowercase, drop punctuation and articles, fold whitespace (SQuAD-style)."""
    text = text.lower().translate(_PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def contains_phrase(haystack: str, needle: str) -> bool:
    """Whether the normalised `needle` occurs in the normalised `haystack` on word boundaries."""
    h, n = normalize_answer(haystack), normalize_answer(needle)
    return bool(n) and f" {n} " in f" {h} "


def is_abstention(text: str) -> bool:
    """Whether an answer declines to answer ("I don't know", "I cannot answer", ...).

    Only the first sentence counts, and a sentence that hedges and then answers ("I'm not
    sure, but it's Lyon") is not an abstention.
    """
    first = first_sentence(text)[:200]
    return bool(_DECLINES.search(first)) and not _HEDGES.search(first) and len(words(text)) <= 40


def with_synonyms_read(text: str) -> str:
    """`text` with each phrase of the synonyms table read as the words it stands for."""
    for pattern, meaning in _SYNONYMS:
        text = pattern.sub(meaning, text)
    return text


def reads_synonyms(check: Callable[[str, str], str | None]) -> Callable[[str, str], str | None]:
    """The drift check `check` applied to the question and the paraphrase with their synonyms read."""

    @wraps(check)
    def wrapped(question: str, paraphrase: str) -> str | None:
        return check(with_synonyms_read(question), with_synonyms_read(paraphrase))

    return wrapped
