"""The one path from a question to a WrappedAnswer, shared by the library, server, CLI and benchmark.

question ──► paraphrase ──► filter ──► answer (fan-out) ──► cluster ──► vote
    └──────────── original answered at once, in parallel ─┘
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Sequence

from selfpara import prompts
from selfpara.config import WrapConfig, build_config, takes_openai_params
from selfpara.equivalence import Equivalence, build_equivalence
from selfpara.errors import InputError, UpstreamError
from selfpara.llm import ModelClient
from selfpara.messages import content_text
from selfpara.nli import NLIModel, load_nli
from selfpara.paraphrase import (
    EquivalenceCheck,
    drift_filter,
    equivalence_filter,
    lexical_filter,
    parse_paraphrases,
    parse_yes_no,
)
from selfpara.result import Answer, Flag, Message, RejectedParaphrase, Timings, Usage, Variant, WrappedAnswer
from selfpara.text import words
from selfpara.vote import VoteRule, vote

log = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 32_000
MAX_EQUIVALENCES = 32


def split_messages(question: str | list[Message]) -> tuple[list[Message], str]:
    """Validate the input and return (messages, question text); the question is the last user message."""
    messages: list[Message] = [{"role": "user", "content": question}] if isinstance(question, str) else list(question)
    if not messages:
        raise InputError("no messages given")
    idx = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "user"), None)
    if idx is None:
        raise InputError("the conversation has no user message to answer")
    if idx != len(messages) - 1:
        raise InputError("the last message must be the user's question")
    content = content_text(messages[idx].get("content"))
    if not content.strip():
        raise InputError("the question is empty")
    if len(content) > MAX_QUESTION_CHARS:
        raise InputError(f"the question is {len(content)} characters; the limit is {MAX_QUESTION_CHARS}")
    return messages, content.strip()


def paraphrase_budget(question: str, k: int) -> int:
    """Tokens to allow for k rewordings: about twice the question's words each, plus list markup."""
    return min(4096, 16 + k * (2 * len(words(question)) + 12))


def with_question(messages: list[Message], text: str) -> list[Message]:
    """`messages` with the last (user) message's content replaced by `text`; context kept."""
    return [*messages[:-1], {**messages[-1], "content": text}]


def _logprob_params(cfg: WrapConfig) -> dict[str, object]:
    """The answer calls' logprob parameters: none unless `cfg.logprobs` asks for them or the vote uses them."""
    if not (cfg.logprobs or cfg.wants_logprobs):
        return {}
    return {"logprobs": True} if cfg.top_logprobs is None else {"logprobs": True, "top_logprobs": cfg.top_logprobs}


class SelfParaphraser:
    """Answers questions by self-paraphrase majority vote.

    Args:
        config: settings (default: the embedded model, k=5).
        client: the model door; default one built from `config` (pass one to share a
            concurrency limit or plug in a fake backend).
        **settings: shorthand for WrapConfig fields when `config` is not given.
    """

    def __init__(
        self, config: WrapConfig | None = None, *, client: ModelClient | None = None, **settings: object
    ) -> None:
        if config is not None and settings:
            raise TypeError("pass either config or keyword settings, not both")
        self.config = config or build_config(**settings)
        self.client = client or ModelClient.from_config(self.config)
        # Bounded: a server's clients may name many judge models over time.
        self._equivalences: OrderedDict[tuple[str, ...], Equivalence] = OrderedDict()

    # --- public entry points -------------------------------------------------

    def answer(
        self,
        question: str | list[Message],
        *,
        paraphrases: Sequence[str] | None = None,
        seeds: Sequence[int] | None = None,
        **overrides: object,
    ) -> WrappedAnswer:
        """Blocking form of `aanswer` (not for use inside a running event loop)."""
        return asyncio.run(self.aanswer(question, paraphrases=paraphrases, seeds=seeds, **overrides))

    async def aanswer(
        self,
        question: str | list[Message],
        *,
        paraphrases: Sequence[str] | None = None,
        seeds: Sequence[int] | None = None,
        **overrides: object,
    ) -> WrappedAnswer:
        """Answer a question (a string, or chat messages whose last user message is the question).

        Args:
            question: the question, or messages whose last (user) message is the question.
            paraphrases: answer exactly these wordings beside the original instead of
                generating and filtering k of them (saved variants; repeats allowed, as
                self-consistency's samples of one wording). None: generate.
            seeds: seed of each answer call, the original's first, then one per
                paraphrase in order (reproducible sampled answers); None: unseeded.
            overrides: WrapConfig fields for this request only (k, equivalence, temperature, ...).

        Raises InputError, ConfigError, or UpstreamError when no answer came back at all.
        """
        cfg = self.config.with_overrides(**overrides) if overrides else self.config
        messages, q = split_messages(question)
        given = None if paraphrases is None else [str(p).strip() for p in paraphrases]
        if given is not None and not all(given):
            raise InputError("a given paraphrase is empty")
        self.equivalence_for(cfg)  # loads an NLI model now: a bad path fails before any model call
        return await _Run(self, cfg, messages, q, given=given, seeds=seeds).execute()

    async def paraphrase(self, question: str, **overrides: object) -> tuple[list[str], list[RejectedParaphrase]]:
        """Generate and filter paraphrases of `question` only (no answers): (kept, rejected).

        The evaluation package uses this to build variant sets once and reuse them.
        Raises UpstreamError if the paraphrase call fails.
        """
        cfg = self.config.with_overrides(**overrides) if overrides else self.config
        _, q = split_messages(question)
        usage = Usage()
        candidates = await self.generate_candidates(q, cfg, usage)
        return await self.filter_candidates(q, candidates, cfg, usage)

    # --- pieces the run uses ---------------------------------------------------

    async def generate_candidates(self, question: str, cfg: WrapConfig, usage: Usage) -> list[str]:
        """One call asking for cfg.k rewordings; the parsed candidates (at most k), unfiltered."""
        model = cfg.paraphrase_model or cfg.model
        seeded = {"seed": cfg.paraphrase_seed} if cfg.paraphrase_seed is not None and takes_openai_params(model) else {}
        reply = await self.client.complete(
            model,
            prompts.paraphrase_messages(question, cfg.k),
            usage=usage,
            temperature=cfg.paraphrase_temperature,
            max_tokens=paraphrase_budget(question, cfg.k),
            kind="paraphrase",
            **seeded,
        )
        return parse_paraphrases(reply.text)[: cfg.k]

    async def filter_candidates(
        self, question: str, candidates: list[str], cfg: WrapConfig, usage: Usage
    ) -> tuple[list[str], list[RejectedParaphrase]]:
        """The lexical filter, the drift checks, then the configured equivalence check: (kept, rejected).

        The cheap drift checks run before the judge so that it is asked only about survivors.
        """
        kept, rejected = lexical_filter(
            question, candidates, cfg.max_overlap, cfg.reject_unrelated, cfg.min_word_changes
        )
        kept, rejected_drift = drift_filter(question, kept, cfg.drift_check_names)
        kept, rejected_eq = await equivalence_filter(question, kept, self.paraphrase_check(cfg, usage))
        return kept, rejected + rejected_drift + rejected_eq

    def equivalence_for(self, cfg: WrapConfig) -> Equivalence:
        """The Equivalence (with its pair cache) for these settings, built once per combination."""
        names = cfg.equivalence_functions
        key = (*names, cfg.judge_model or cfg.model, cfg.nli_model or "")
        if key in self._equivalences:
            self._equivalences.move_to_end(key)
            return self._equivalences[key]
        equivalence = self._equivalences[key] = build_equivalence(
            names, client=self.client, judge_model=cfg.judge_model or cfg.model, nli=self._nli(cfg)
        )
        if len(self._equivalences) > MAX_EQUIVALENCES:
            self._equivalences.popitem(last=False)
        return equivalence

    def _nli(self, cfg: WrapConfig) -> NLIModel | None:
        return load_nli(cfg.nli_model) if cfg.nli_model else None

    def paraphrase_check(self, cfg: WrapConfig, usage: Usage) -> EquivalenceCheck | None:
        """The configured question-equivalence check, or None when it is off."""
        kind = cfg.resolved_paraphrase_check
        if kind == "off":
            return None
        if kind == "nli":
            nli = self._nli(cfg)
            assert nli is not None  # WrapConfig validation guarantees nli_model

            async def nli_check(q: str, p: str) -> tuple[bool, str]:
                fwd, back = await nli.aprobs([(q, p), (p, q)])
                score = (fwd.entailment + back.entailment) / 2
                return score >= cfg.nli_threshold, f"entailment {score:.2f}"

            return nli_check
        judge = cfg.judge_model or cfg.model

        async def llm_check(q: str, p: str) -> tuple[bool, str]:
            prompt = prompts.same_question(q, p)
            reply = await self.client.complete(
                judge, [{"role": "user", "content": prompt}], usage=usage, max_tokens=8, kind="judge"
            )
            verdict = parse_yes_no(reply.text)
            return verdict is True, f"judge said {reply.text.strip()[:40]!r}"

        return llm_check


class _Run:
    """State of one request; lives only for that request."""

    def __init__(
        self,
        owner: SelfParaphraser,
        cfg: WrapConfig,
        messages: list[Message],
        question: str,
        *,
        given: list[str] | None = None,
        seeds: Sequence[int] | None = None,
    ) -> None:
        self.owner, self.cfg, self.messages, self.question = owner, cfg, messages, question
        self.given, self.seeds = given, list(seeds or [])
        self.usage = Usage()
        self.timings = Timings()
        self.flags: list[Flag] = ["judge_is_model_under_test"] if cfg.judge_is_model_under_test else []
        self.failures: list[UpstreamError] = []

    async def execute(self) -> WrappedAnswer:
        started = time.perf_counter()
        original = asyncio.create_task(self._answer(Variant(index=0, text=self.question)))
        try:
            kept, rejected = await self._paraphrases()
        except BaseException:
            original.cancel()
            raise
        variants = [Variant(index=0, text=self.question)] + [Variant(index=i + 1, text=t) for i, t in enumerate(kept)]
        t = time.perf_counter()
        if kept:
            answers = list(await asyncio.gather(original, *(self._answer(v) for v in variants[1:])))
        else:
            answers = [await original]
        self.timings.answer_s = time.perf_counter() - t
        result = await self._vote(variants, rejected, list(answers))
        result.timings.total_s = time.perf_counter() - started
        log.info(
            "answered k=%d kept=%d vote_share=%.2f calls=%d in %.2fs",
            self.cfg.k,
            len(kept),
            result.vote_share,
            self.usage.calls,
            result.timings.total_s,
        )
        return result

    async def _paraphrases(self) -> tuple[list[str], list[RejectedParaphrase]]:
        if self.given is not None:  # the caller's own wordings: answered as given, not filtered
            if not self.given:
                self.flags.append("no_paraphrases")
            return list(self.given), []
        t = time.perf_counter()
        try:
            candidates = await self.owner.generate_candidates(self.question, self.cfg, self.usage)
        except UpstreamError as exc:
            log.warning("paraphrase call failed, answering the original only: %s", exc)
            self.flags.append("paraphrase_failed")
            self.timings.paraphrase_s = time.perf_counter() - t
            return [], []
        self.timings.paraphrase_s = time.perf_counter() - t
        t = time.perf_counter()
        kept, rejected = await self.owner.filter_candidates(self.question, candidates, self.cfg, self.usage)
        self.timings.filter_s = time.perf_counter() - t
        if not kept:
            self.flags.append("no_paraphrases")
        return kept, rejected

    async def _answer(self, variant: Variant) -> Answer:
        t = time.perf_counter()
        # Unseeded calls send no seed at all, so their parameters (and cache keys) stay as they were.
        seed = {"seed": self.seeds[variant.index]} if variant.index < len(self.seeds) else {}
        try:
            out = await self.owner.client.complete(
                self.cfg.model,
                with_question(self.messages, variant.text),
                usage=self.usage,
                temperature=self.cfg.temperature,
                max_tokens=self.cfg.max_tokens,
                kind="answer",
                **seed,
                **_logprob_params(self.cfg),
            )
        except UpstreamError as exc:
            self.failures.append(exc)
            return Answer(variant=variant.index, error=str(exc), latency_s=time.perf_counter() - t)
        return Answer(
            variant=variant.index,
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
            first = self.failures[0]
            raise UpstreamError(f"every answer call failed: {errors}", status=first.status, retryable=first.retryable)
        if len(ok) < len(answers):
            self.flags.append("partial_failure")
        if not answers[0].ok:
            self.flags.append("original_failed")
        t = time.perf_counter()
        equivalence = self.owner.equivalence_for(self.cfg)
        rule = VoteRule(
            margin=self.cfg.overrule_margin,
            confident_logprob=self.cfg.confident_logprob,
            weighting=self.cfg.vote_weighting,
        )
        outcome = await vote(self.question, answers, equivalence, self.usage, rule)
        self.timings.cluster_s = time.perf_counter() - t
        if outcome.original_kept:
            self.flags.append("original_kept")
        winner = outcome.clusters[outcome.winner]
        chosen_text = next(a.text for a in answers if a.variant == outcome.chosen) or ""
        answer, withheld = chosen_text, None
        low = self.cfg.low_agreement != "off" and outcome.vote_share < self.cfg.low_agreement_threshold
        if low:
            self.flags.append("low_agreement")
            if self.cfg.low_agreement == "abstain":
                answer, withheld = self.cfg.abstention_text, chosen_text
        if self.usage.cache_errors:
            self.flags.append("cache_unavailable")
        return WrappedAnswer(
            answer=answer,
            withheld_answer=withheld,
            question=self.question,
            model=self.cfg.model,
            k_requested=self.cfg.k,
            k_kept=len(variants) - 1,
            variants=variants,
            rejected=rejected,
            answers=answers,
            clusters=outcome.clusters,
            comparisons=outcome.comparisons,
            winner=outcome.winner,
            vote_share=outcome.vote_share,
            entropy=outcome.entropy,
            entropy_normalized=outcome.entropy_normalized,
            original_won=0 in winner.members,
            original_kept=outcome.original_kept,
            abstained=winner.abstention or withheld is not None,
            flags=self.flags,
            paraphrase_check=self.cfg.resolved_paraphrase_check,
            equivalence_functions=equivalence.names,
            usage=self.usage,
            timings=self.timings,
        )


async def aanswer(question: str | list[Message], **settings: object) -> WrappedAnswer:
    """One-off: build a SelfParaphraser from `settings` and answer `question`."""
    return await SelfParaphraser(build_config(**settings)).aanswer(question)


def answer(question: str | list[Message], **settings: object) -> WrappedAnswer:
    """Blocking one-off form of `aanswer`."""
    return SelfParaphraser(build_config(**settings)).answer(question)
