"""Reading a paraphrase reply: a JSON list, a numbered or bulleted list, or plain lines, whole or line by
line as the reply streams (METHOD §2.1); and a judge's YES or NO."""

from __future__ import annotations

import json
import re

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


def parse_yes_no(text: str) -> bool | None:
    """The first YES or NO in a judge's reply; None if it gives neither."""
    m = re.search(r"\b(yes|no)\b", text, re.I)
    return None if m is None else m.group(1).lower() == "yes"
