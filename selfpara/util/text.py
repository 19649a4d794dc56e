"""Text normalisation shared by the filter, the equivalence functions and the graders."""

from __future__ import annotations

import re
import string
from collections import Counter

from selfpara.util.quantities import NUMBER_WORDS

_WORD = re.compile(r"[A-Za-z0-9']+")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)
_ABSTAIN = re.compile(
    r"\b(i\s+(do\s+not|don'?t|cannot|can'?t)\s+(know|say|answer|tell|be sure)"
    r"|i'?m\s+not\s+sure|i\s+am\s+not\s+sure|not\s+sure|unknown|no\s+idea"
    r"|(cannot|can'?t|unable\s+to)\s+(answer|determine|provide|find)"
    r"|no\s+(reliable\s+)?information|not\s+enough\s+information)\b",
    re.IGNORECASE,
)


def words(text: str) -> list[str]:
    """Lowercase word tokens: `[A-Za-z0-9']+`, as METHOD §2.2 defines them."""
    return [w.lower() for w in _WORD.findall(text)]


def overlap(a: str, b: str) -> float:
    """|multiset(a) ∩ multiset(b)| / min(|a|, |b|) over word tokens; 1.0 if either is empty."""
    wa, wb = words(a), words(b)
    if not wa or not wb:
        return 1.0
    shared = sum((Counter(wa) & Counter(wb)).values())
    return shared / min(len(wa), len(wb))


STOPWORDS = frozenset(
    "the a an of in on at to for by with from and or is are was were be been do does did what which who whom "
    "whose when where why how that this these those it its me my you your i we our they their he she his her "
    "can could would should will shall may might tell give name please about there".split()
)


def word_changes(a: str, b: str) -> int:
    """Words added plus words removed between `a` and `b` (as multisets of word tokens)."""
    wa, wb = Counter(words(a)), Counter(words(b))
    return sum((wa - wb).values()) + sum((wb - wa).values())


def content_stems(text: str) -> set[str]:
    """Crude stems (first 5 letters, possessive dropped) of the non-stopwords in `text`."""
    out = set()
    for w in words(text):
        w = w.removesuffix("'s").strip("'")
        if len(w) >= 3 and w not in STOPWORDS or w.isdigit():
            out.add(w[:5])
    return out


# Words that open a sentence capitalised without being names.
STARTERS = frozenset(
    "if suppose assume given name tell give list identify calculate compute find determine count "
    "please kindly could can would will should may explain describe provide state consider let "
    "after before during since while as so then now yes no here there between among within across "
    "from into over under each every all some both any another other only also but".split()
)
# Determiners open word problems ("Each muffin sells for 2 dollars."); a paraphrase that says
# "per muffin" has dropped no name (GSM8K).
_CAP = re.compile(r"[A-Z][A-Za-z'’]*")


def entity_words(text: str) -> set[str]:
    """Lowercased capitalised words of `text` that look like names (not stopwords, not sentence openers)."""
    out = set()
    for m in _CAP.finditer(text):
        word = m.group().lower().removesuffix("'s").removesuffix("’s").strip("'’")
        if len(word) < 2 or word in STOPWORDS or word in STARTERS or word in NUMBER_WORDS:
            continue
        out.add(word)
    return out


# Country names whose adjective does not share their first four letters.
_DEMONYMS = {
    "france": "french",
    "spain": "spanish",
    "switzerland": "swiss",
    "netherlands": "dutch",
    "holland": "dutch",
    "ireland": "irish",
    "denmark": "danish",
    "wales": "welsh",
    "britain": "british",
    "england": "english",
}


def name_survives(word: str, text_words: set[str]) -> bool:
    """Whether the name `word` (lowercased) is in `text_words`, on a 4-letter stem or as its country's adjective."""
    # Same 4-letter stem: Canada ~ Canadian, Australia ~ Australia's; France ~ French by table.
    forms = (
        {word[:4]}
        | {w[:4] for k, w in _DEMONYMS.items() if word == k}
        | {k[:4] for k, w in _DEMONYMS.items() if word == w}
    )
    # A possessive is the name ("Tom's" keeps Tom); a name capitalised inside a word is that word's end
    # (entity_words reads "Phone" in "iPhone").
    bases = {w.removesuffix("'s").removesuffix("’s") for w in text_words}
    return any(w[:4] in forms or w.endswith(word) for w in bases)


def shares_content(a: str, b: str) -> bool:
    """Whether two texts share at least one content word (by crude stem), e.g. France ~ France's."""
    return bool(content_stems(a) & content_stems(b))


def normalize_answer(text: str) -> str:
    """Lowercase, drop punctuation and articles, fold whitespace (SQuAD-style)."""
    text = text.lower().translate(_PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


_HEDGE = re.compile(r"\b(but|however|though|probably|likely|maybe|perhaps|i think|i believe|guess)\b", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s|\n")


def is_abstention(text: str) -> bool:
    """Whether an answer declines to answer ("I don't know", "I cannot answer", ...).

    Only the first sentence counts, and a sentence that hedges and then answers ("I'm not
    sure, but it's Lyon") is not an abstention.
    """
    first = _SENTENCE_END.split(text.strip(), maxsplit=1)[0][:200]
    return bool(_ABSTAIN.search(first)) and not _HEDGE.search(first) and len(words(text)) <= 40


def contains_phrase(haystack: str, needle: str) -> bool:
    """Whether the normalised `needle` occurs in the normalised `haystack` on word boundaries."""
    h, n = normalize_answer(haystack), normalize_answer(needle)
    return bool(n) and f" {n} " in f" {h} "
