"""What a short question asks for, read without a model: its answer type, its relation words, its asks.

The drift check `asks` (selfpara.pipeline.drift) compares these between a question and a paraphrase.
Found in kept self-paraphrases of short factual questions on embedded models, where no
equivalence judge runs: "Which book did Tolstoy write called X?" for "Who wrote X?" (a
person asked for, a book answered; a name the question never gave), "the chemical name
of" for "the chemical symbol of" (another relation), "How many bones ..., and what is
their composition?" (a second question), "44 minus 48 equals?" for "What is 48 minus 44?"
(operands swapped), "the first woman to win a Nobel Prize for physics or chemistry" (a
choice the question never offered).
"""

from __future__ import annotations

import re

from selfpara.pipeline.lexicon.quantities import NUMBER_WORDS, operation_changed
from selfpara.pipeline.lexicon.tables import LEXICON
from selfpara.pipeline.lexicon.text import (
    STOPWORDS,
    acronyms,
    entity_words,
    name_survives,
    reads_synonyms,
    sentences,
    stands_for,
    stem,
    stems,
    with_aliases,
    words,
)

SHORT_QUESTION_WORDS = 30
"""Questions up to this many words are checked; a word problem's question is its last sentence
among facts, which this reading does not parse (the other drift checks cover its facts)."""

_WH = LEXICON.word_set("common.wh_words")
_AUX = LEXICON.word_set("common.auxiliaries")
_HOW_QUANTITY = LEXICON.word_set("asks.how_quantity")
_KINDS = {kind: LEXICON.word_set(f"asks.{kind}_nouns") for kind in ("person", "time", "place", "quantity")}
"""Nouns that say which kind of answer a "what/which ..." question wants, by kind (the first that names one decides)."""
_PERSON_WH = LEXICON.word_set("asks.person_wh")
_ARTICLES = LEXICON.word_set("asks.articles")
_HEAD_FILLERS = LEXICON.word_set("asks.head_fillers")
_RANKS = LEXICON.word_set("asks.rank_words")
_CONTRACTED: dict[str, str] = LEXICON.table("asks.contractions")
_ASKED = LEXICON.pattern("asks.asked")
_SUBORDINATE = LEXICON.pattern("asks.subordinate")
_ASKED_AFTER_COMMA = LEXICON.pattern("asks.asked_after_comma")
_HOW_MANY = LEXICON.pattern("asks.how_many")
_ORDINAL_DIGITS = LEXICON.pattern("asks.ordinal_digits")
_CONJOINED_ASK = LEXICON.pattern("asks.conjoined")
_ALTERNATIVES = LEXICON.pattern("asks.choice")
_OR = LEXICON.pattern("asks.or")
_PLACE_SIZES = {word: size for size, ws in LEXICON.table("asks.place_sizes").items() for word in ws.split()}
"""Places of different sizes: "In which country is Norway located?" does not ask "On which continent"."""
_RELATION_GROUPS = {name: frozenset(ws.split()) for name, ws in LEXICON.table("asks.relations").items()}
_RELATION_PHRASES = {
    name: LEXICON.pattern(f"asks.relation_phrases.{name}") for name in LEXICON.table("asks.relation_phrases")
}


# "What is the boiling point" asks what "at what temperature" asks: a thing, a quantity and a
# manner are told apart too unreliably here to reject on.
_LOOSE_KINDS = frozenset({"thing", "quantity", "manner"})


def answer_type(text: str) -> tuple[str, frozenset[str]] | None:
    """(kind, head words) of what the first question of `text` asks for, or None when unclear.

    kind is person, time, place, reason, manner, quantity or thing; head words are the
    words naming what is asked for after "what/which" ("which book" -> thing, {book}).
    "Who" is a person, "in what year" a time, "how many" and "the total number of" a
    quantity. An instruction ("Convert 6 km to metres") or an arithmetic "What is 12
    times 12?" has no head noun: None.
    """
    m = _ASKED.search(text)
    if m is None or _SUBORDINATE.match(text, m.start(1)):
        # "When skin is exposed to sunlight, which vitamin ...?": the question is after the comma.
        m = _ASKED_AFTER_COMMA.search(text) or m
    if m is None:
        return None
    wh, rest = m.group(1).lower(), words(text[m.end(1) :])
    if rest and rest[0] in _CONTRACTED:  # "What's the capital" reads as "What is the capital"
        rest[0] = _CONTRACTED[rest[0]]
    if wh in _PERSON_WH:
        return "person", frozenset()
    if wh in ("when", "where", "why"):
        return {"when": "time", "where": "place", "why": "reason"}[wh], frozenset()
    if wh == "how":
        if rest and rest[0] in _HOW_QUANTITY:
            return "quantity", frozenset()
        return "manner", frozenset()
    return _head_type(rest)


def _head_type(rest: list[str]) -> tuple[str, frozenset[str]] | None:
    """The kind asked for by the words after "what"/"which": "book did ..." or "is the name of the leader ..."."""
    j = 0
    if rest and rest[0] in _AUX:  # "what is the capital": the head comes after an article
        j = 1
        if len(rest) < 2 or rest[1] not in _ARTICLES:
            return None
    head: list[str] = []
    for w in rest[j:]:
        if w in _ARTICLES and not head:
            continue
        if w in _HEAD_FILLERS and not head:
            continue  # "the name of the X" asks for X
        if w == "of" and not head:
            continue
        if w.endswith(("'s", "’s")) and not head:
            continue  # "the world's smallest country", "Kennedy's daughter": the owner is not what is asked for
        if w in STOPWORDS or w in _AUX or w in _WH:
            break
        if w in NUMBER_WORDS or w[:1].isdigit() or _is_qualifier_like(w):
            if head and _is_rank(w):
                head = []  # "the world 2nd smallest country": what came before the rank was the owner
            elif head:
                break
            continue  # "which two latitudes", "the 2nd person", "the largest ocean"
        head.append(w)
        if len(head) == 3:
            break
    if not head:
        return None
    # The first word that names a kind decides: "which year saw King John ..." asks for a year.
    for w in head:
        for kind, nouns in _KINDS.items():
            if w in nouns or w.rstrip("s") in nouns:
                return kind, frozenset(head)
    return "thing", frozenset(head)


def _is_rank(word: str) -> bool:
    """An ordinal in digits ("2nd"): it ranks the head noun that follows it. (Read as a superlative,
    "northwest" would end "the country northwest of Chile"'s head.)"""
    return _ORDINAL_DIGITS.fullmatch(word) is not None


def _is_qualifier_like(word: str) -> bool:
    # Superlatives and ranks are read by the qualifiers check; here they only precede the head.
    return word.endswith("est") and len(word) > 4 or word in _RANKS


def _mentions(heads: frozenset[str], text_words: set[str]) -> bool:
    said = stems(text_words, 4)
    return any(stem(h, 4) in said for h in heads)


def _place_size(heads: frozenset[str]) -> str | None:
    return next((_PLACE_SIZES[h] for h in sorted(heads) if h in _PLACE_SIZES), None)


def _counted(text: str) -> str | None:
    """What `text` asks the number of ("How many colours ..." -> colours), or None."""
    m = _HOW_MANY.search(text)
    return m.group(1).lower() if m else None


def _count_or_list(question: str, paraphrase: str, q_heads: frozenset[str], p_heads: frozenset[str]) -> str | None:
    """One of the two asks how many X there are, the other which X they are ("How many colours are in
    a rainbow?", "Which colours are in a rainbow?"): a number and a list, never the same answer."""
    q_counted, p_counted = _counted(question), _counted(paraphrase)
    if q_counted and not p_counted and _mentions(frozenset({q_counted}), set(p_heads)):
        return f"asks which {q_counted}, not how many"
    if p_counted and not q_counted and _mentions(frozenset({p_counted}), set(q_heads)):
        return f"asks how many {p_counted}, not which"
    return None


# Relations a paraphrase must not add: they ask what a word or a symbol means, not what it names
# ("What does the chemical symbol for gold stand for?" for "Which chemical symbol stands for gold?").
# Other relations are added freely by faithful rewordings ("How long is 7 feet in inches?").
_ASKED_ABOUT = frozenset({"abbreviation", "meaning"})


def relations(text: str) -> set[str]:
    """The relation groups `text` names ("author" for "wrote" or "written by", "symbol", "height" for "tall")."""
    ws = set(words(text))
    found = {name for name, forms in _RELATION_GROUPS.items() if ws & forms}
    return found | {name for name, phrase in _RELATION_PHRASES.items() if phrase.search(text)}


def asks(text: str) -> int:
    """How many questions `text` asks: question sentences opening with a wh-word or an auxiliary,
    plus wh-clauses joined on ("..., and what is their composition?")."""
    count = len(_CONJOINED_ASK.findall(text))
    for s in sentences(text):
        ws = words(s)
        if s.strip().endswith("?") and ws and (ws[0] in _WH or ws[0] in _AUX):
            count += 1
    return count


def new_names(question: str, paraphrase: str) -> list[str]:
    """Capitalised words inside `paraphrase`'s sentences that name something `question` does not
    mention (matched on a 4-letter stem, in any case: "the Earth" for "earth" is no new name; an
    acronym of the question's names, "USA" for "United States", neither). A sentence's first word
    may be any word ("However, ..."), so it is not read."""
    q_words = with_aliases(set(words(question)), question)
    inner = re.sub(r"(?:^|(?<=[.?!:;]))\s*[\"'“]?[A-Za-z'’]+", " ", paraphrase)
    # A capitalised word next to a name of the question extends that name ("RMS Titanic", "Ottoman Turks").
    extended = {
        w.lower()
        for a, b in re.findall(r"\b([A-Z][\w'’]*)\s+(?=([A-Z][\w'’]*))", inner)
        for w, other in ((a, b), (b, a))
        if name_survives(other.lower().removesuffix("'s"), q_words)
    }
    return sorted(
        w
        for w in entity_words(inner)
        if not name_survives(w, q_words)
        and w not in extended
        and not (w.upper() in acronyms(inner, lower=False) and stands_for(w, question))
    )


def alternatives_added(question: str, paraphrase: str) -> str | None:
    """The paraphrase narrows the question to a choice it never offered: "a Nobel Prize" asked as "the
    Nobel Prize in science or literature" ("X or Y" with neither word in the question, which has no "or")."""
    if _OR.search(question):
        return None
    asked = stems(words(question), 4)
    for a, b in _ALTERNATIVES.findall(paraphrase):
        a, b = a.lower(), b.lower()
        if a not in STOPWORDS and b not in STOPWORDS and stem(a, 4) not in asked and stem(b, 4) not in asked:
            return f"added {a} or {b}"
    return None


@reads_synonyms
def asks_changed(question: str, paraphrase: str) -> str | None:
    """A short question's paraphrase asks for something else: another kind of answer ("who" ->
    "which book"), a place of another size ("which country" for "which continent"), a list for a
    number ("which colours" for "how many colours"), another arithmetic operation or its operands
    swapped (selfpara.pipeline.lexicon.quantities), a dropped relation ("symbol"), a new name, a choice
    added ("in science or literature") or an added question. Both are read with their faithful
    synonyms (`selfpara.pipeline.lexicon`, en/synonyms.toml: "seat of government" is "capital"). Questions over
    SHORT_QUESTION_WORDS words are not read (None)."""
    if len(question.split()) > SHORT_QUESTION_WORDS:
        return None
    q_type, p_type = answer_type(question), answer_type(paraphrase)
    if q_type is not None and p_type is not None:
        (qk, qh), (pk, ph) = q_type, p_type
        if qk != pk and not {qk, pk} <= _LOOSE_KINDS:
            return f"asks for a {pk} ({', '.join(sorted(ph)) or '-'}), not a {qk}"
        q_size, p_size = _place_size(qh), _place_size(ph)
        if q_size and p_size and q_size != p_size:
            return f"asks for a {p_size}, not a {q_size}"
        if counted := _count_or_list(question, paraphrase, qh, ph):
            return counted
        if qk == "thing" and not _mentions(ph, set(words(question))) and not _mentions(qh, set(words(paraphrase))):
            return f"asks for {' '.join(sorted(ph))}, not {' '.join(sorted(qh))}"
    if changed := operation_changed(question, paraphrase):
        return changed
    # A word problem's facts are read by the other checks; "how much money" there is no relation.
    single = len(sentences(question)) == 1
    dropped = relations(question) - relations(paraphrase) if single else set()
    if dropped:
        return f"dropped relation {', '.join(sorted(dropped))}"
    # "What does the chemical symbol for gold stand for?" asks the symbol's meaning, not the symbol.
    added_relation = relations(paraphrase) & _ASKED_ABOUT - relations(question) if single else set()
    if added_relation:
        return f"added relation {', '.join(sorted(added_relation))}"
    added = new_names(question, paraphrase)
    if added:
        return f"added name {', '.join(added)}"
    if choice := alternatives_added(question, paraphrase):
        return choice
    if asks(paraphrase) > max(1, asks(question)):
        return "added a question"
    return None
