"""Rewordings of a word problem that keep its meaning by construction, made without a model (issue 21).

Three edits, combined into candidates that go through the same filter as the model's
paraphrases (`fill_with_rewrites`):

- `numbers`: digits written as words ("16 eggs" -> "sixteen eggs", "20%" -> "twenty
  percent", "$2" -> "two dollars"), or number words as digits when there are no digits to
  write out; every value is kept (selfpara.quantities reads both the same).
- `names`: every person's name replaced, at every occurrence, by a name the problem does
  not use ("Janet's ducks" -> "Alex's ducks"). Only names that act as people are renamed.
- `reorder`: the problem's independent facts in another order, the question kept last. A
  sentence that refers back ("She sells the rest", "The shirts cost ...") stays after what it
  refers to.

A renamed candidate is drift-checked against the question renamed the same way: the rename
itself is consistent by construction, and the checks verify that nothing else changed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from selfpara.paraphrase import LexicalFilter, drift_rejection
from selfpara.quantities import NUMBER_WORDS, TENS_WORDS, UNIT_WORDS, numbers
from selfpara.result import RejectedParaphrase
from selfpara.text import STARTERS, STOPWORDS, entity_words, words

REWRITE_KINDS = ("reorder", "numbers", "names")
"""The edits `WrapConfig.rewrites` may name."""

MAX_REWRITES = 12
"""Rewrites tried at most per question (the filter keeps those it needs)."""


@dataclass(frozen=True)
class Rewrite:
    """A rewording made by construction.

    Attributes:
        text: the rewording.
        kinds: the edits it combines, joined by "+" ("names+numbers").
        reference: the question with the same renames and nothing else, which the drift checks
            compare it with (the question itself when no one was renamed).
    """

    text: str
    kinds: str
    reference: str


# --- sentences -------------------------------------------------------------------------------

_ABBREVIATIONS = ("Mr", "Mrs", "Ms", "Dr", "St", "Jr", "Sr", "vs", "etc", "a.m", "p.m")
_BOUNDARY = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9$\"'“])")


def sentence_starts(text: str) -> list[int]:
    """Offsets where the sentences of `text` begin (not after "Mr.", "Dr.", an initial or inside "$19.50")."""
    starts = [len(text) - len(text.lstrip())]
    for m in _BOUNDARY.finditer(text):
        last = re.split(r"\s", text[starts[-1] : m.start()].rstrip(".!?"))[-1]
        if last not in _ABBREVIATIONS and not re.fullmatch(r"[A-Z]", last):
            starts.append(m.end())
    return starts


def sentences(text: str) -> list[str]:
    """`text` split into sentences (see `sentence_starts`)."""
    starts = sentence_starts(text)
    return [s for a, b in zip(starts, [*starts[1:], len(text)], strict=True) if (s := text[a:b].strip())]


# --- numbers ---------------------------------------------------------------------------------

_UNITS = {v: k for k, v in UNIT_WORDS.items()}
_TENS = {v: k for k, v in TENS_WORDS.items()}


def number_words(n: int) -> str:
    """`n` (0 <= n < 1,000,000) in words: 21 -> "twenty-one", 306 -> "three hundred six"."""
    if n < 20:
        return _UNITS[n]
    if n < 100:
        tens, unit = divmod(n, 10)
        return _TENS[tens * 10] + (f"-{_UNITS[unit]}" if unit else "")
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        return f"{_UNITS[hundreds]} hundred" + (f" {number_words(rest)}" if rest else "")
    thousands, rest = divmod(n, 1000)
    return f"{number_words(thousands)} thousand" + (f" {number_words(rest)}" if rest else "")


# A whole number standing alone: not glued to letters (H2O, 5km, 30mph), not part of a decimal,
# a fraction, a time or a range ("1.5", "2/5", "1:00", "3-4").
_DIGITS = re.compile(r"(?<![\w.,/:$-])(\$?)(\d{1,3}(?:,\d{3})+|\d+)(?![\w/:]|[.,]\d)(\s*%)?")


def digits_to_words(text: str, every_other: bool = False) -> str:
    """Whole numbers 2..999,999 of `text` written as words ("$2" -> "two dollars", "20%" -> "twenty
    percent"); 0, 1 and larger numbers are left as they are (a lone "one" reads as a pronoun). With
    `every_other`, only the 1st, 3rd, ... of the numbers it would write out."""
    seen = 0

    def spell(m: re.Match[str]) -> str:
        nonlocal seen
        dollar, digits, pct = m.group(1), m.group(2), m.group(3)
        n = int(digits.replace(",", ""))
        if not 2 <= n < 1_000_000 or _next_to_number(text, m):
            return m.group()
        seen += 1
        if every_other and seen % 2 == 0:
            return m.group()
        said = number_words(n)
        if m.start() == 0 or re.search(r"[.!?]\s+$", text[: m.start()]):
            said = said.capitalize()  # "48 people are ..." -> "Forty-eight people are ..."
        if dollar:
            return f"{said} dollars" + (" percent" if pct else "")
        return said + (" percent" if pct else "")

    return _DIGITS.sub(spell, text)


def _next_to_number(text: str, m: re.Match[str]) -> bool:
    """Whether the word before or after `m` (past punctuation and "and") states a number: number
    words are read across commas and full stops, so "ten 2 x 4", "89, 71" or "1 new one. 5 people"
    spelled out would read as one number ("ten two" is twelve)."""
    before = re.search(r"([A-Za-z\d]+)(?:\W|\band\b)*$", text[: m.start()])
    after = re.match(r"(?:\W|\band\b)*([A-Za-z\d]+)", text[m.end() :])
    return any(w and (w.group(1).lower() in NUMBER_WORDS or w.group(1).isdigit()) for w in (before, after))


_SPELLED_WORDS = "|".join(sorted({*UNIT_WORDS, *TENS_WORDS, "hundred", "thousand"}, key=len, reverse=True))
_SPELLED = re.compile(
    rf"\b(?:{_SPELLED_WORDS})(?:(?:[\s-]+|\s+and\s+)(?:{_SPELLED_WORDS}))*\b(?!-)",
    re.I,
)


def words_to_digits(text: str, every_other: bool = False) -> str:
    """Number words of `text` written as digits ("Nine of the kids" -> "9 of the kids", "twenty-one"
    -> "21"); "one" alone is left (it is often a pronoun), so are ordinals, "half" and "twice". With
    `every_other`, only the 1st, 3rd, ... of the numbers it would write as digits."""
    seen = 0

    def digit(m: re.Match[str]) -> str:
        nonlocal seen
        values = numbers(m.group())
        if len(values) != 1 or m.group().lower() == "one" or values[0].denominator != 1:
            return m.group()
        seen += 1
        return m.group() if every_other and seen % 2 == 0 else str(values[0])

    return _SPELLED.sub(digit, text)


# --- names -----------------------------------------------------------------------------------

# Gender-neutral names, so that "she" and "his" still read naturally after a rename.
REPLACEMENT_NAMES = ("Alex", "Jordan", "Taylor", "Casey", "Riley", "Morgan", "Jamie", "Robin", "Quinn", "Avery")
_NOT_NAMES = frozenset(
    """january february march april may june july august september october november december monday tuesday
    wednesday thursday friday saturday sunday christmas easter halloween thanksgiving valentine
    last next today yesterday tomorrow normally usually recently finally first second then after before
    later once since because although however meanwhile overall currently initially altogether together
    unfortunately also still several both half most many some one two three mr mrs ms dr dad mom mum
    grandma grandpa granny uncle aunt mother father sister brother""".split()
)
_PERSON_PRONOUNS = frozenset("he she him her his hers himself herself".split())
_KIN = frozenset(
    """son sons daughter daughters brother brothers sister sisters mother father mom mum dad wife husband
    friend friends cousin cousins aunt uncle grandma grandpa grandmother grandfather neighbor neighbour
    classmate classmates teacher parents kids children family boyfriend girlfriend""".split()
)
_NOT_AFTER_NAME = frozenset("the a an of in on at to for by with from he she it they we you i".split())
# What people do in word problems: "Marie ordered", "Kyle bought" (a city "has" sheep too).
_HUMAN_VERBS = "|".join(
    """buys bought buy pays paid orders ordered wants wanted decides decided earns earned works worked spends
    spent saves saved sells sold reads eats ate walks walked runs ran drives drove makes made gets got goes went
    needs needed plans planned likes loves gives gave takes took collects collected receives received""".split()
)
_NAME = re.compile(r"\b([A-Z][a-z]+)(['’]s)?\b")


def people(text: str) -> list[str]:
    """The names `text` uses for people, in order of appearance.

    A capitalised word counts when it is used as a person's name: it takes a possessive
    ("Janet's"), is joined by "and" to another name, or opens a sentence followed by a verb,
    and the problem speaks of people (a "he"/"she" pronoun, a relative such as "son" or
    "friend", or the name doing what people do: "Marie ordered"). Words also written in
    lowercase, months, weekdays, sentence openers and words inside a multi-word name ("San
    Rafael") do not count.
    """
    ws = set(words(text))
    if ws & {"name", "names", "letter", "letters", "spell", "spelled"}:
        return []  # "Indras has 6 letters in her name": the name is part of the problem
    lower = set(re.findall(r"\b[a-z][a-z']*\b", text))
    starts = sentence_starts(text)
    candidates = entity_words(text)
    found: list[str] = []
    acting = False
    for m in _NAME.finditer(text):
        name, key = m.group(1), m.group(1).lower()
        if key in found or key not in candidates or _not_a_name(key) or key in lower or _in_multiword(text, m):
            continue
        after = text[m.end() :].lstrip()
        next_word = (re.match(r"[A-Za-z]+", after) or [""])[0]
        if any(w != key and (w.startswith(key) or key.startswith(w)) for w in candidates if len(w) > 2):
            continue  # "Jeans makeup artist ... gives Jean": which is the person's name is unclear
        again = len(re.findall(rf"\b{name}\b", text)) > 1
        # Doing what people do counts for a name met twice: "Termites ate 30%" is no one.
        does = again and bool(re.search(rf"\b{name}\s+(?:{_HUMAN_VERBS})\b", text))
        # A sentence's first word before a verb is a name only if it recurs or opens the problem:
        # "Ants carried off a fry" is no one.
        opens = m.start() in starts and next_word.islower() and next_word not in _NOT_AFTER_NAME
        opens = opens and (again or m.start() == starts[0])
        single = r"[A-Z][a-z]+(?![\w'’]*\s+[A-Z])"  # not the first of a multi-word name ("Disney Plus")
        joined = bool(re.match(rf"and\s+{single}", after)) or bool(
            re.search(rf"(?<![A-Z][a-z]\s)\b[A-Z][a-z]+\s+and\s+{name}\b", text)
        )
        if m.group(2) or opens or joined:
            found.append(key)
            acting = acting or does or joined
    if not (ws & (_PERSON_PRONOUNS | _KIN) or acting):
        return []
    return [next(m.group(1) for m in _NAME.finditer(text) if m.group(1).lower() == k) for k in found]


def _not_a_name(word: str) -> bool:
    """Months, weekdays (also "Tuesdays"), openers, and words shaped like adverbs or participles."""
    return word in _NOT_NAMES or word.removesuffix("s") in _NOT_NAMES or word.endswith(("ing", "ly"))


def _in_multiword(text: str, m: re.Match[str]) -> bool:
    """Whether the capitalised word at `m` is next to another one inside a sentence ("San Rafael", "Farmers Market")."""
    before = text[: m.start()]
    prev = re.search(r"([A-Z][a-z]+)\s+$", before)
    prev_is_title = prev is not None and prev.group(1) in ("Mr", "Mrs", "Ms", "Dr")
    # A capitalised word before it counts unless it only opens the sentence ("Then Carla"), but
    # "Furniture United's offer" is one name.
    opener = prev is not None and prev.group(1).lower() in STARTERS | STOPWORDS
    if prev and not prev_is_title and not opener:
        return True
    return bool(re.match(r"(['’]s)?\s+[A-Z][a-z]+", text[m.end() :])) and not re.match(
        r"(['’]s)?\s+(?:and|And)\b", text[m.end() :]
    )


def rename(text: str, mapping: dict[str, str]) -> str:
    """`text` with every whole-word occurrence of each name of `mapping` replaced (possessives kept)."""
    if not mapping:
        return text
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in mapping) + r")\b")
    return pattern.sub(lambda m: mapping[m.group(1)], text)


def renames(text: str, offset: int = 0) -> dict[str, str]:
    """A rename of every person of `text` to an unused name of REPLACEMENT_NAMES, starting at `offset`."""
    taken = set(words(text))
    pool = [n for n in REPLACEMENT_NAMES[offset:] + REPLACEMENT_NAMES[:offset] if n.lower() not in taken]
    return dict(zip(people(text), pool, strict=False))


# --- reorder ---------------------------------------------------------------------------------

_BACK_REFERENCES = frozenset(
    """he she him her his hers they them their theirs it its itself himself herself themselves this that
    these those more less fewer than remaining remainder rest left total then after afterwards later next
    also too again other another same both still now instead already finally final last eventually
    meanwhile previous earlier before twice half double triple times such either neither unfortunately
    fortunately luckily however but so therefore thus hence besides moreover furthermore otherwise
    suddenly""".split()
)
_DETERMINERS = frozenset("the each every all these those this that its their".split())


def _depends_on(sentence: str, earlier: list[str], pronoun_target: int | None) -> int | None:
    """The first earlier sentence (index) that `sentence` may depend on, or None (it stands alone).

    A pronoun, a relational word ("more", "the rest", "twice") or a connective ("Then",
    "Unfortunately") may point anywhere before: 0; a personal pronoun points at
    `pronoun_target` where one is given (the sentence opening the group of the problem's one
    person). "The X" or "each X" for an X already mentioned depends on where X was first
    mentioned.
    """
    ws = words(sentence)
    if ws and ws[0] in ("and", "or", "but", "yet", "nor", "so"):
        return 0  # "Or you can buy a ticket for $12": the other choice comes first
    marks = set(ws) & _BACK_REFERENCES
    deps: list[int] = []
    if marks:
        if pronoun_target is None or not marks <= _PERSON_PRONOUNS:
            return 0
        deps.append(pronoun_target)
    firsts: dict[str, int] = {}
    for n, s in enumerate(earlier):
        for w in words(s):
            if w not in STOPWORDS:
                firsts.setdefault(_stem(w), n)
    deps += [firsts[_stem(b)] for a, *after in _windows(ws) if a in _DETERMINERS for b in after if _stem(b) in firsts]
    if ws and ws[0] == "the" and earlier:
        deps.append(len(earlier) - 1)  # "The walls are 1 inch thick": the walls of what came before
    return min(deps) if deps else None


def _stem(word: str) -> str:
    """A crude stem that holds a plural to its singular: "boxes" and "box" are "box"."""
    word = word.removesuffix("'s").removesuffix("’s")
    if len(word) > 4 and word.endswith("es"):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s"):
        word = word[:-1]
    return word[:4]


def _windows(ws: list[str]) -> list[list[str]]:
    """Each word with the two after it: "the empty truck" refers to a truck."""
    return [ws[n : n + 3] for n in range(len(ws))]


def reorder(text: str) -> str | None:
    """The problem with its independent facts moved (the last group of facts first), the question
    kept last; None when no fact can move.

    Facts are grouped so that no sentence comes before one it may refer to (`_depends_on`): a
    sentence that depends on an earlier one joins that one's group, with every group between.
    A question with a personal pronoun in a problem with two or more people is not reordered
    ("How much does she earn?" must not find another person closest to it).
    """
    parts = sentences(text)
    if len(parts) < 3 or not parts[-1].endswith("?"):
        return None
    premises, question = parts[:-1], parts[-1]
    names = {n.lower() for n in people(text)}
    if len(names) > 1 and set(words(question)) & _PERSON_PRONOUNS:
        return None
    groups: list[list[int]] = []
    for i, s in enumerate(premises):
        opens_with_person = bool(groups) and bool(set(words(premises[groups[-1][0]])) & names)
        target = groups[-1][0] if len(names) == 1 and opens_with_person else None
        dep = _depends_on(s, premises[:i], target) if groups else None
        if dep is None:
            groups.append([i])
            continue
        first = next(n for n, g in enumerate(groups) if dep in g)
        groups = [*groups[:first], [m for g in groups[first:] for m in g] + [i]]
    if len(groups) < 2:
        return None
    moved = [groups[-1], *groups[:-1]]
    return " ".join([*(premises[m] for g in moved for m in g), question])


# --- candidates ------------------------------------------------------------------------------


def _renumber(text: str, every_other: bool = False) -> str:
    """Digits as words, or (when there are none) words as digits; with `every_other`, only the
    1st, 3rd, ... number that can be rewritten (a second wording whose words differ)."""
    spelled = digits_to_words(text, every_other)
    return spelled if spelled != text else words_to_digits(text, every_other)


def rewrites(question: str, kinds: list[str], limit: int) -> list[Rewrite]:
    """Up to `limit` distinct rewordings of `question` made with the edits named in `kinds`.

    The near-copy rule compares words, not their order, so each candidate needs other words
    than the question and the candidates before it: in order, a rename, all numbers rewritten,
    both, every other number rewritten, that with the rename, then a second rename alone and
    with each numbers edit. Where the facts can move, every second candidate also has them
    reordered (a reorder alone changes no word, so it never comes alone). Unknown kinds raise
    ValueError.
    """
    unknown = [k for k in kinds if k not in REWRITE_KINDS]
    if unknown:
        raise ValueError(f"unknown rewrite(s) {unknown}; choose from {list(REWRITE_KINDS)}")
    order = reorder(question) if "reorder" in kinds else None
    name_maps = [m for m in (renames(question, 0), renames(question, 5)) if m] if "names" in kinds else []
    number_edits = [False, True] if "numbers" in kinds else []  # every_other
    plans: list[tuple[list[str], dict[str, str], bool | None]] = []  # (kinds, rename, numbers edit)
    for i, mapping in enumerate(name_maps or [{}]):
        if mapping:
            plans.append((["names"], mapping, None))
        for edit in number_edits:
            if i == 0:
                plans.append((["numbers"], {}, edit))
            if mapping:
                plans.append((["names", "numbers"], mapping, edit))
    out: list[Rewrite] = []
    for names_kinds, mapping, numbers_edit in plans:
        moved = order is not None and len(out) % 2 == 1
        base = order if moved and order is not None else question
        text = rename(base if numbers_edit is None else _renumber(base, numbers_edit), mapping)
        if text == (question if not moved else order) and not mapping:
            continue  # the numbers edit found nothing to rewrite
        if all(text != r.text for r in out) and text != question:
            label = "+".join((["reorder"] if moved else []) + names_kinds)
            out.append(Rewrite(text=text, kinds=label, reference=rename(question, mapping)))
    return out[:limit]


def _join(*kinds: str) -> str:
    return "+".join(k for k in kinds if k)


def same_values(a: str, b: str) -> bool:
    """Whether two texts state the same numbers, each as often (what a rewrite must keep)."""
    return sorted(numbers(a)) == sorted(numbers(b))


def filtered_rewrites(
    question: str, kinds: list[str], slots: int, lexical: LexicalFilter, checks: list[str]
) -> tuple[list[Rewrite], list[RejectedParaphrase]]:
    """Rewrites of `question` that pass the cheap filter, at most `slots` of them: (kept, rejected).

    Each goes through `lexical` (the near-copy rule, against the question and every line it
    kept, which it then remembers) and the named drift checks against its `reference`.
    Rewrites are tried in `rewrites` order until `slots` are kept.
    """
    kept: list[Rewrite] = []
    rejected: list[RejectedParaphrase] = []
    if slots <= 0 or not kinds:
        return kept, rejected
    for rewrite in rewrites(question, kinds, limit=MAX_REWRITES):
        if len(kept) >= slots:
            break
        rejection = lexical(rewrite.text) or drift_rejection(rewrite.reference, rewrite.text, checks)
        if rejection is None:
            kept.append(rewrite)
        else:
            rejected.append(rejection.model_copy(update={"detail": f"rewrite {rewrite.kinds}: {rejection.detail}"}))
    return kept, rejected
