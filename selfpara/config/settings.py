"""All settings of the wrapper in one typed object."""

from __future__ import annotations

import re
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator, model_validator

from selfpara.errors import config_error
from selfpara.models.cache.spec import masked, parse_cache
from selfpara.models.names import EMBEDDED_MODEL, OPENAI_COMPATIBLE, is_embedded, takes_openai_params
from selfpara.pipeline.drift import DRIFT_CHECKS
from selfpara.pipeline.equivalence import EQUIVALENCE_FUNCTIONS
from selfpara.pipeline.vote import VoteRule
from selfpara.util.hosts import is_loopback

MAX_K = 20

_SIZE_TAG = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*[bB](?![a-zA-Z])")
SURE_PROBABILITY = 0.55
"""Doubt first's threshold on embedded models: on the development splits (NQ-open, ComQA) the vote changed no
answer at any threshold, and 0.55 is the highest whose calls and model-seconds per answer stay within 1.5x raw's
(docs/results/public-sets.md)."""

SMALL_MODEL_B = 14.0
"""Models whose name says they have at most this many billion parameters count as small judges."""


def is_small_or_local(model: str, api_base: str | None = None) -> bool:
    """Whether `model` is an embedded model, served on this machine, or named as small (≤ 14B)."""
    if is_embedded(model) or (api_base and is_loopback(urlsplit(api_base).hostname or "")):
        return True
    return named_small(model)


def named_small(model: str) -> bool:
    """Whether `model`'s name says it has at most SMALL_MODEL_B billion parameters ("qwen2.5-1.5b-instruct")."""
    sizes = [float(m) for m in _SIZE_TAG.findall(model.rsplit("/", 1)[-1])]
    return bool(sizes) and max(sizes) <= SMALL_MODEL_B


class WrapConfig(BaseModel):
    """Settings of one SelfParaphraser.

    Per-request overrides are made with `config.with_overrides(...)`, which returns a
    new object and never changes this one.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field(EMBEDDED_MODEL, description="litellm model string of the model that answers.")
    api_base: str | None = Field(
        None, description="Base URL of the model's server (vLLM, Ollama, any OpenAI-compatible)."
    )
    api_key: SecretStr | None = Field(None, description="Key for the model's server; default: the provider's env var.")
    transport: Literal["auto", "litellm", "http"] = Field(
        "auto",
        description="How openai/ and hosted_vllm/ models are reached. litellm: any provider. http: a lean "
        "OpenAI-API client, ~10x less CPU per call. auto: http when the base URL is known (api_base or "
        "OPENAI_API_BASE/OPENAI_BASE_URL, HOSTED_VLLM_API_BASE), else litellm.",
    )

    k: int = Field(
        3,
        ge=1,
        le=MAX_K,
        description="Paraphrases requested per question. 3: with the overrule margin 2, three rewordings that "
        "agree against the original can overrule it (k = 2 never could), and every recorded result is k = 3.",
    )
    paraphrase_model: str | None = Field(None, description="Model that paraphrases; default: `model` itself.")
    renamings: bool = Field(
        True,
        description="Fill vote slots first with rewordings made without a model that name the asked-for thing or "
        "relation another way ('seat of government' for 'capital', '74 protons' for 'atomic number 74', 'the "
        "author of' for 'wrote'; selfpara.pipeline.lexicon.renamings), through the same checks.",
    )
    paraphrase_method: Literal["auto", "forms", "list"] = Field(
        "auto",
        description="How the model writes the rewordings the renamings leave: forms (one call per rewording, each "
        "in one named form that keeps the question's words, all at once) or list (one call asking for them all). "
        "auto: forms when the paraphrasing model is embedded (a small model's free rewordings drift into its "
        "own confusion), list for a remote one (one call, and a capable model writes varied wordings itself).",
    )
    paraphrase_temperature: float = Field(
        0.0,
        ge=0.0,
        le=2.0,
        description="Temperature of the paraphrase calls. 0: measured on the default model, half of the "
        "candidates sampled at 0.7 drifted; the diversity comes from the forms and hints instead.",
    )
    paraphrase_seed: int | None = Field(
        0,
        description="Seed of the paraphrase call, so reruns reproduce the same candidates without a cache "
        "(sent to embedded and OpenAI-compatible models; None: unseeded).",
    )
    drift_checks: str = Field(
        "numbers,entities,qualifiers,rates,asks",
        description="Comma-separated cheap checks a paraphrase must pass (selfpara.pipeline.drift): numbers (same "
        "numbers, digits and number words normalised), entities (every capitalised name kept), qualifiers "
        "(narrowing words such as capital, adult, largest, most kept and none added), rates ('each acre', 'per "
        "hour' keep their unit), asks (a question of at most 30 words: the same kind of answer asked for, "
        "'who' not 'which book', no relation such as symbol or author dropped, no new name, no added "
        "question); off: none.",
    )
    paraphrase_check: Literal["auto", "off", "llm", "nli"] = Field(
        "auto", description="Equivalence check on paraphrases. auto: llm, or off for the embedded model."
    )
    max_overlap: float = Field(
        0.8, gt=0.0, le=1.0, description="A paraphrase whose word overlap reaches this may be a near-copy."
    )
    min_word_changes: int | None = Field(
        2,
        ge=1,
        description="A paraphrase at or above max_overlap is a near-copy (rejected) only if it adds and removes "
        "fewer words than this; a short question's real rewording cannot change many. None: overlap alone.",
    )
    reject_unrelated: bool = Field(
        True, description="Reject a paraphrase sharing no content word with the question (off-topic output)."
    )
    nli_threshold: float = Field(
        0.75, ge=0.0, le=1.0, description="Mean bidirectional entailment to keep a paraphrase."
    )

    equivalence: str = Field(
        "auto",
        description="Comma-separated answer-equivalence functions, cheapest first; auto: "
        "exact,numeric,contains,distinct,core,llm (without llm for embedded models).",
    )
    overrule_margin: float = Field(
        2.0,
        ge=0.0,
        description="Votes by which another cluster must lead the original's cluster to overrule the "
        "original's answer (1: plain majority; 2: at k=3 one pair of drifted paraphrases cannot flip it).",
    )
    sure_probability: Annotated[float, Field(ge=0.0, le=1.0)] | Literal["auto", "off"] = Field(
        "auto",
        description="Doubt first: the original is answered first, and when the answer's token probability "
        "(geometric mean over its tokens, where the model reports log-probabilities) reaches this, it is "
        "returned with no vote (one call); below it, or when the model reports none, the vote runs. off: vote "
        "on every question. auto: SURE_PROBABILITY for embedded models (chosen on the development curve, "
        "docs/results/public-sets.md), off for remote ones (not measured here: fit one with `selfpara "
        "calibrate --gate`).",
    )
    vote_budget: Annotated[float, Field(ge=1.0)] | Literal["off"] = Field(
        1.5,
        description="Doubt first's cap on what its votes cost, in mean calls per answer over the wrapper's life "
        "(the library instance, the proxy, a bench arm): every request earns budget - 1 calls of credit, and an "
        "answer in doubt is voted on only while the credit lasts (selfpara.pipeline.budget). 1: never vote. off: "
        "vote on every answer in doubt, whatever it costs. Applies only while sure_probability is in force.",
    )
    low_vote_share: Literal["off", "flag", "abstain"] = Field(
        "flag",
        description="What to do when the winner's vote share is below low_vote_share_threshold (or, with "
        "confidence_threshold set, its confidence below that): flag (return the answer flagged low_vote_share "
        "or low_confidence), abstain (return abstention_text instead, flagged) or off.",
    )
    low_vote_share_threshold: float = Field(
        0.6,
        ge=0.0,
        le=1.0,
        description="Vote share below which the low-vote-share policy acts (0.6: a tie or worse).",
    )
    confidence_threshold: float | None = Field(
        None,
        ge=0.0,
        le=1.0,
        description="Confidence below which the low-vote-share policy acts, in place of the vote share and its "
        "threshold; `selfpara calibrate` picks it from a labelled run. None: the policy reads the vote share.",
    )
    abstention_text: str = Field(
        "I am not confident enough to answer this reliably.",
        min_length=1,
        description="The answer returned when the low-vote-share policy abstains.",
    )
    adaptive: bool | None = Field(
        None,
        description="Adaptive k: answer the original and a first stage of paraphrases, then more only while "
        "the answers still to come could change the returned answer (selfpara.pipeline.adaptive); the list call "
        "still asks for k, form calls are made only as a stage needs them. The vote share is then that of the "
        "answers asked. None: on for embedded (local/...) models, where it saves calls and, with forms, time "
        "(replayed on recorded Qwen runs it saved 26-31% of answer calls with the same answers; "
        "research/wordings.py), unless top_up_temperature is set; off for remote "
        "upstreams, where a later stage can add a round trip (docs/adaptive.md).",
    )
    stream_paraphrases: bool | None = Field(
        None,
        description="Stream the paraphrase call where the backend can (http, litellm) and answer each "
        "paraphrase as soon as its line has arrived and passed the filters; else the whole reply is awaited. "
        "None: stream with adaptive k only, where answering early can end a request early; with fixed k the "
        "last line still comes at the reply's end, and a stream costs CPU per token (docs/adaptive.md).",
    )
    judge_model: str | None = Field(None, description="Model for the LLM judges; default: `model`.")
    nli_model: str | None = Field(None, description="Local directory of an NLI sequence-classification model.")

    temperature: float = Field(0.0, ge=0.0, le=2.0, description="Decoding temperature of the answer calls.")
    top_up_temperature: float | None = Field(
        None,
        gt=0.0,
        le=2.0,
        description="Top up the vote: each of the k slots no kept paraphrase fills is answered by asking the "
        "original again at this temperature (seeded from paraphrase_seed: slot i gets paraphrase_seed + i), so "
        "k + 1 answers are always voted; None: off (the vote is over the kept paraphrases only). Not with "
        "adaptive k, which answers only what could change the vote.",
    )
    max_tokens: int = Field(256, ge=1, le=8192, description="Max tokens of each answer.")
    logprobs: bool = Field(
        False,
        description="Ask the model for the token log-probabilities of each answer (OpenAI `logprobs`); "
        "they break vote ties and the chosen answer's are kept (`Answer.token_logprobs`).",
    )
    top_logprobs: int | None = Field(
        None, ge=0, le=20, description="Most likely alternatives per token, with `logprobs` (OpenAI `top_logprobs`)."
    )
    timeout_s: float | None = Field(
        None, gt=0, description="Timeout of one model call; default 60 s, 600 s for the embedded CPU model."
    )
    retries: int = Field(3, ge=0, le=10, description="Retries of a transient model failure.")
    concurrency: int = Field(16, ge=1, le=1024, description="Model calls in flight at once per SelfParaphraser.")
    max_calls: int | None = Field(
        None,
        ge=1,
        description="Most model calls one request may make, retries included; beyond it a call is not made "
        "(a judge's pair stays undecided, an answer fails) and the answer is flagged call_limit_reached. "
        "None: no limit (the proxy sets its max_upstream_calls).",
    )
    cache: str = Field(
        "memory",
        description="Cache of identical deterministic model calls (temperature 0, or seeded) across requests: "
        "memory (this process), off, redis://HOST:PORT/DB (shared by processes and proxy replicas) or "
        "sqlite:///PATH. Errors are never cached; an unreachable store is skipped, never a failure.",
    )
    cache_size: int = Field(10_000, ge=1, description="Calls the memory cache keeps (least recently used dropped).")
    cache_ttl_s: float | None = Field(
        7 * 24 * 3600.0, gt=0, description="Seconds a cached call is served; None: until dropped or evicted."
    )

    @field_validator("equivalence")
    @classmethod
    def _known_equivalence(cls, value: str) -> str:
        if value == "auto":
            return value
        names = [n.strip() for n in value.split(",") if n.strip()]
        if not names:
            raise ValueError("equivalence names no function")
        unknown = [n for n in names if n not in EQUIVALENCE_FUNCTIONS]
        if unknown:
            raise ValueError(f"unknown equivalence function(s) {unknown}; choose from {list(EQUIVALENCE_FUNCTIONS)}")
        return ",".join(names)

    @field_validator("cache")
    @classmethod
    def _known_cache(cls, value: str) -> str:
        parse_cache(value)  # raises ValueError, with any password masked
        return value.strip()

    @field_validator("drift_checks")
    @classmethod
    def _known_drift_checks(cls, value: str) -> str:
        return _name_list(value, list(DRIFT_CHECKS), "drift check(s)")

    @model_validator(mode="after")
    def _nli_needs_model(self) -> WrapConfig:
        uses_nli = self.paraphrase_check == "nli" or any(
            EQUIVALENCE_FUNCTIONS[n].needs_nli for n in self.equivalence_functions
        )
        if uses_nli and not self.nli_model:
            raise ValueError("NLI equivalence or paraphrase check needs nli_model (a local model directory)")
        if self.transport == "http" and not self.model.startswith(OPENAI_COMPATIBLE):
            raise ValueError("transport http needs an openai/ or hosted_vllm/ model")
        if self.adaptive and self.top_up_temperature is not None:
            raise ValueError(
                "top_up_temperature and adaptive k do not combine: adaptive k answers only what could "
                "change the vote; choose one"
            )
        return self

    @property
    def equivalence_functions(self) -> list[str]:
        """The answer-equivalence functions in use, `auto` resolved."""
        if self.equivalence == "auto":
            cheap = ["exact", "numeric", "contains", "distinct", "core"]
            return cheap if is_embedded(self.model) else [*cheap, "llm"]
        return self.equivalence.split(",")

    @property
    def paraphrases_by(self) -> str:
        """How the model writes rewordings: `paraphrase_method` resolved (forms or list)."""
        if self.paraphrase_method != "auto":
            return self.paraphrase_method
        return "forms" if is_embedded(self.paraphrase_model or self.model) else "list"

    @property
    def streams_paraphrases(self) -> bool:
        """Whether the paraphrase call is streamed where the backend can (`stream_paraphrases` resolved)."""
        return self.adapts if self.stream_paraphrases is None else self.stream_paraphrases

    @property
    def adapts(self) -> bool:
        """Whether adaptive k is on (`adaptive` resolved: None is on for embedded models only)."""
        if self.adaptive is not None:
            return self.adaptive
        return is_embedded(self.model) and self.top_up_temperature is None

    @property
    def vote_rule(self) -> VoteRule:
        """The vote rule these settings make (overrule_margin)."""
        return VoteRule(overrule_margin=self.overrule_margin)

    @property
    def drift_check_names(self) -> list[str]:
        """The drift checks in use (empty when off)."""
        return [] if self.drift_checks == "off" else self.drift_checks.split(",")

    @property
    def sure_threshold(self) -> float | None:
        """The doubt-first threshold in force (`sure_probability` resolved): None votes on every question."""
        if self.sure_probability == "off":
            return None
        if self.sure_probability == "auto":
            return SURE_PROBABILITY if is_embedded(self.model) else None
        return float(self.sure_probability)

    @property
    def budget_per_answer(self) -> float | None:
        """The vote budget in force, in mean calls per answer: None when off or when doubt first is off."""
        return None if self.vote_budget == "off" or self.sure_threshold is None else float(self.vote_budget)

    @property
    def verifies_paraphrases(self) -> bool:
        """Whether a capable model checks each paraphrase: the LLM paraphrase check, with a judge that is neither
        embedded nor named as small (whose YES then counts as a wording the paraphrase call could not steer
        alone). Where the judge is served does not matter here: a large model behind a local vLLM is capable."""
        judge = self.judge_model or self.model
        return self.resolved_paraphrase_check == "llm" and not is_embedded(judge) and not named_small(judge)

    @property
    def judge_is_model_under_test(self) -> bool:
        """Whether an LLM judge in use (answer equivalence or the paraphrase check) is the answering
        model itself and that model is small or local: its verdicts are then weak evidence."""
        judge = self.judge_model or self.model
        judges = "llm" in self.equivalence_functions or self.resolved_paraphrase_check == "llm"
        return judges and judge == self.model and is_small_or_local(self.model, self.api_base)

    def top_up_seed(self, slot: int) -> int | None:
        """Seed of the top-up answer in vote slot `slot` (1..k): paraphrase_seed + slot, where the model
        takes a seed and one is set."""
        if self.paraphrase_seed is None or not takes_openai_params(self.model):
            return None
        return self.paraphrase_seed + slot

    @property
    def call_timeout_s(self) -> float:
        """The per-call timeout in use, default resolved."""
        if self.timeout_s is not None:
            return self.timeout_s
        return 600.0 if is_embedded(self.model) else 60.0

    @property
    def resolved_paraphrase_check(self) -> str:
        """The paraphrase equivalence check in use, `auto` resolved."""
        if self.paraphrase_check == "auto":
            return "off" if is_embedded(self.model) else "llm"
        return self.paraphrase_check

    @property
    def wants_logprobs(self) -> bool:
        """Whether answer calls ask for token log-probabilities (doubt first reads them, and the model takes the
        parameter; embedded models report them anyway)."""
        uses = self.sure_threshold is not None
        return uses and takes_openai_params(self.model) and not is_embedded(self.model)

    def with_overrides(self, **changes: object) -> WrapConfig:
        """A validated copy with `changes` applied; raises ConfigError on bad values."""
        given = {k: v for k, v in changes.items() if v is not None}
        return build_config(**{**self.model_dump(), **given})

    def public_dict(self) -> dict[str, object]:
        """The settings as a dict safe to log, report or return to a client (no key, no cache password)."""
        public = self.model_dump(exclude={"api_key"})
        public["cache"] = masked(self.cache)
        return public


def _name_list(value: str, known: list[str] | tuple[str, ...], what: str) -> str:
    """A comma-separated setting of names from `known`, normalised ("off" when it names none)."""
    names = [n.strip() for n in value.split(",") if n.strip()]
    if names in ([], ["off"]):
        return "off"
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown {what} {unknown}; choose from {list(known)} or off")
    return ",".join(names)


def build_config(**values: object) -> WrapConfig:
    """Build a WrapConfig, turning validation failures into one readable ConfigError."""
    try:
        return WrapConfig.model_validate(values)
    except ValidationError as exc:
        raise config_error(exc) from None
