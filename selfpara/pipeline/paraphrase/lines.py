"""Where a request's paraphrases come from: the paraphrase reply's lines, streamed where the backend can,
through the cheap filters."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Protocol

from selfpara.config import WrapConfig
from selfpara.errors import UpstreamError
from selfpara.pipeline.paraphrase import LexicalFilter, LineParser, drift_rejection
from selfpara.result import Flag, RejectedParaphrase, Timings, Usage

log = logging.getLogger(__name__)


class ParaphraseSource(Protocol):
    """The paraphrase call a LineSource makes (the SelfParaphraser's)."""

    async def paraphrase_reply(self, question: str, cfg: WrapConfig, usage: Usage) -> AsyncGenerator[str, None]: ...


@dataclass
class Restart:
    """Given by the line source when the whole reply's parse disagrees with the lines given early.

    Attributes:
        lexical: the near-copy filter started afresh for the lines that follow.
    """

    lexical: LexicalFilter


async def given_lines(given: list[str]) -> AsyncGenerator[list[str] | Restart, None]:
    """The caller's own wordings, as given (no generation, no filter)."""
    yield list(given)


class LineSource:
    """One request's paraphrase lines, and what reading them found.

    Args:
        source: makes the paraphrase calls.
        cfg: the request's settings.
        question: the question's text.
        usage: the request's usage, which the calls add to.
        flags: the request's flags (`paraphrase_failed` is added to it).
        timings: the request's timings (`paraphrase_s` is set).

    Attributes:
        seen: lines parsed so far, cheap-rejected ones included.
        cheap_rejected: the lines the cheap filters rejected.
    """

    def __init__(
        self,
        source: ParaphraseSource,
        cfg: WrapConfig,
        question: str,
        usage: Usage,
        flags: list[Flag],
        timings: Timings,
    ) -> None:
        self.source, self.cfg, self.question = source, cfg, question
        self.usage, self.flags, self.timings = usage, flags, timings
        self.seen = 0
        self.cheap_rejected: list[RejectedParaphrase] = []

    async def lines(self) -> AsyncGenerator[list[str] | Restart, None]:
        """The lines of the paraphrase reply that pass the cheap filters (lexical, drift), in order, as the
        reply arrives (those of each piece together). A failed call ends the lines (flagged)."""
        lexical = LexicalFilter(
            self.question, self.cfg.max_overlap, self.cfg.reject_unrelated, self.cfg.min_word_changes
        )
        started = time.perf_counter()
        try:
            model_lines = self._reply_lines(lexical)
            async with contextlib.aclosing(model_lines):  # stopped early: close the stream now, not at GC
                async for item in model_lines:
                    yield item
        finally:
            self.timings.paraphrase_s = time.perf_counter() - started

    async def _reply_lines(self, lexical: LexicalFilter) -> AsyncGenerator[list[str] | Restart, None]:
        """`lines` of the one paraphrase call, streamed where it can be."""
        parser = LineParser(self.cfg.k)
        try:
            pieces = await self.source.paraphrase_reply(self.question, self.cfg, self.usage)
            async with contextlib.aclosing(pieces):
                async for piece in pieces:
                    lines = parser.feed(piece)
                    self.seen += len(lines)
                    if passed := [line for line in lines if self._cheap_filter(lexical, line)]:
                        yield passed
            rest, restart = parser.finish()
        except UpstreamError as exc:
            log.warning("paraphrase call failed, voting over the lines received (%d): %s", self.seen, exc)
            self.flags.append("paraphrase_failed")
            rest, restart = [], False
        if restart:
            log.warning("the paraphrase reply ended in a JSON list: starting over with it")
            self.seen, self.cheap_rejected = 0, []
            lexical = LexicalFilter(
                self.question, self.cfg.max_overlap, self.cfg.reject_unrelated, self.cfg.min_word_changes
            )
            yield Restart(lexical)
        self.seen += len(rest)
        if passed := [line for line in rest if self._cheap_filter(lexical, line)]:
            yield passed

    def _cheap_filter(self, lexical: LexicalFilter, line: str) -> bool:
        """Whether `line` passes the lexical filter and the drift checks (a rejection is recorded)."""
        rejection = lexical(line) or drift_rejection(self.question, line, self.cfg.drift_check_names)
        if rejection is not None:
            self.cheap_rejected.append(rejection)
        return rejection is None
