"""Generate k paraphrases in one call, parse whatever list comes back, and filter them (METHOD §2.1–2.2)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable

from selfpara.drift import DRIFT_CHECKS
from selfpara.result import RejectedParaphrase
from selfpara.text import overlap, shares_content, word_changes

_LEAD = re.compile(
    r"^\s*(?:[-*•]+|\(?\d{1,2}[.):\]]|\(?[a-z][.)]|(?:paraphrase|rewording|version|option)\s*\d*\s*[:.)-])\s*", re.I
)
_TAG_LINE = re.compile(r"^</?\s*[A-Za-z_]+\d*\s*>$")  # an echoed <question> tag
_PREAMBLE = re.compile(r"^(here\s+(are|is)|sure|certainly|okay|ok\b|the\s+(rewordings|paraphrases))", re.I)


def parse_paraphrases(text: str) -> list[str]:
    """Pull rewordings out of a model reply: a JSON list, a numbered/bulleted list, or plain lines.

    Preambles ("Here are 3 rewordings:"), list markers, labels ("Paraphrase 2:") and
    wrapping quotes are removed; empty entries are dropped. Order is kept.
    """
    text = text.strip()
    fenced = re.sub(r"^```(?:json)?\s*|\s*```$", "", text)
    start, end = fenced.find("["), fenced.rfind("]")
    if start != -1 and end > start:
        try:
            data = json.loads(fenced[start : end + 1])
        except json.JSONDecodeError:
            data = None
        if isinstance(data, list):
            items = [str(x.get("text", x.get("paraphrase", "")) if isinstance(x, dict) else x) for x in data]
            return [s for s in (_clean(i) for i in items) if s]
    return [item for line in text.splitlines() if (item := parse_line(line))]


_JSON_VALUE_START = tuple('"{[]-0123456789tfn')


def _may_be_json(text: str) -> bool:
    """Whether the first "[" of `text` may open a JSON list (what `parse_paraphrases` tries first):
    followed by what may start a JSON value, or by nothing yet. "[v1] What ..." may not."""
    start = text.find("[")
    if start == -1:
        return False
    rest = text[start + 1 :].lstrip()
    return not rest or rest.startswith(_JSON_VALUE_START)


def parse_line(line: str) -> str | None:
    """The rewording one line of a list-shaped reply holds, or None (blank, a preamble, a label, an echoed tag)."""
    line = line.strip()
    if not line or _PREAMBLE.match(line) or (line.endswith(":") and not _LEAD.match(line)):
        return None
    if line.lower().startswith(("question:", "example:")) or _TAG_LINE.match(line):
        return None
    return _clean(_LEAD.sub("", line, count=1)) or None


class LineParser:
    """`parse_paraphrases` for a reply that arrives in pieces: each rewording as soon as its line is complete.

    Lines are given out early unless the reply's first "[" may open a JSON list (then the
    whole reply's parse may be that list). `finish` compares what was given out with the
    whole reply's parse, so the result is always `parse_paraphrases(reply)[:limit]`.

    Args:
        limit: rewordings to give out at most (the k asked for).
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.text = ""
        self.given: list[str] = []
        self._consumed = 0  # characters of `text` whose lines were parsed

    def feed(self, piece: str) -> list[str]:
        """Add a piece of the reply; the rewordings of the lines it completed."""
        self.text += piece
        if _may_be_json(self.text):
            return []
        lines = self.text[self._consumed :].splitlines(keepends=True)
        if lines and lines[-1].splitlines()[0] == lines[-1]:
            lines.pop()  # the last line has no line break yet
        out = []
        for line in lines:
            self._consumed += len(line)
            item = parse_line(line)
            if item and len(self.given) < self.limit:
                self.given.append(item)
                out.append(item)
        return out

    def finish(self) -> tuple[list[str], bool]:
        """(the rewordings not given out yet, False), or (all of them, True) when the whole reply's parse
        does not begin with those given out (a JSON list came after them)."""
        full = parse_paraphrases(self.text)[: self.limit]
        if full[: len(self.given)] == self.given:
            return full[len(self.given) :], False
        return full, True


def _clean(item: str) -> str:
    item = re.sub(r"^<question>\s*|\s*</question>$", "", item.strip())
    item = item.strip().strip("\"“”'`").strip()
    return re.sub(r"\s+", " ", item)


def lexical_filter(
    question: str,
    candidates: list[str],
    max_overlap: float = 0.8,
    reject_unrelated: bool = False,
    min_word_changes: int | None = None,
) -> tuple[list[str], list[RejectedParaphrase]]:
    """Drop near-copies of `question` and of candidates already kept; keep the rest, in order.

    A candidate is a near-copy of a text when its word overlap with it reaches
    `max_overlap` and, if `min_word_changes` is set, it also adds and removes fewer than
    that many words (so that a short question's real rewording, which cannot change many
    words, survives: "What is 20 percent of 50?" vs "What is 20% of the number 50?" is 3
    changes at overlap 0.83). With `reject_unrelated`, candidates sharing no content word
    with `question` are dropped too: a weak model's off-topic output, not a rewording.
    """
    check = LexicalFilter(question, max_overlap, reject_unrelated, min_word_changes)
    rejected = [r for cand in candidates if (r := check(cand)) is not None]
    return check.kept, rejected


LEXICAL_REASONS = ("empty", "unrelated", "overlap")
"""The rejection reasons of the lexical filter (the drift checks and the equivalence check give the others)."""


class LexicalFilter:
    """`lexical_filter` one candidate at a time: call it on each in order; it remembers those it kept."""

    def __init__(
        self,
        question: str,
        max_overlap: float = 0.8,
        reject_unrelated: bool = False,
        min_word_changes: int | None = None,
    ) -> None:
        self.question, self.max_overlap = question, max_overlap
        self.reject_unrelated, self.min_word_changes = reject_unrelated, min_word_changes
        self.kept: list[str] = []

    def __call__(self, cand: str) -> RejectedParaphrase | None:
        """Why `cand` is rejected, or None (then it is kept, and later candidates are compared with it too)."""
        if not cand.strip():
            return RejectedParaphrase(text=cand, reason="empty")
        if self.reject_unrelated and not shares_content(cand, self.question):
            return RejectedParaphrase(text=cand, reason="unrelated", detail="no content word in common")
        copy = next(
            (
                d
                for other in [self.question, *self.kept]
                if (d := _near_copy(cand, other, self.max_overlap, self.min_word_changes))
            ),
            None,
        )
        if copy is not None:
            return RejectedParaphrase(text=cand, reason="overlap", detail=copy)
        self.kept.append(cand)
        return None


def _near_copy(cand: str, other: str, max_overlap: float, min_word_changes: int | None) -> str | None:
    """Why `cand` is a near-copy of `other` ("overlap 0.91, 1 word(s) changed"), or None."""
    score = overlap(cand, other)
    if score < max_overlap:
        return None
    if min_word_changes is None:
        return f"overlap {score:.2f}"
    changes = word_changes(cand, other)
    return f"overlap {score:.2f}, {changes} word(s) changed" if changes < min_word_changes else None


def drift_filter(question: str, candidates: list[str], checks: list[str]) -> tuple[list[str], list[RejectedParaphrase]]:
    """Keep candidates that pass every named drift check (`selfpara.drift.DRIFT_CHECKS`).

    A rejected candidate carries the first failing check's reason (`numbers_changed`, ...)
    and what changed ("dropped 3").
    """
    verdicts = [(cand, drift_rejection(question, cand, checks)) for cand in candidates]
    return [c for c, r in verdicts if r is None], [r for _, r in verdicts if r is not None]


def drift_rejection(question: str, cand: str, checks: list[str]) -> RejectedParaphrase | None:
    """The first named drift check `cand` fails, as a rejection; None when it passes them all."""
    for name in checks:
        reason, check = DRIFT_CHECKS[name]
        detail = check(question, cand)
        if detail is not None:
            return RejectedParaphrase(text=cand, reason=reason, detail=detail)  # type: ignore[arg-type]
    return None


EquivalenceCheck = Callable[[str, str], Awaitable[tuple[bool, str]]]
"""(original, candidate) -> (keep?, detail). Raises to signal the check itself failed."""


async def equivalence_filter(
    question: str, candidates: list[str], check: EquivalenceCheck | None
) -> tuple[list[str], list[RejectedParaphrase]]:
    """Keep candidates the check judges to ask the same thing as `question` (all of them if no check).

    Checks run concurrently. A candidate whose check errors is rejected (reason
    `check_failed`) rather than kept unverified.
    """
    if check is None or not candidates:
        return list(candidates), []
    verdicts = await asyncio.gather(*(check(question, c) for c in candidates), return_exceptions=True)
    kept, rejected = [], []
    for cand, verdict in zip(candidates, verdicts, strict=True):
        if isinstance(verdict, BaseException):
            rejected.append(RejectedParaphrase(text=cand, reason="check_failed", detail=str(verdict)[:200]))
        elif verdict[0]:
            kept.append(cand)
        else:
            rejected.append(RejectedParaphrase(text=cand, reason="not_equivalent", detail=verdict[1]))
    return kept, rejected


def parse_yes_no(text: str) -> bool | None:
    """The first YES or NO in a judge's reply; None if it gives neither."""
    m = re.search(r"\b(yes|no)\b", text, re.I)
    return None if m is None else m.group(1).lower() == "yes"
