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
from selfpara.quantities import TENS_WORDS, UNIT_WORDS, numbers
from selfpara.result import RejectedParaphrase
from selfpara.text import STOPWORDS, entity_words, words

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


def digits_to_words(text: str) -> str:
    """Whole numbers 2..999,999 of `text` written as words ("$2" -> "two dollars", "20%" -> "twenty
    percent"); 0, 1 and larger numbers are left as they are (a lone "one" reads as a pronoun)."""

    def spell(m: re.Match[str]) -> str:
        dollar, digits, pct = m.group(1), m.group(2), m.group(3)
        n = int(digits.replace(",", ""))
        if not 2 <= n < 1_000_000:
            return m.group()
        said = number_words(n)
        if dollar:
            return f"{said} dollars" + (" percent" if pct else "")
        return said + (" percent" if pct else "")

    return _DIGITS.sub(spell, text)


_SPELLED_WORDS = "|".join(sorted({*UNIT_WORDS, *TENS_WORDS, "hundred", "thousand"}, key=len, reverse=True))
_SPELLED = re.compile(
    rf"\b(?:{_SPELLED_WORDS})(?:(?:[\s-]+|\s+and\s+)(?:{_SPELLED_WORDS}))*\b(?!-)",
    re.I,
)


def words_to_digits(text: str) -> str:
    """Number words of `text` written as digits ("Nine of the kids" -> "9 of the kids", "twenty-one"
    -> "21"); "one" alone is left (it is often a pronoun), so are ordinals, "half" and "twice"."""

    def digit(m: re.Match[str]) -> str:
        values = numbers(m.group())
        if len(values) != 1 or m.group().lower() == "one" or values[0].denominator != 1:
            return m.group()
        return str(values[0])

    return _SPELLED.sub(digit, text)


# --- names -----------------------------------------------------------------------------------

# Gender-neutral names, so that "she" and "his" still read naturally after a rename.
REPLACEMENT_NAMES = ("Alex", "Jordan", "Taylor", "Casey", "Riley", "Morgan", "Jamie", "Robin", "Quinn", "Avery")
_NOT_NAMES = frozenset(
    """january february march april may june july august september october november december monday tuesday
    wednesday thursday friday saturday sunday christmas easter halloween thanksgiving valentine
    last next today yesterday tomorrow normally usually recently finally first second then after before
    later once since because although however meanwhile overall currently initially altogether together
    unfortunately also still several both half most many some one two three mr mrs ms dr""".split()
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
        does = bool(re.search(rf"\b{name}\s+(?:{_HUMAN_VERBS})\b", text))
        # A sentence's first word before a verb is a name only if it recurs, acts or opens the
        # problem: "Ants carried off a fry" is no one.
        recurs = len(re.findall(rf"\b{name}\b", text)) > 1 or does or m.start() == starts[0]
        opens = m.start() in starts and next_word.islower() and next_word not in _NOT_AFTER_NAME and recurs
        joined = bool(re.match(r"and\s+[A-Z][a-z]+", after)) or bool(
            re.search(rf"\b[A-Z][a-z]+\s+and\s+{name}\b", text)
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
    if prev and not prev_is_title and not re.search(r"(^|[.!?]\s+)[A-Z][a-z]+\s+$", before):
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
    also too again other another same both still now instead already finally meanwhile previous earlier
    before twice half double triple times such either neither""".split()
)


def _refers_back(sentence: str, earlier: list[str]) -> bool:
    """Whether `sentence` depends on the sentences before it: a pronoun or relational word, or
    "the X" for an X already mentioned."""
    ws = words(sentence)
    if set(ws) & _BACK_REFERENCES:
        return True
    seen = {w[:4] for s in earlier for w in words(s) if w not in STOPWORDS}
    return any(a == "the" and b[:4] in seen for a, b in zip(ws, ws[1:], strict=False))


def reorder(text: str) -> str | None:
    """The problem with its independent facts moved (the last group of facts first), the question
    kept last; None when no fact can move.

    Facts are grouped: a sentence that refers back joins the group before it. With two or more
    people, or when a group does not open with a name, a sentence with a personal pronoun
    keeps everything before it in place; a question with one does too ("How much does she
    earn?" must not find another person closest to it).
    """
    parts = sentences(text)
    if len(parts) < 3 or not parts[-1].endswith("?"):
        return None
    premises, question = parts[:-1], parts[-1]
    names = {n.lower() for n in people(text)}
    if len(names) > 1 and set(words(question)) & _PERSON_PRONOUNS:
        return None
    groups: list[list[str]] = []
    for i, s in enumerate(premises):
        if not groups or _refers_back(s, premises[:i]):
            if groups and set(words(s)) & (_PERSON_PRONOUNS | {"they", "them", "their"}):
                opener = set(words(groups[-1][0]))
                if len(names) > 1 or not opener & names:
                    groups = [[g for group in groups for g in group]]  # it may point anywhere before it
            if groups:
                groups[-1].append(s)
                continue
        groups.append([s])
    if len(groups) < 2:
        return None
    moved = [groups[-1], *groups[:-1]]
    return " ".join([*(s for g in moved for s in g), question])


# --- candidates ------------------------------------------------------------------------------


def _renumber(text: str) -> str:
    spelled = digits_to_words(text)
    return spelled if spelled != text else words_to_digits(text)


def rewrites(question: str, kinds: list[str], limit: int) -> list[Rewrite]:
    """Up to `limit` distinct rewordings of `question` made with the edits named in `kinds`.

    Single edits come first (a rename, the numbers rewritten, both with the facts reordered),
    then combinations, then a second rename; a reorder alone changes no word, so it always
    comes with another edit (the near-copy filter would reject it). Unknown kinds raise ValueError.
    """
    unknown = [k for k in kinds if k not in REWRITE_KINDS]
    if unknown:
        raise ValueError(f"unknown rewrite(s) {unknown}; choose from {list(REWRITE_KINDS)}")
    order = reorder(question) if "reorder" in kinds else None
    plans: list[tuple[str, str, dict[str, str]]] = []  # (kinds, text, mapping)
    name_maps = [renames(question, 0), renames(question, 5)] if "names" in kinds else []
    name_maps = [m for m in name_maps if m]
    numbered = _renumber(question) if "numbers" in kinds else question
    bases = [("", question)] + ([("reorder", order)] if order else [])
    for base_kind, base in bases:
        base_numbered = _renumber(base) if "numbers" in kinds else base
        if name_maps:
            plans.append((_join(base_kind, "names"), rename(base, name_maps[0]), name_maps[0]))
        if base_numbered != base:
            plans.append((_join(base_kind, "numbers"), base_numbered, {}))
        if name_maps and base_numbered != base:
            plans.append((_join(base_kind, "names", "numbers"), rename(base_numbered, name_maps[0]), name_maps[0]))
    for mapping in name_maps[1:]:
        plans.append(("names", rename(question, mapping), mapping))
        if numbered != question:
            plans.append(("names+numbers", rename(numbered, mapping), mapping))
    out: list[Rewrite] = []
    for kind, text, mapping in plans:
        if text != question and all(text != r.text for r in out):
            out.append(Rewrite(text=text, kinds=kind, reference=rename(question, mapping)))
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
