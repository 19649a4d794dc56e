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
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line or _PREAMBLE.match(line) or (line.endswith(":") and not _LEAD.match(line)):
            continue
        if line.lower().startswith(("question:", "example:")) or _TAG_LINE.match(line):
            continue
        cleaned = _clean(_LEAD.sub("", line, count=1))
        if cleaned:
            out.append(cleaned)
    return out


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
    kept: list[str] = []
    rejected: list[RejectedParaphrase] = []
    for cand in candidates:
        if not cand.strip():
            rejected.append(RejectedParaphrase(text=cand, reason="empty"))
            continue
        if reject_unrelated and not shares_content(cand, question):
            rejected.append(RejectedParaphrase(text=cand, reason="unrelated", detail="no content word in common"))
            continue
        copy = next(
            (d for other in [question, *kept] if (d := _near_copy(cand, other, max_overlap, min_word_changes))), None
        )
        if copy is None:
            kept.append(cand)
        else:
            rejected.append(RejectedParaphrase(text=cand, reason="overlap", detail=copy))
    return kept, rejected


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
    kept: list[str] = []
    rejected: list[RejectedParaphrase] = []
    for cand in candidates:
        for name in checks:
            reason, check = DRIFT_CHECKS[name]
            detail = check(question, cand)
            if detail is not None:
                rejected.append(RejectedParaphrase(text=cand, reason=reason, detail=detail))  # type: ignore[arg-type]
                break
        else:
            kept.append(cand)
    return kept, rejected


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
