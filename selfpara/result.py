"""Typed values that flow through the pipeline and the WrappedAnswer it returns."""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, Field, SerializerFunctionWrapHandler, field_validator, model_serializer

Message = dict[str, object]
"""One chat message in OpenAI form: {"role": ..., "content": ...}."""


class Usage(BaseModel):
    """Model calls of one request, summed over every call (failed calls count too).

    `calls`, tokens and cost are what the upstream was asked for; a call answered from the
    call cache (see `selfpara.cache`) is counted in `cache_hits` instead.
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

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, other: Usage) -> None:
        """Add another Usage into this one."""
        self.calls += other.calls
        self.failed_calls += other.failed_calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cost += other.cost
        self.cache_hits += other.cache_hits
        self.cache_errors += other.cache_errors


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
    rewrite: str | None = Field(
        None,
        description="The edits that made this wording without a model (selfpara.rewrites), e.g. 'names+numbers'; "
        "None: the original or the model's paraphrase.",
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
        "negation_changed",
        "qualifiers_changed",
        "rates_changed",
        "asks_changed",
        "not_equivalent",
        "empty",
        "check_failed",
        "surplus",  # over-generation kept k others, more different from the question and each other
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
    votes: float | None = Field(None, description="Votes it got: its size, or weighted by answer probability.")

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
    "no_paraphrases",  # every candidate was rejected: the raw answer is returned (or the top-ups' vote)
    "paraphrase_failed",  # the paraphrase call failed: the vote is over the lines received before, if any
    "partial_failure",  # some answer calls failed: the vote ran over the rest
    "original_failed",  # the original's answer call failed
    "original_kept",  # a larger cluster lost to the original's: no decisive majority (see original_kept)
    "judge_is_model_under_test",  # the LLM judge is the small or local answering model: weak verdicts
    "low_vote_share",  # the vote share is below low_vote_share_threshold (see the low_vote_share policy)
    "low_confidence",  # the confidence is below confidence_threshold (the low_vote_share policy, calibrated)
    "low_agreement",  # deprecated: low_vote_share's old name, carried beside it for one release
    "cache_unavailable",  # the call cache was unreachable: calls went upstream (see usage.cache_errors)
]

DEPRECATED_FLAGS: dict[str, str] = {"low_agreement": "low_vote_share"}
"""Old flag names -> their new names. A WrappedAnswer carries each old name right after its new one for
one release (clients that test for the old flag keep working); runs recorded before the rename carry
the old name alone."""


def with_deprecated_flags(flags: Iterable[str]) -> list[str]:
    """`flags` with each renamed flag under both names, the new one first (an old name alone gets its new one).

    Args:
        flags: flag names, old or new, in order.
    """
    new_of = DEPRECATED_FLAGS
    old_of = {new: old for old, new in new_of.items()}
    out: list[str] = []
    for flag in flags:
        for name in (new_of.get(flag, flag), old_of.get(new_of.get(flag, flag))):
            if name is not None and name not in out:
                out.append(name)
    return out


def current_flags(flags: Iterable[str]) -> list[str]:
    """`flags` without the old names that accompany their new ones: each flag once, as it was recorded.

    A run recorded before a rename keeps its old name (its report reads as it did); a later one shows
    the new name only.

    Args:
        flags: flag names as recorded (a sample's `flags`, a WrappedAnswer's).
    """
    given = list(flags)
    return [f for f in given if DEPRECATED_FLAGS.get(f) not in given]


class WrappedAnswer(BaseModel):
    """The wrapper's answer with everything needed to judge how far to trust it."""

    answer: str = Field(description="The returned text: the winning cluster's answer.")
    question: str
    model: str
    k_requested: int
    k_kept: int
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
        validation_alias=AliasChoices("vote_share", "agreement"),
    )
    confidence: float = Field(
        description="How far to trust the answer, in [0, 1]: the chance a further wording agrees, "
        "(|winner| + 1) / (n + 2), times the winner's geometric-mean token probability where the backend "
        "reports log-probabilities. Unlike the vote share it is low when few answers were voted.",
    )
    entropy: float = Field(description="Discrete semantic entropy over clusters (nats).")
    entropy_normalized: float = Field(description="Entropy divided by ln(n); 0 when n = 1.")
    original_won: bool = Field(description="Whether the original's answer is in the winning cluster.")
    original_kept: str | None = Field(
        None,
        description="Why the original's answer was returned although another cluster had more votes "
        "(not a decisive majority, or a confident original); None when the plain vote decided.",
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
        description="What to know about this answer (see `Flag`); a renamed flag comes under its new and, for "
        "one release, its old name (low_vote_share, then low_agreement).",
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
        validation_alias=AliasChoices("equivalence_functions", "agreement_functions"),
    )
    usage: Usage = Usage()
    timings: Timings = Timings()

    @field_validator("flags")
    @classmethod
    def _renamed_flags(cls, flags: list[Flag]) -> list[Flag]:
        return with_deprecated_flags(flags)  # type: ignore[return-value]  # names of Flag, in Flag's order

    @model_serializer(mode="wrap")
    def _with_deprecated_fields(self, handler: SerializerFunctionWrapHandler) -> Any:
        """Also write the old names `agreement` (= vote_share) and `agreement_functions` (deprecated, one release)."""
        data = handler(self)
        if isinstance(data, dict):
            if "vote_share" in data:
                data["agreement"] = data["vote_share"]
            if "equivalence_functions" in data:
                data["agreement_functions"] = data["equivalence_functions"]
        return data

    @property
    def agreement(self) -> float:
        """Deprecated: use `vote_share`."""
        warnings.warn("WrappedAnswer.agreement is deprecated; use vote_share", DeprecationWarning, stacklevel=2)
        return self.vote_share

    @property
    def agreement_functions(self) -> list[str]:
        """Deprecated: use `equivalence_functions`."""
        warnings.warn(
            "WrappedAnswer.agreement_functions is deprecated; use equivalence_functions",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.equivalence_functions

    @property
    def failed_variants(self) -> list[int]:
        """Variant indices whose answer call failed."""
        return [a.variant for a in self.answers if not a.ok]

    @property
    def n_voted(self) -> int:
        return sum(1 for a in self.answers if a.ok)
