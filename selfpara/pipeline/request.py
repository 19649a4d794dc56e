"""One request from question to WrappedAnswer: the paraphrase reply read as it arrives, each paraphrase
checked and answered as soon as it is ready, adaptive k's stages, and the vote.

    paraphrase reply ─► line ─► cheap filters ─► check ─► answer ──┐
    original ─────────────────────────────────────────────► answer ─┴─► settled? ─► cluster ─► vote

One loop (`RequestState._collect`) reacts to three kinds of event: a line of the reply passed the
cheap filters, a check gave its verdict, an answer came back. Verdicts are taken in the
order of the lines, so the paraphrases get the same variant numbers (and seeds) and the
vote sees them in the same order whether the reply streamed or came whole: the outputs
are the same for the same reply text.

With adaptive k the loop pursues only as many lines as the current stage asks for, and after
each answer asks `selfpara.pipeline.adaptive.settled` whether the answers still possible could change
the outcome; once they cannot, it stops pursuing (answers already asked for are still awaited
and voted): the answers are those of the first kept paraphrases of the fixed-k run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from selfpara.config import WrapConfig
from selfpara.errors import UpstreamError
from selfpara.models.upstream_data import combined_failure
from selfpara.pipeline.adaptive import answers_to_settle, first_stage, settled
from selfpara.pipeline.decision import decide_answer, withhold_below
from selfpara.pipeline.doubt import doubt_of
from selfpara.pipeline.independence import independent_wordings
from selfpara.pipeline.paraphrase import LEXICAL_REASONS, EquivalenceCheck
from selfpara.pipeline.paraphrase.lines import LineSource, ParaphraseSource, Restart, given_lines
from selfpara.pipeline.vote import choose_winner, cluster_answers, guard_original, vote
from selfpara.result import Answer, Flag, Message, RejectedParaphrase, Timings, Usage, Variant, WrappedAnswer

if TYPE_CHECKING:  # types only
    from selfpara.models.client import ModelClient
    from selfpara.pipeline.equivalence import Equivalence

log = logging.getLogger(__name__)


def with_question(messages: list[Message], text: str) -> list[Message]:
    """`messages` with the last (user) message's content replaced by `text`; context kept."""
    return [*messages[:-1], {**messages[-1], "content": text}]


def logprob_params(cfg: WrapConfig) -> dict[str, object]:
    """The answer calls' logprob parameters: none unless `cfg.logprobs` asks for them or the vote uses them."""
    if not (cfg.logprobs or cfg.wants_logprobs):
        return {}
    return {"logprobs": True} if cfg.top_logprobs is None else {"logprobs": True, "top_logprobs": cfg.top_logprobs}


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


class RequestOwner(ParaphraseSource, Protocol):
    """What a RequestState uses of the SelfParaphraser that starts it (so that request.py needs no pipeline.py)."""

    @property
    def client(self) -> ModelClient: ...
    def paraphrase_check(self, cfg: WrapConfig, usage: Usage) -> EquivalenceCheck | None: ...
    def equivalence_for(self, cfg: WrapConfig) -> Equivalence: ...


class RequestState:
    """State of one request; lives only for that request.

    Args:
        owner: the SelfParaphraser (its client, paraphrase call, checks and equivalences: `RequestOwner`).
        cfg: the request's settings.
        messages: the conversation; its last (user) message is the question.
        question: the question's text.
        given: wordings to answer as given (no generation, no filter, no adaptive k); None: generate.
        seeds: seed of each answer call by variant index (the original's first).
    """

    def __init__(
        self,
        owner: RequestOwner,
        cfg: WrapConfig,
        messages: list[Message],
        question: str,
        *,
        given: list[str] | None = None,
        seeds: Sequence[int] | None = None,
    ) -> None:
        self.owner, self.cfg, self.messages, self.question = owner, cfg, messages, question
        self.given, self.seeds = given, list(seeds or [])
        self.usage = Usage.limited(cfg.max_calls)
        self.timings = Timings()
        self.flags: list[Flag] = ["judge_is_model_under_test"] if cfg.judge_is_model_under_test else []
        self.failures: list[UpstreamError] = []
        self.rule = cfg.vote_rule
        # The low-vote-share policy changes the answer only when it abstains: then adaptive k keeps its side too.
        self.share_threshold = withhold_below(cfg)
        self.adaptive = cfg.adapts and given is None
        self.check: EquivalenceCheck | None = None if given is not None else owner.paraphrase_check(cfg, self.usage)
        self.candidates: list[Candidate] = []
        self.source = LineSource(owner, cfg, question, self.usage, self.flags, self.timings)
        self.lines_over = False  # every line of the reply was taken
        self.placed = 0  # candidates whose verdict was taken (a prefix)
        self.kept = 0
        self.first = cfg.adaptive_first
        if self.adaptive and self.first is None:
            self.first = first_stage(self.rule, cfg.k, share_threshold=self.share_threshold)
        self.target: float = self.first if self.adaptive and self.first is not None else math.inf
        self.stopping = False
        self._tested: tuple[int, int] | None = None
        self.wants_top_up = cfg.top_up_temperature is not None and given is None
        self.doubt = doubt_of(Answer(variant=0), None)
        self.top_ups: list[asyncio.Task[Answer]] = []
        self._spans: dict[str, list[float]] = {}

    # --- the loop ----------------------------------------------------------------------------

    async def execute(self) -> WrappedAnswer:
        started = time.perf_counter()
        self.original = asyncio.create_task(self._answer(0, self.question))
        if self.given is None and self.cfg.sure_threshold is not None:  # doubt first: the original decides
            self.doubt = doubt_of(await self.original, self.cfg.sure_threshold)
            if not self.doubt.voted:
                result = await self._vote([Variant(index=0, text=self.question)], [], [self.original.result()])
                result.timings.total_s = time.perf_counter() - started
                return result
        try:
            await self._collect()
        except BaseException:
            self._cancel_all()
            raise
        kept = [c for c in self.candidates if c.variant is not None]
        top_ups = [t.result() for t in self.top_ups]
        answers = [self.original.result(), *(c.answer.result() for c in kept if c.answer is not None), *top_ups]
        variants = [
            Variant(index=0, text=self.question),
            *(self._variant(c) for c in kept),
            *(Variant(index=a.variant, text=self.question, top_up=True) for a in top_ups),
        ]
        skipped = [c for c in self.candidates if not c.placed]
        checks_cost = 1 if self.cfg.resolved_paraphrase_check == "llm" else 0
        calls_saved = sum(1 + (checks_cost if c.check is None else 0) for c in skipped)
        calls_saved += self.source.unasked  # form calls adaptive k never made (their lines' answers uncounted)
        # Lexical rejections first, then drift, then the check's: the order the batch filters list them in.
        cheap = sorted(self.source.cheap_rejected, key=lambda r: r.reason not in LEXICAL_REASONS)
        rejected = cheap + [c.rejection for c in self.candidates if c.rejection is not None]
        # Also when adaptive k stopped after rejecting every line so far (the lines still to come could not
        # overrule the original); not when it stopped before any line came: then nothing was rejected.
        if not kept and not skipped and (self.lines_over or rejected) and "paraphrase_failed" not in self.flags:
            self.flags.append("no_paraphrases")
        for name in ("filter", "answer"):
            span = self._spans.get(name)
            setattr(self.timings, f"{name}_s", span[1] - span[0] if span else 0.0)
        result = await self._vote(variants, rejected, answers)
        result.skipped_paraphrases = [c.text for c in skipped]
        result.calls_saved = calls_saved
        result.timings.total_s = time.perf_counter() - started
        log.info(
            "answered k=%d kept=%d skipped=%d vote_share=%.2f calls=%d saved=%d in %.2fs",
            self.cfg.k,
            len(kept),
            len(skipped),
            result.vote_share,
            self.usage.calls,
            calls_saved,
            result.timings.total_s,
        )
        return result

    async def _collect(self) -> None:
        """Run the events until every answer the vote needs is in."""
        lines = self._lines()
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

    def _ask_for_lines(self) -> None:
        """Tell the line source how many more lines the stage wants (all of them without adaptive k)."""
        alive = sum(1 for c in self.candidates if c.rejection is None)
        wanted = 0.0 if self.stopping else self.target - alive
        if wanted <= 0 and not self.stopping and not self._out():
            wanted = 1  # nothing else is out: a line is the only way on (the vote is open and wants one)
        self.source.want(wanted)

    def _out(self) -> set[asyncio.Future[Any]]:
        """The original's answer, checks, answers and top-ups still out."""
        tasks = [self.original, *self.top_ups, *(t for c in self.candidates for t in (c.check, c.answer) if t)]
        return {t for t in tasks if not t.done()}

    def _take(self, item: list[str] | Restart) -> None:
        if isinstance(item, Restart):  # rare: a JSON list after early lines; start over with the whole list
            for c in self.candidates[item.keep :]:
                for task in (c.check, c.answer):
                    if task is not None:
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
            rejection = _rejection(c)
            if rejection is not None:
                c.rejection = rejection
            else:
                self.kept += 1
                c.variant = self.kept
                c.answer = asyncio.create_task(self._answer(c.variant, c.text))
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
        answers_in = self.original.done() and all(c.answer is None or c.answer.done() for c in self.candidates)
        answers_in = answers_in and all(t.done() for t in self.top_ups)
        if self.stopping:
            return answers_in
        return stream_over and self.placed == len(self.candidates) and answers_in

    def _start_top_ups(self) -> None:
        """Ask the original again for each vote slot no kept paraphrase fills (the kept count is now final)."""
        temperature = self.cfg.top_up_temperature
        for slot in range(self.kept + 1, self.cfg.k + 1):
            call = self._answer(slot, self.question, temperature=temperature, seed=self.cfg.top_up_seed(slot))
            self.top_ups.append(asyncio.create_task(call))

    async def _settled(self, stream_over: bool) -> bool:
        """Adaptive k's test over the answers in so far (the original and the kept lines in order, up to
        the first still out), with every other line, seen or not yet, counted as an answer to come.
        Raises the stage's target when everything asked for is in and the vote is still open."""
        if not self.original.done():
            return False
        prefix = [self.original.result()]
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
        equivalence = self.owner.equivalence_for(self.cfg)
        wordings = [c.text for c in self.candidates if c.variant is not None]
        clusters = await cluster_answers(self.question, prefix, equivalence, self.usage, wordings=wordings)
        more = self.given is None  # a line still to come may be a renaming or keep the question's words
        if settled(clusters, prefix, self.rule, remaining, share_threshold=self.share_threshold, **self._seen(more)):
            return True
        if self._vote_share_reached(clusters, prefix):
            return True
        active = sum(1 for c in self.candidates if c.pursued and c.rejection is None)
        if active == len(prefix) - 1 and active >= self.target:  # the stage is answered: size the next one
            step = self.cfg.adaptive_step or max(
                1, answers_to_settle(clusters, prefix, self.rule, remaining, share_threshold=self.share_threshold)
            )
            self.target = active + step
        return False

    def _seen(self, more: bool) -> dict[str, Any]:
        """Adaptive k's view of the guard's independence condition: the placed lines the paraphrase call
        could not steer (`independent_wordings`), and whether more may come (`settled`'s `independent`,
        `more_independent`)."""
        placed = [self._variant(c) for c in self.candidates if c.variant is not None]
        independent = independent_wordings(
            [Variant(index=0, text=self.question), *placed], given=self.given is not None
        )
        return {"independent": independent, "more_independent": more}

    def _vote_share_reached(self, clusters: list[Any], prefix: list[Answer]) -> bool:
        if self.cfg.adaptive_vote_share is None or len(prefix) - 1 < max(self.first or 0, 1) or not clusters:
            return False
        independent = self._seen(False)["independent"]
        winner, _ = guard_original(clusters, choose_winner(clusters), prefix, self.rule, independent=independent)
        return winner.size / sum(c.size for c in clusters) >= self.cfg.adaptive_vote_share

    def _cancel_all(self) -> None:
        self.original.cancel()
        for t in self.top_ups:
            t.cancel()
        for c in self.candidates:
            for task in (c.check, c.answer):
                if task is not None:
                    task.cancel()

    # --- the pieces ----------------------------------------------------------------------------

    def _lines(self) -> AsyncGenerator[list[str] | Restart, None]:
        """The caller's own wordings as given, or the paraphrase lines (`LineSource.lines`)."""
        return given_lines(self.given) if self.given is not None else self.source.lines()

    def _variant(self, c: Candidate) -> Variant:
        """The wording of a kept candidate, with where it came from and whether a capable check verified it."""
        verified = c.check is not None and self.cfg.verifies_paraphrases
        return Variant(index=c.variant or 0, text=c.text, source=self._source_of(c.text), verified=verified)

    def _source_of(self, text: str) -> str | None:
        return "given" if self.given is not None else self.source.sources.get(text)

    async def _checked(self, text: str) -> tuple[bool, str] | Exception:
        """The paraphrase check's verdict on `text`, or the exception it raised (the line is then rejected)."""
        assert self.check is not None
        span = self._spans.setdefault("filter", [time.perf_counter(), 0.0])
        try:
            return await self.check(self.question, text)
        except Exception as exc:  # any failure of the check rejects the line rather than keeping it unverified
            return exc
        finally:
            span[1] = time.perf_counter()

    async def _answer(
        self, variant: int, text: str, temperature: float | None = None, seed: int | None = None
    ) -> Answer:
        """Answer one wording; `temperature` and `seed` given for a top-up, else the request's (and `seeds`)."""
        t = time.perf_counter()
        if variant > 0:
            self._spans.setdefault("answer", [t, 0.0])
        if temperature is None:
            temperature = self.cfg.temperature
            seed = self.seeds[variant] if variant < len(self.seeds) else None
        # Unseeded calls send no seed at all, so their parameters (and cache keys) stay as they were.
        seed_param = {} if seed is None else {"seed": seed}
        try:
            out = await self.owner.client.complete(
                self.cfg.model,
                with_question(self.messages, text),
                usage=self.usage,
                temperature=temperature,
                max_tokens=self.cfg.max_tokens,
                kind="answer",
                **seed_param,
                **logprob_params(self.cfg),
            )
        except UpstreamError as exc:
            self.failures.append(exc)
            return Answer(variant=variant, error=str(exc), latency_s=time.perf_counter() - t)
        finally:
            if "answer" in self._spans:
                self._spans["answer"][1] = time.perf_counter()
        return Answer(
            variant=variant,
            text=out.text.strip(),
            logprob=out.logprob,
            finish_reason=out.finish_reason,
            token_logprobs=out.token_logprobs,
            latency_s=time.perf_counter() - t,
        )

    async def _vote(
        self, variants: list[Variant], rejected: list[RejectedParaphrase], answers: list[Answer]
    ) -> WrappedAnswer:
        ok = [a for a in answers if a.ok]
        if not ok:
            errors = "; ".join(sorted({a.error or "" for a in answers}))
            raise combined_failure(self.failures, f"every answer call failed: {errors}")
        if len(ok) < len(answers):
            self.flags.append("partial_failure")
        if not answers[0].ok:
            self.flags.append("original_failed")
        t = time.perf_counter()
        equivalence = self.owner.equivalence_for(self.cfg)
        independent = independent_wordings(variants, given=self.given is not None)
        wordings = [v.text for v in variants if not v.is_original]
        outcome = await vote(
            self.question, answers, equivalence, self.usage, self.rule, independent=independent, wordings=wordings
        )
        self.timings.cluster_s = time.perf_counter() - t
        if outcome.original_kept_reason:
            self.flags.append("original_kept")
        winner = outcome.clusters[outcome.winner]
        decision = decide_answer(outcome, answers, self.cfg)
        self.flags.extend(decision.flags)
        if self.usage.cache_errors:
            self.flags.append("cache_unavailable")
        if self.usage.judge_failures:
            self.flags.append("judge_failed")
        if self.usage.refused_calls:
            self.flags.append("call_limit_reached")
        return WrappedAnswer(
            answer=decision.answer,
            withheld_answer=decision.withheld,
            question=self.question,
            model=self.cfg.model,
            k_requested=self.cfg.k,
            k_kept=sum(1 for v in variants[1:] if not v.top_up),
            k_topped_up=sum(1 for v in variants if v.top_up),
            variants=variants,
            rejected=rejected,
            answers=answers,
            clusters=outcome.clusters,
            comparisons=outcome.comparisons,
            undecided_pairs=outcome.undecided,
            winner=outcome.winner,
            vote_share=outcome.vote_share,
            confidence=outcome.confidence,
            entropy=outcome.entropy,
            entropy_normalized=outcome.entropy_normalized,
            original_won=0 in winner.members,
            original_kept_reason=outcome.original_kept_reason,
            abstained=winner.abstention or decision.withheld is not None,
            flags=self.flags,
            doubt=self.doubt,
            paraphrase_check=self.cfg.resolved_paraphrase_check,
            equivalence_functions=equivalence.names,
            usage=self.usage,
            timings=self.timings,
        )


def _rejection(c: Candidate) -> RejectedParaphrase | None:
    """Why the check rejected `c` (its verdict must be in), or None when it keeps it or there is no check."""
    if c.check is None:
        return None
    verdict = c.check.result()
    if isinstance(verdict, Exception):
        return RejectedParaphrase(text=c.text, reason="check_failed", detail=str(verdict)[:200])
    keep, detail = verdict
    return None if keep else RejectedParaphrase(text=c.text, reason="not_equivalent", detail=detail)
