"""Typed values that flow through the pipeline and the WrappedAnswer it returns."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, PrivateAttr

from selfpara.errors import CallLimitReached

Message = dict[str, object]
"""One chat message in OpenAI form: {"role": ..., "content": ...}."""


class Usage(BaseModel):
    """Model calls of one request, summed over every call (failed calls count too).

    `calls`, tokens and cost are what the upstream was asked for; a call answered from the
    call cache (see `selfpara.models.cache`) is counted in `cache_hits` instead.
    """

    calls: int = 0
    failed_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    cache_hits: int = Field(0, description="Model calls answered from the call cache (not sent upstream).")
    cache_errors: int = Field(
        0, description="Cacheable calls made without the cache because it was unreachable (e.g. Redis down)."
    )
    cached_prompt_tokens: int = Field(0, description="Prompt tokens of the calls answered from the call cache.")
    cached_completion_tokens: int = Field(0, description="Completion tokens of the calls answered from the call cache.")
    cached_cost: float = Field(0.0, description="What the calls answered from the call cache cost when they were made.")
    judge_failures: int = Field(
        0, description="Equivalence judge calls that failed: their pairs were left to the cheaper functions."
    )
    refused_calls: int = Field(0, description="Calls not made because the request reached `max_calls`.")
    _max_calls: int | None = PrivateAttr(None)

    @classmethod
    def limited(cls, max_calls: int | None) -> Usage:
        """A Usage whose `count_call` refuses calls beyond `max_calls` (None: no limit)."""
        usage = cls()
        usage._max_calls = max_calls
        return usage

    def count_call(self) -> None:
        """Count one model call (an attempt: retries count); CallLimitReached instead when `max_calls`
        are made already (counted in `refused_calls`)."""
        if self._max_calls is not None and self.calls >= self._max_calls:
            self.refused_calls += 1
            raise CallLimitReached(self._max_calls)
        self.calls += 1

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, other: Usage) -> None:
        """Add another Usage into this one."""
        for name in type(self).model_fields:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def add_hit(self, result: Completion) -> None:
        """Count a call answered from the call cache, with the tokens and cost it had."""
        self.cache_hits += 1
        self.cached_prompt_tokens += result.prompt_tokens
        self.cached_completion_tokens += result.completion_tokens
        self.cached_cost += result.cost

    def as_if_uncached(self) -> Usage:
        """This usage as a client may see it: calls answered from the cache counted as calls, with their
        tokens and cost, and nothing said of the cache (a hit would tell that someone asked before)."""
        return Usage(
            calls=self.calls + self.cache_hits,
            failed_calls=self.failed_calls,
            prompt_tokens=self.prompt_tokens + self.cached_prompt_tokens,
            completion_tokens=self.completion_tokens + self.cached_completion_tokens,
            cost=self.cost + self.cached_cost,
        )


class Completion(BaseModel):
    """What one successful model call returned."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    logprob: float | None = Field(None, description="Mean token log-probability, where the model reports it.")
    finish_reason: str = "stop"
    token_logprobs: list[dict[str, Any]] | None = Field(
        None, description="Per-token log-probabilities as OpenAI's `choices[0].logprobs.content`, where returned."
    )
    queue_s: float | None = Field(
        None,
        description="Seconds the call waited in an embedded engine's queue before the model took it up "
        "(embedded engines only; a remote server's own queue is not seen).",
    )


class Variant(BaseModel):
    """One wording of the question: index 0 is the original."""

    index: int
    text: str
    top_up: bool = Field(
        False, description="A slot no kept paraphrase filled: the original asked again at top_up_temperature."
    )
    source: str | None = Field(
        None,
        description="Where a paraphrase came from: renaming:<relation> (made without a model), form:<name> (the "
        "model put the question in that form), list (the model's list), given (the caller's wording).",
    )
    verified: bool = Field(
        False,
        description="A paraphrase check by a capable model (an LLM judge that is not the small or local model "
        "under test) judged it to ask exactly what the original asks.",
    )

    @property
    def is_original(self) -> bool:
        return self.index == 0


class RejectedParaphrase(BaseModel):
    """A paraphrase candidate the filter dropped, and why."""

    text: str
    reason: Literal[
        "overlap",
        "unrelated",
        "numbers_changed",
        "entities_changed",
        "qualifiers_changed",
        "rates_changed",
        "asks_changed",
        "not_equivalent",
        "empty",
        "check_failed",
    ]
    detail: str = ""


class Answer(BaseModel):
    """The model's answer to one variant; `error` is set when the call failed."""

    variant: int
    text: str | None = None
    error: str | None = None
    cluster: int | None = None
    abstained: bool = False
    logprob: float | None = None
    finish_reason: str | None = Field(None, description="Why the model stopped: stop, length (cut at max_tokens), ...")
    token_logprobs: list[dict[str, Any]] | None = Field(
        None,
        exclude=True,
        description="The call's per-token log-probabilities (OpenAI form), when asked for and "
        "returned; left out of dumps (reports stay small).",
    )
    latency_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None and self.text is not None


class Cluster(BaseModel):
    """Answers judged equivalent to each other."""

    id: int
    members: list[int] = Field(description="Variant indices whose answers fall in this cluster.")
    abstention: bool = False
    mean_logprob: float | None = None
    votes: float | None = Field(None, description="Votes it got: one per answer (its size).")

    @property
    def size(self) -> int:
        return len(self.members)


class Comparison(BaseModel):
    """One pair of answers the vote compared, and which equivalence function decided it."""

    a: int = Field(description="Variant index of one answer.")
    b: int = Field(description="Variant index of the other (a cluster's first member when clustering).")
    equivalent: bool
    decided_by: str = Field(description="Name of the deciding function; 'none' when none decided (not equivalent).")


class Timings(BaseModel):
    """Wall-clock seconds per stage. Answering the original overlaps paraphrasing."""

    paraphrase_s: float = 0.0
    filter_s: float = 0.0
    answer_s: float = 0.0
    cluster_s: float = 0.0
    total_s: float = 0.0


Flag = Literal[
    "no_paraphrases",  # every line that came was rejected: the original's answer alone (or the top-ups' vote)
    "paraphrase_failed",  # the paraphrase call failed: the vote is over the lines received before, if any
    "partial_failure",  # some answer calls failed: the vote ran over the rest
    "original_failed",  # the original's answer call failed
    "original_kept",  # a larger cluster lost to the original's: no decisive majority (see original_kept_reason)
    "judge_is_model_under_test",  # the LLM judge is the small or local answering model: weak verdicts
    "low_vote_share",  # the vote share is below low_vote_share_threshold (see the low_vote_share policy)
    "low_confidence",  # the confidence is below confidence_threshold (the low_vote_share policy, calibrated)
    "cache_unavailable",  # the call cache was unreachable: calls went upstream (see usage.cache_errors)
    "judge_failed",  # an LLM judge call failed: its pair was decided by the cheaper functions (usage.judge_failures)
    "call_limit_reached",  # the request reached max_calls: calls beyond it were not made (usage.refused_calls)
]


class Doubt(BaseModel):
    """Whether a vote was spent on the answer, and why (doubt first: `sure_probability`)."""

    voted: bool = Field(description="Whether the rewordings were asked and voted.")
    probability: float | None = Field(
        None,
        description="The original answer's token probability (geometric mean over its tokens); None where the "
        "model reported no log-probabilities.",
    )
    sure_above: float | None = Field(None, description="The `sure_probability` in force; None: vote on every question.")
    budget: float | None = Field(
        None, description="The `vote_budget` in force, in mean calls per answer; None: no cap on the votes."
    )
    reason: str = Field(description="One line: 'answer sure: p = 0.97 >= 0.90', 'in doubt: p = 0.62 < 0.90', ...")


class WrappedAnswer(BaseModel):
    """The wrapper's answer with everything needed to judge how far to trust it."""

    answer: str = Field(description="The returned text: the winning cluster's answer.")
    question: str
    model: str
    k_requested: int
    k_kept: int = Field(
        description="Paraphrases kept and answered: the wordings the vote used besides the original. Those kept but "
        "not needed (adaptive k had settled) are `skipped_paraphrases`; `ask` and the bench report count both as "
        "kept, and say how many were answered."
    )
    k_topped_up: int = Field(
        0, description="Vote slots filled by asking the original again (top_up_temperature), for lack of paraphrases."
    )
    variants: list[Variant]
    rejected: list[RejectedParaphrase] = []
    answers: list[Answer]
    clusters: list[Cluster]
    comparisons: list[Comparison] = Field(
        default_factory=list, description="Every pair of answers compared, with the function that decided it."
    )
    undecided_pairs: int = Field(
        0,
        description="Compared pairs of answers that no equivalence function could decide: the vote counts them as "
        "different, the confidence as no evidence either way.",
    )
    winner: int = Field(description="Id of the winning cluster.")
    vote_share: float = Field(
        description="Vote share of the winner: |winner| / answers voted.",
    )
    confidence: float = Field(
        description="How far to trust the answer, in [0, 1]: the chance a further wording agrees, "
        "(|winner| + 1) / (n + 2), times the winner's geometric-mean token probability where the backend "
        "reports log-probabilities. Unlike the vote share it is low when few answers were voted.",
    )
    entropy: float = Field(description="Discrete semantic entropy over clusters (nats).")
    entropy_normalized: float = Field(description="Entropy divided by ln(n); 0 when n = 1.")
    original_won: bool = Field(description="Whether the original's answer is in the winning cluster.")
    original_kept_reason: str | None = Field(
        None,
        description="Why the original's answer was returned although another cluster had more votes "
        "(not a decisive majority, or no wording the paraphrase call could not steer); None when the plain vote "
        "decided.",
    )
    abstained: bool = Field(
        False,
        description="Whether the returned answer abstains: the winning cluster's, or the low-vote-share policy's.",
    )
    withheld_answer: str | None = Field(
        None, description="The vote's answer when the low-vote-share policy abstained instead of returning it."
    )
    flags: list[Flag] = Field(
        [],
        description="What to know about this answer (see `Flag`).",
    )
    doubt: Doubt = Field(
        default_factory=lambda: Doubt(voted=True, reason="vote on every question (doubt first off)"),
        description="Whether the vote ran, and why (doubt first).",
    )
    skipped_paraphrases: list[str] = Field(
        default_factory=list,
        description="Paraphrases adaptive k did not need: they passed the cheap filters and were neither "
        "checked nor answered.",
    )
    calls_saved: int = Field(
        0,
        description="Upstream calls adaptive k did not make: each skipped paraphrase's answer call, and its "
        "paraphrase-check call when an LLM checks paraphrases.",
    )
    paraphrase_check: str = "off"
    equivalence_functions: list[str] = Field(
        default_factory=list,
        description="The answer-equivalence functions the vote used.",
    )
    usage: Usage = Usage()
    timings: Timings = Timings()

    @property
    def failed_variants(self) -> list[int]:
        """Variant indices whose answer call failed."""
        return [a.variant for a in self.answers if not a.ok]

    @property
    def n_voted(self) -> int:
        return sum(1 for a in self.answers if a.ok)
