"""The gather stage: the request's rewordings made, filtered, checked and answered as they arrive, until the
vote has every answer it needs.

    paraphrase reply ─► line ─► cheap filters ─► check ─► answer ──┐
    original ─────────────────────────────────────────────► answer ─┴─► settled? (adaptive k)

One loop (`Gathering.run`) reacts to three kinds of event: a line of the reply passed the cheap filters, a
check gave its verdict, an answer came back. Verdicts are taken in the order of the lines, so the
paraphrases get the same variant numbers (and seeds) and the vote sees them in the same order whether the
reply streamed or came whole: the outputs are the same for the same reply text.

With adaptive k the loop pursues only as many lines as the current stage asks for, and after each answer
asks the adaptive policy (`selfpara.pipeline.adaptive.settled`) whether the answers still possible could
change the outcome; once they cannot, it stops pursuing (answers already asked for are still awaited and
voted): the answers are those of the first kept paraphrases of the fixed-k run. Slots no kept line fills
are filled by top-ups (the original sampled again) where `top_up_temperature` asks for them.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from dataclasses import dataclass
from typing import Any

from selfpara.pipeline.adaptive import answers_to_settle, first_stage, settled
from selfpara.pipeline.decision import withhold_below
from selfpara.pipeline.independence import independent_wordings
from selfpara.pipeline.paraphrase import LEXICAL_REASONS
from selfpara.pipeline.paraphrase.calls import paraphrase_check
from selfpara.pipeline.paraphrase.lines import LineSource, Restart, given_lines
from selfpara.pipeline.state import Request, answer_wording
from selfpara.pipeline.vote import cluster_answers
from selfpara.result import Answer, RejectedParaphrase, Variant


@dataclass
class Candidate:
    """A line of the paraphrase reply that passed the cheap filters, on its way to an answer.

    Attributes:
        text: the rewording.
        pursued: its check (if any) has been started.
        check: the running paraphrase check, when one is configured.
        placed: its verdict was taken, in line order: then it is kept (`variant` set, `answer`
            started) or `rejection` says why not.
    """

    text: str
    pursued: bool = False
    check: asyncio.Task[tuple[bool, str] | Exception] | None = None
    placed: bool = False
    rejection: RejectedParaphrase | None = None
    variant: int | None = None
    answer: asyncio.Task[Answer] | None = None

    def tasks(self) -> list[asyncio.Task[Any]]:
        return [t for t in (self.check, self.answer) if t is not None]


async def gather(req: Request) -> None:
    """The gather stage: fills `req.variants` and `req.answers` (the original's first), `req.rejected`,
    `req.skipped` and `req.calls_saved`; everything it started is cancelled if it is interrupted."""
    gathering = Gathering(req)
    try:
        await gathering.run()
    except BaseException:
        gathering.cancel_all()
        raise
    gathering.hand_over()


class Gathering:
    """The gather stage's own state: the reply's lines as candidates, in order, and the answers asked for."""

    def __init__(self, req: Request) -> None:
        self.req, cfg = req, req.cfg
        self.check = None if req.given is not None else paraphrase_check(cfg, req.client, req.usage)
        self.source = LineSource(req.client, cfg, req.question, req.usage, req.flags, req.timings)
        self.candidates: list[Candidate] = []
        self.lines_over = False  # every line of the reply was taken
        self.placed = 0  # candidates whose verdict was taken (a prefix)
        self.kept = 0
        self.adaptive = cfg.adapts and req.given is None
        # The low-vote-share policy changes the answer only when it abstains: then adaptive k keeps its side too.
        self.share_threshold = withhold_below(cfg)
        first = first_stage(cfg.vote_rule, cfg.k, share_threshold=self.share_threshold) if self.adaptive else None
        self.target: float = math.inf if first is None else first  # lines the stage pursues
        self.stopping = False  # adaptive k settled: no more lines pursued
        self._tested: tuple[int, int] | None = None
        self.wants_top_up = cfg.top_up_temperature is not None and req.given is None
        self.top_ups: list[asyncio.Task[Answer]] = []

    async def run(self) -> None:
        """Run the events until every answer the vote needs is in."""
        lines = given_lines(self.req.given) if self.req.given is not None else self.source.lines()
        pending: asyncio.Future[Any] | None = asyncio.ensure_future(anext(lines))
        try:
            while True:
                self._place_and_pursue()
                out = self._out()
                if await self._finished(stream_over=pending is None):
                    return
                self._place_and_pursue()  # the test may have opened the next stage
                if any(task.done() for task in out):
                    continue  # one came in while the vote was tested (it awaits clustering): test again
                self._ask_for_lines()
                waits: set[asyncio.Future[Any]] = self._out() | ({pending} if pending is not None else set())
                assert waits, "the run waits for nothing but is not finished"
                done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                if pending is not None and pending in done:
                    try:
                        item = pending.result()
                    except StopAsyncIteration:
                        pending, self.lines_over = None, True
                    else:
                        self._take(item)
                        pending = asyncio.ensure_future(anext(lines))
        finally:
            if pending is not None:  # stopped early: stop reading (and close) the paraphrase stream
                pending.cancel()
                with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                    await pending
            await lines.aclose()

    def hand_over(self) -> None:
        """Write what was gathered into the request: the wordings and their answers, what was rejected and
        skipped, the calls adaptive k saved, the spans' timings."""
        req = self.req
        kept = [c for c in self.candidates if c.variant is not None]
        top_ups = [t.result() for t in self.top_ups]
        req.answers = [req.original_answer.result(), *(c.answer.result() for c in kept if c.answer), *top_ups]
        req.variants = [
            Variant(index=0, text=req.question),
            *(self._variant(c) for c in kept),
            *(Variant(index=a.variant, text=req.question, top_up=True) for a in top_ups),
        ]
        skipped = [c for c in self.candidates if not c.placed]
        check_calls = 1 if req.cfg.resolved_paraphrase_check == "llm" else 0
        req.skipped = [c.text for c in skipped]
        req.calls_saved = sum(1 + (check_calls if c.check is None else 0) for c in skipped)
        req.calls_saved += self.source.unasked  # form calls adaptive k never made (their lines' answers uncounted)
        # Lexical rejections first, then drift, then the check's: the order the batch filters list them in.
        cheap = sorted(self.source.cheap_rejected, key=lambda r: r.reason not in LEXICAL_REASONS)
        req.rejected = cheap + [c.rejection for c in self.candidates if c.rejection is not None]
        # Also when adaptive k stopped after rejecting every line so far (the lines still to come could not
        # overrule the original); not when it stopped before any line came: then nothing was rejected.
        if not kept and not skipped and (self.lines_over or req.rejected) and "paraphrase_failed" not in req.flags:
            req.flags.append("no_paraphrases")
        for name in ("filter", "answer"):
            span = req.spans.get(name)
            setattr(req.timings, f"{name}_s", span[1] - span[0] if span else 0.0)

    def cancel_all(self) -> None:
        for task in [self.req.original_answer, *self.top_ups, *(t for c in self.candidates for t in c.tasks())]:
            task.cancel()

    # --- the loop's steps -------------------------------------------------------------------------

    def _ask_for_lines(self) -> None:
        """Tell the line source how many more lines the stage wants (all of them without adaptive k)."""
        alive = sum(1 for c in self.candidates if c.rejection is None)
        wanted = 0.0 if self.stopping else self.target - alive
        if wanted <= 0 and not self.stopping and not self._out():
            wanted = 1  # nothing else is out: a line is the only way on (the vote is open and wants one)
        self.source.want(wanted)

    def _out(self) -> set[asyncio.Future[Any]]:
        """The original's answer, checks, answers and top-ups still out."""
        tasks = [self.req.original_answer, *self.top_ups, *(t for c in self.candidates for t in c.tasks())]
        return {t for t in tasks if not t.done()}

    def _take(self, item: list[str] | Restart) -> None:
        if isinstance(item, Restart):  # rare: a JSON list after early lines; start over with the whole list
            for c in self.candidates[item.keep :]:
                for task in c.tasks():
                    task.cancel()
            del self.candidates[item.keep :]
            self.placed = min(self.placed, item.keep)
            self.kept = sum(1 for c in self.candidates[: self.placed] if c.variant is not None)
            return
        self.candidates.extend(Candidate(text=line) for line in item)

    def _place_and_pursue(self) -> None:
        """Take the verdicts that are in, in line order (starting the kept ones' answers), and start
        checking lines while the stage asks for more."""
        if self.stopping:
            return
        self._place()
        active = sum(1 for c in self.candidates if c.pursued and c.rejection is None)
        for c in self.candidates:
            if active >= self.target:
                break
            if not c.pursued:
                c.pursued = True
                active += 1
                if self.check is not None:
                    c.check = asyncio.create_task(self._checked(c.text))
        self._place()

    def _place(self) -> None:
        while self.placed < len(self.candidates):
            c = self.candidates[self.placed]
            if not c.pursued or (c.check is not None and not c.check.done()):
                return
            c.rejection = _rejection(c)
            if c.rejection is None:
                self.kept += 1
                c.variant = self.kept
                c.answer = asyncio.create_task(answer_wording(self.req, c.variant, c.text))
            c.placed = True
            self.placed += 1

    async def _finished(self, *, stream_over: bool) -> bool:
        """Whether every answer the vote needs is in (with adaptive k: first, whether to stop pursuing)."""
        if self.adaptive and not self.stopping and await self._settled(stream_over):
            self.stopping = True
            for c in self.candidates:
                if not c.placed and c.check is not None:
                    c.check.cancel()
        if self.wants_top_up and not self.top_ups and stream_over and self.placed == len(self.candidates):
            self._start_top_ups()
        answers_in = self.req.original_answer.done() and all(
            c.answer is None or c.answer.done() for c in self.candidates
        )
        answers_in = answers_in and all(t.done() for t in self.top_ups)
        if self.stopping:
            return answers_in
        return stream_over and self.placed == len(self.candidates) and answers_in

    def _start_top_ups(self) -> None:
        """Ask the original again for each vote slot no kept paraphrase fills (the kept count is now final)."""
        cfg = self.req.cfg
        for slot in range(self.kept + 1, cfg.k + 1):
            call = answer_wording(
                self.req, slot, self.req.question, temperature=cfg.top_up_temperature, seed=cfg.top_up_seed(slot)
            )
            self.top_ups.append(asyncio.create_task(call))

    async def _settled(self, stream_over: bool) -> bool:
        """Adaptive k's test over the answers in so far (the original and the kept lines in order, up to
        the first still out), with every other line, seen or not yet, counted as an answer to come.
        Raises the stage's target when everything asked for is in and the vote is still open."""
        req = self.req
        if not req.original_answer.done():
            return False
        prefix = [req.original_answer.result()]
        for c in self.candidates[: self.placed]:
            if c.rejection is not None:
                continue
            if c.answer is None or not c.answer.done():
                break
            prefix.append(c.answer.result())
        open_lines = sum(1 for c in self.candidates if c.rejection is None)
        remaining = open_lines - (len(prefix) - 1) + (0 if stream_over else self.source.to_come)
        if self._tested == (len(prefix), remaining):
            return False
        self._tested = (len(prefix), remaining)
        wordings = [c.text for c in self.candidates if c.variant is not None]
        clusters = await cluster_answers(req.question, prefix, req.equivalence, req.usage, wordings=wordings)
        placed = [self._variant(c) for c in self.candidates if c.variant is not None]
        independent = independent_wordings([Variant(index=0, text=req.question), *placed])
        rule, share = req.cfg.vote_rule, self.share_threshold
        # A line still to come may be a renaming or keep the question's words: it may count as independent.
        if settled(clusters, prefix, rule, remaining, share_threshold=share, independent=independent):
            return True
        active = sum(1 for c in self.candidates if c.pursued and c.rejection is None)
        if active == len(prefix) - 1 and active >= self.target:  # the stage is answered: size the next one
            self.target = active + max(1, answers_to_settle(clusters, prefix, rule, remaining, share_threshold=share))
        return False

    # --- the pieces ----------------------------------------------------------------------------

    def _variant(self, c: Candidate) -> Variant:
        """The wording of a kept candidate, with where it came from and whether a capable check verified it."""
        source = "given" if self.req.given is not None else self.source.sources.get(c.text)
        verified = c.check is not None and self.req.cfg.verifies_paraphrases
        return Variant(index=c.variant or 0, text=c.text, source=source, verified=verified)

    async def _checked(self, text: str) -> tuple[bool, str] | Exception:
        """The paraphrase check's verdict on `text`, or the exception it raised (the line is then rejected)."""
        assert self.check is not None
        started = time.perf_counter()
        try:
            return await self.check(self.req.question, text)
        except Exception as exc:  # any failure of the check rejects the line rather than keeping it unverified
            return exc
        finally:
            self.req.span("filter", started)


def _rejection(c: Candidate) -> RejectedParaphrase | None:
    """Why the check rejected `c` (its verdict must be in), or None when it keeps it or there is no check."""
    if c.check is None:
        return None
    verdict = c.check.result()
    if isinstance(verdict, Exception):
        return RejectedParaphrase(text=c.text, reason="check_failed", detail=str(verdict)[:200])
    keep, detail = verdict
    return None if keep else RejectedParaphrase(text=c.text, reason="not_equivalent", detail=detail)
