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

from selfpara.pipeline.drift.operations import operation_changed
from selfpara.pipeline.drift.synonyms import reads_renamed
from selfpara.util.quantities import NUMBER_WORDS
from selfpara.util.text import STOPWORDS, entity_words, name_survives, words

SHORT_QUESTION_WORDS = 30
"""Questions up to this many words are checked; a word problem's question is its last sentence
among facts, which this reading does not parse (the other drift checks cover its facts)."""

_WH = frozenset("what which who whom whose when where why how".split())
_AUX = frozenset("is are was were be been do does did has have had can could will would should shall may might".split())
_HOW_QUANTITY = frozenset("many much far long old tall big high deep wide heavy fast often large small".split())

# Nouns that say which kind of answer a "what/which ..." question wants.
_PERSON = frozenset(
    """person people man woman men women individual leader president king queen emperor author writer poet
    scientist inventor founder actor actress player artist painter composer singer explorer ruler monarch
    minister politician recipient winner someone figure character"""
    " mathematician physicist chemist philosopher astronaut general director"
    " novelist playwright sculptor architect filmmaker discoverer".split()
)
_TIME = frozenset("year years date day month century decade era time period".split())
_PLACE = frozenset("city cities country countries town place location continent state nation region capital".split())
_QUANTITY = frozenset(
    """number numbers total amount count quantity sum distance length height weight price cost percentage
    percent temperature speed area volume value difference product quotient result size"""
    " age duration".split()
)
_PERSON_WH = frozenset({"who", "whom", "whose"})
_CONTRACTED = {"'s": "is", "s": "is", "'re": "are", "re": "are"}  # "s" after a curly apostrophe
_WH_RE = r"(what|which|who|whom|whose|when|where|why|how)\b"
_LEAD = r"(?:(?:in|at|on|for|by|from|to|of|with|between|during|since|under|after|before|and|so)\s+)*"
# The wh-word that opens a sentence ("In what year ...", "Can you tell me how many ..."), else one
# that opens a clause of a question after a comma ("As a teen, what job ...?"); never a relative
# "..., which is the standard deck."
_ASKED = re.compile(r"(?:^|[.?!:;]\s+|\b(?:me|us|know)\s+)" + _LEAD + _WH_RE, re.I)
_SUBORDINATE = re.compile(r"(?:when|where|how)\b[^,?]*,", re.I)
_ASKED_AFTER_COMMA = re.compile(r",\s+" + _LEAD + _WH_RE + r"[^.?!]*\?", re.I)


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
        if len(rest) < 2 or rest[1] not in ("the", "a", "an"):
            return None
    head: list[str] = []
    for w in rest[j:]:
        if w in ("the", "a", "an") and not head:
            continue
        if w in ("name", "names", "kind", "type", "sort") and not head:
            continue  # "the name of the X" asks for X
        if w == "of" and not head:
            continue
        if w in STOPWORDS or w in _AUX or w in _WH:
            break
        if w in NUMBER_WORDS or w.isdigit() or _is_qualifier_like(w):
            if head:
                break
            continue  # "which two latitudes", "the first person", "the largest ocean"
        head.append(w)
        if len(head) == 3:
            break
    if not head:
        return None
    # The first word that names a kind decides: "which year saw King John ..." asks for a year.
    for w in head:
        for kind, nouns in (("person", _PERSON), ("time", _TIME), ("place", _PLACE), ("quantity", _QUANTITY)):
            if w in nouns or w.rstrip("s") in nouns:
                return kind, frozenset(head)
    return "thing", frozenset(head)


def _is_qualifier_like(word: str) -> bool:
    # Superlatives and ranks are read by the qualifiers check; here they only precede the head.
    return word.endswith("est") and len(word) > 4 or word in ("most", "least", "main", "major", "only")


def _mentions(heads: frozenset[str], text_words: set[str]) -> bool:
    stems = {w[:4] for w in text_words}
    return any(h[:4] in stems for h in heads)


# Places of different sizes: "In which country is Norway located?" does not ask "On which continent".
_PLACE_SIZES = {
    **dict.fromkeys("city cities town towns village villages".split(), "city"),
    **dict.fromkeys("country countries nation nations".split(), "country"),
    **dict.fromkeys("continent continents".split(), "continent"),
}


def _place_size(heads: frozenset[str]) -> str | None:
    return next((_PLACE_SIZES[h] for h in sorted(heads) if h in _PLACE_SIZES), None)


_HOW_MANY = re.compile(r"\bhow many ([a-z]+)", re.I)


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


# Relation words: what is asked *about* a thing. A paraphrase may say it otherwise (written ~
# author) but must not drop it: "the chemical name of gold" does not ask for its symbol.
_RELATION_GROUPS: dict[str, frozenset[str]] = {
    "symbol": frozenset("symbol symbols".split()),
    "formula": frozenset("formula formulas".split()),
    "abbreviation": frozenset("abbreviation abbreviations acronym abbreviated".split()),
    "population": frozenset("population populations inhabitants people".split()),
    "height": frozenset("height tall high elevation altitude".split()),
    "length": frozenset("length long".split()),
    "weight": frozenset("weight weigh weighs heavy mass".split()),
    "speed": frozenset("speed fast velocity".split()),
    "depth": frozenset("depth deep".split()),
    "temperature": frozenset("temperature degrees hot cold".split()),
    "price": frozenset("price prices cost costs priced expensive".split()),
    "author": frozenset("author authors wrote writer authored penned poet novelist playwright".split()),
    "inventor": frozenset("inventor invented invent invents invention inventing".split()),
    "founder": frozenset("founder founded founders establish established".split()),
    "discoverer": frozenset("discoverer discovered discover discovery".split()),
    "composer": frozenset("composer composed compose".split()),
    "painter": frozenset("painter painted paint painting".split()),
    "currency": frozenset("currency currencies money".split()),
    "language": frozenset("language languages speak spoken speaks".split()),
    "color": frozenset("color colour colors colours".split()),
    "meaning": frozenset("meaning mean means definition define signify signifies".split()),
    "birth": frozenset("born birth birthplace".split()),
    "death": frozenset("died die death dies".split()),
    "nickname": frozenset("nickname nicknamed".split()),
    "plural": frozenset("plural".split()),
    "opposite": frozenset("opposite antonym".split()),
    "synonym": frozenset("synonym synonyms".split()),
    "anthem": frozenset("anthem".split()),
    "motto": frozenset("motto".split()),
    "flag": frozenset("flag flags".split()),
}


# Relations named only by a phrase: "written" is authorship in "written by", not in "Gold is written
# with which symbol?" (nor "written as", "written in"); "stand for" asks an abbreviation's meaning in
# "What does NASA stand for?", not in "Which symbol stands for gold?" (both found on real paraphrases
# of the held-out natural run, docs/guards.md).
_RELATION_PHRASES: dict[str, re.Pattern[str]] = {
    "author": re.compile(r"\b(?:write|writes|written)\b(?!\s+(?:with|as|in|using|on|down|out)\b)", re.I),
    "abbreviation": re.compile(r"\b(?:does|do|did)\b[^?.]*\bstand for\b", re.I),
    # "the element with 74 protons" is "the element with atomic number 74"; its atomic weight is not.
    "atomic number": re.compile(r"\batomic numbers?\b|\bprotons?\b", re.I),
}


# Relations a paraphrase must not add: they ask what a word or a symbol means, not what it names
# ("What does the chemical symbol for gold stand for?" for "Which chemical symbol stands for gold?").
# Other relations are added freely by faithful rewordings ("How long is 7 feet in inches?").
_ASKED_ABOUT = frozenset({"abbreviation", "meaning"})


def relations(text: str) -> set[str]:
    """The relation groups `text` names ("author" for "wrote" or "written by", "symbol", "height" for "tall")."""
    ws = set(words(text))
    found = {name for name, forms in _RELATION_GROUPS.items() if ws & forms}
    return found | {name for name, phrase in _RELATION_PHRASES.items() if phrase.search(text)}


_CONJOINED_ASK = re.compile(
    r"(?:;|\band\b|\bor\b)\s+(?:also\s+)?(?:what|how|which|who|whom|whose|where|when|why)\b", re.I
)
_SENTENCE = re.compile(r"[^.?!]+[.?!]?")


def asks(text: str) -> int:
    """How many questions `text` asks: question sentences opening with a wh-word or an auxiliary,
    plus wh-clauses joined on ("..., and what is their composition?")."""
    count = len(_CONJOINED_ASK.findall(text))
    for s in _SENTENCE.findall(text):
        ws = words(s)
        if s.strip().endswith("?") and ws and (ws[0] in _WH or ws[0] in _AUX):
            count += 1
    return count


# Names said otherwise without naming anything new: "in the world" is "on Earth", the
# "solar system" is the Sun's, "the US" is "American".
_NAME_ALIASES = (
    frozenset("earth world planet globe".split()),
    frozenset("sun solar".split()),
    frozenset("american america united states us usa".split()),
    frozenset("british britain united kingdom uk".split()),
)


def new_names(question: str, paraphrase: str) -> list[str]:
    """Capitalised words inside `paraphrase`'s sentences that name something `question` does not
    mention (matched on a 4-letter stem, in any case: "the Earth" for "earth" is no new name; an
    acronym of the question's names, "USA" for "United States", neither). A sentence's first word
    may be any word ("However, ..."), so it is not read."""
    q_words = set(words(question))
    q_words |= {alias for group in _NAME_ALIASES if group & q_words for alias in group}
    initials = "".join(w[0] for w in re.findall(r"\b[A-Z][a-z]+", question)).lower()
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
        and not (len(w) <= 4 and w.upper() in inner and w[:2] in initials)
    )


_ALTERNATIVES = re.compile(r"\b([a-z]+),? or ([a-z]+)\b", re.I)


def alternatives_added(question: str, paraphrase: str) -> str | None:
    """The paraphrase narrows the question to a choice it never offered: "a Nobel Prize" asked as "the
    Nobel Prize in science or literature" ("X or Y" with neither word in the question, which has no "or")."""
    if re.search(r"\bor\b", question, re.I):
        return None
    stems = {w[:4] for w in words(question)}
    for a, b in _ALTERNATIVES.findall(paraphrase):
        a, b = a.lower(), b.lower()
        if a not in STOPWORDS and b not in STOPWORDS and a[:4] not in stems and b[:4] not in stems:
            return f"added {a} or {b}"
    return None


@reads_renamed
def asks_changed(question: str, paraphrase: str) -> str | None:
    """A short question's paraphrase asks for something else: another kind of answer ("who" ->
    "which book"), a place of another size ("which country" for "which continent"), a list for a
    number ("which colours" for "how many colours"), another arithmetic operation or its operands
    swapped (selfpara.pipeline.drift.operations), a dropped relation ("symbol"), a new name, a choice
    added ("in science or literature") or an added question. Both are read with their faithful
    renamings (selfpara.pipeline.drift.synonyms: "seat of government" is "capital"). Questions over
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
    single = len([s for s in _SENTENCE.findall(question) if s.strip()]) == 1
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
