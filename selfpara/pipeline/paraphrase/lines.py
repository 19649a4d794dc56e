"""Where a request's paraphrases come from, in order, each through the cheap filters as it arrives:

1. renamings (`renamings`): rewordings made without a model that name what is asked another way;
2. then, for the slots they leave, the model: one call per rewording, each in one named form
   (`forms`), or one call asking for a list (`list`, streamed where the backend can).

Form calls are made as the request asks for lines (`LineSource.want`): all at once by default; with
adaptive k only as many as its stage still needs, so that a vote the renamings or the first form
settle never pays for the other forms (on the embedded model, where calls share two cores, those
calls were most of a wrapped ask's time).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass

from selfpara.config import WrapConfig
from selfpara.errors import UpstreamError
from selfpara.models.client import ModelClient
from selfpara.pipeline.lexicon import renamings
from selfpara.pipeline.paraphrase.calls import form_reply, list_reply
from selfpara.pipeline.paraphrase.filter import LexicalFilter, drift_rejection
from selfpara.pipeline.paraphrase.parse import LineParser, parse_line
from selfpara.pipeline.prompts import Form, forms_for
from selfpara.result import Flag, RejectedParaphrase, Timings, Usage

log = logging.getLogger(__name__)


@dataclass
class Restart:
    """Given by the line source when the whole reply's parse disagrees with the lines given early.

    Attributes:
        keep: the lines given out before the reply's (the renamings'), which stand; later ones are void.
    """

    keep: int


async def given_lines(given: list[str]) -> AsyncGenerator[list[str] | Restart, None]:
    """The caller's own wordings, as given (no generation, no filter)."""
    yield list(given)


class LineSource:
    """One request's paraphrase lines, and what reading them found.

    Args:
        client: the model door the paraphrase calls go through.
        cfg: the request's settings.
        question: the question's text.
        usage: the request's usage, which the calls add to.
        flags: the request's flags (`paraphrase_failed` is added to it).
        timings: the request's timings (`paraphrase_s` is set).

    Attributes:
        seen: candidates read so far, cheap-rejected ones included.
        cheap_rejected: the candidates the cheap filters rejected.
        sources: each line given out -> where it came from ("renaming:capital", "form:name", "list").
        failure: the last paraphrase call's error, when one failed.
        unasked: the form calls never made because the request did not want their lines.
    """

    def __init__(
        self,
        client: ModelClient,
        cfg: WrapConfig,
        question: str,
        usage: Usage,
        flags: list[Flag],
        timings: Timings,
    ) -> None:
        self.client, self.cfg, self.question = client, cfg, question
        self.usage, self.flags, self.timings = usage, flags, timings
        self.seen = 0
        self.cheap_rejected: list[RejectedParaphrase] = []
        self.sources: dict[str, str] = {}
        self.failure: UpstreamError | None = None
        self._given_lines: list[str] = []  # given out since the last restart
        self._to_come = cfg.k
        self.unasked = 0
        self._wanted: float = math.inf  # lines the request wants given out in all; form calls are launched up to it
        self._forms: tuple[Form, ...] = ()
        self._calls: list[asyncio.Future[str]] = []
        self._returned = 0  # form calls whose reply was read
        self._launched = asyncio.Event()

    @property
    def to_come(self) -> int:
        """At most how many more lines may still be given out (adaptive k counts them as answers to come)."""
        return max(0, min(self._to_come, self.cfg.k - len(self._given_lines)))

    def want(self, more: float) -> None:
        """Tell the source that the request wants `more` lines beyond those given out so far (math.inf:
        every line it can give). Form calls are launched until that many are out; the list call, one
        call for every line, is made whatever is wanted."""
        self._wanted = len(self._given_lines) + more
        self._launch()

    def _launch(self) -> None:
        """Make form calls until the lines given and the calls out reach what is wanted (a call whose
        line was rejected or failed is replaced by the next form's)."""
        out = len(self._calls) - self._returned
        while len(self._calls) < len(self._forms) and len(self._given_lines) + out < self._wanted:
            out += 1
            form = self._forms[len(self._calls)]
            self._calls.append(
                asyncio.ensure_future(form_reply(self.client, self.question, form, self.cfg, self.usage))
            )
            self._launched.set()

    async def lines(self) -> AsyncGenerator[list[str] | Restart, None]:
        """Lines that pass the cheap filters (lexical, drift), as they arrive: the renamings' together,
        then the model's. A failed call gives no line (flagged `paraphrase_failed`)."""
        lexical = LexicalFilter(
            self.question, self.cfg.max_overlap, self.cfg.reject_unrelated, self.cfg.min_word_changes
        )
        started = time.perf_counter()
        try:
            renamed = self._renamed(lexical) if self.cfg.renamings else []
            if renamed:
                yield renamed
            open_slots = self.cfg.k - len(self._given_lines)
            self._to_come = open_slots
            if open_slots <= 0:
                return
            if self.cfg.paraphrases_by == "forms":
                model_lines = self._form_lines(lexical, open_slots)
            else:
                model_lines = self._reply_lines(lexical, open_slots)
            async with contextlib.aclosing(model_lines):  # stopped early: close the calls now, not at GC
                async for item in model_lines:
                    yield item
        finally:
            self._to_come = 0
            self.timings.paraphrase_s = time.perf_counter() - started

    def _renamed(self, lexical: LexicalFilter) -> list[str]:
        """The renamings that pass the cheap filters, at most k."""
        passed: list[str] = []
        for made in renamings(self.question):
            if len(passed) == self.cfg.k:
                break
            self.seen += 1
            if self._cheap_filter(lexical, made.text):
                passed.append(made.text)
                self.sources[made.text] = f"renaming:{made.renaming}"
        self._given_lines += passed
        return passed

    async def _form_lines(self, lexical: LexicalFilter, n: int) -> AsyncGenerator[list[str] | Restart, None]:
        """One line per form, the calls made as `want` asks and their lines given out in form order (so
        that a request's variants are numbered alike whichever call ends first)."""
        self._forms = forms_for(self.question)[:n]
        self._to_come = len(self._forms)
        self._launch()
        try:
            for index, form in enumerate(self._forms):
                self._launch()  # the line before was given or rejected: want it replaced?
                while index >= len(self._calls):  # not wanted yet: wait until it is, or the request ends
                    self._launched.clear()
                    await self._launched.wait()
                try:
                    reply = await self._calls[index]
                except UpstreamError as exc:
                    self._failed(exc, f"the {form.name!r} paraphrase call failed")
                    continue
                finally:
                    self._to_come -= 1
                    self._returned += 1
                self.seen += 1
                line = next((p for raw in reply.splitlines() if (p := parse_line(raw))), "")
                if self._cheap_filter(lexical, line):
                    self.sources[line] = f"form:{form.name}"
                    self._given_lines.append(line)
                    yield [line]
        finally:
            self.unasked = len(self._forms) - len(self._calls)
            for call in self._calls:
                call.cancel()

    async def _reply_lines(self, lexical: LexicalFilter, n: int) -> AsyncGenerator[list[str] | Restart, None]:
        """The lines of one call asking for `n` rewordings, streamed where it can be."""
        parser = LineParser(n)
        given_before, seen_before, rejected_before = len(self._given_lines), self.seen, len(self.cheap_rejected)
        try:
            pieces = await list_reply(self.client, self.question, self.cfg, self.usage, n)
            async with contextlib.aclosing(pieces):
                async for piece in pieces:
                    lines = parser.feed(piece)
                    self._read(len(lines))
                    if passed := self._passed(lexical, lines):
                        yield passed
            rest, restart = parser.finish()
        except UpstreamError as exc:
            self._failed(exc, f"paraphrase call failed, voting over the lines received ({self.seen})")
            rest, restart = [], False
        if restart:
            log.warning("the paraphrase reply ended in a JSON list: starting over with it")
            self.seen = seen_before
            del self._given_lines[given_before:]
            del self.cheap_rejected[rejected_before:]
            self.sources = {text: where for text, where in self.sources.items() if where != "list"}
            lexical = LexicalFilter(
                self.question, self.cfg.max_overlap, self.cfg.reject_unrelated, self.cfg.min_word_changes
            )
            lexical.kept = list(self._given_lines)
            yield Restart(given_before)
        self._read(len(rest))
        if passed := self._passed(lexical, rest):
            yield passed

    def _read(self, lines: int) -> None:
        self.seen += lines
        self._to_come = max(0, self._to_come - lines)

    def _passed(self, lexical: LexicalFilter, lines: list[str]) -> list[str]:
        passed = [line for line in lines if self._cheap_filter(lexical, line)]
        self.sources.update({line: "list" for line in passed})
        self._given_lines += passed
        return passed

    def _failed(self, exc: UpstreamError, what: str) -> None:
        # One warning a request: its form calls fail alike (a question longer than the model's context), and
        # a warning per form before the request's own error said the same thing three times; the others at INFO.
        log.log(logging.WARNING if self.failure is None else logging.INFO, "%s: %s", what, exc)
        self.failure = exc
        if "paraphrase_failed" not in self.flags:
            self.flags.append("paraphrase_failed")

    def _cheap_filter(self, lexical: LexicalFilter, line: str) -> bool:
        """Whether `line` passes the lexical filter and the drift checks (a rejection is recorded)."""
        rejection = lexical(line) or drift_rejection(self.question, line, self.cfg.drift_check_names)
        if rejection is not None:
            self.cheap_rejected.append(rejection)
        return rejection is None
