"""What every arm is: settings, and `answer(variant) -> ArmOutput`."""

from __future__ import annotations

import abc
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from evaluation.records import Item, ItemKind, ItemVariant
from selfpara.errors import ConfigError
from selfpara.models import ModelClient
from selfpara.result import Usage


class ArmOutput(BaseModel):
    """One arm's answer to one variant."""

    answer: str | None = Field(description="The answer text; None when the arm failed.")
    error: str | None = None
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    """Seconds the answer took, by the client's clock (`ModelClient.clock`)."""
    details: dict[str, Any] = Field(default_factory=dict)


class Arm(abc.ABC):
    """A way of answering one wording of a question.

    Subclasses get `name` from `@register_arm(name)`, set `options` (their settings with
    defaults) and implement `answer`.
    Construction validates settings and raises ConfigError naming the arm.

    Args:
        client: the model door every call goes through.
        model: the model that answers.
        label: how the arm is named in logs and reports (default: `name`).
        max_tokens: max tokens of an answer call.
        settings: arm-specific settings (see `options`).
    """

    name: ClassVar[str]
    description: ClassVar[str]
    options: ClassVar[dict[str, Any]] = {}
    k_settings: ClassVar[tuple[str, ...]] = ("k",)
    """Settings that fix the arm's k: when a spec gives one, the run's --k does not apply."""
    given_wordings: ClassVar[bool] = False
    """True: the arm votes with wordings it is given (the dataset's), which the pipeline never filters."""

    def __init__(
        self,
        client: ModelClient,
        model: str,
        *,
        label: str | None = None,
        max_tokens: int = 64,
        api_base: str | None = None,
        **settings: Any,
    ) -> None:
        unknown = sorted(set(settings) - set(self.options))
        if unknown:
            known = ", ".join(sorted(self.options)) or "none"
            raise ConfigError(f"arm {self.name!r}: unknown setting(s) {unknown}; it takes: {known}")
        self.client = client
        self.model = model
        self.label = label or self.name
        self.max_tokens = max_tokens
        self.api_base = api_base
        self.settings: dict[str, Any] = {**self.options, **{k: v for k, v in settings.items() if v is not None}}
        self.validate()

    def validate(self) -> None:  # noqa: B027 (optional hook: arms without settings keep it empty)
        """Check `self.settings`; raise ConfigError with the arm's name on a bad value."""

    def describe(self) -> dict[str, Any]:
        """Everything that determines this arm's answers: saved in the run config, part of the cache key."""
        return {
            "arm": self.name,
            "label": self.label,
            "model": self.model,
            "max_tokens": self.max_tokens,
            "settings": self.settings,
        }

    @abc.abstractmethod
    async def answer(self, variant: ItemVariant, kind: ItemKind | str = "factual", *, seed: int = 0) -> ArmOutput:
        """Answer one variant. Model failures come back as an ArmOutput with `error` set."""

    async def answer_in(
        self, item: Item, variant: ItemVariant, kind: ItemKind | str = "factual", *, seed: int = 0
    ) -> ArmOutput:
        """Answer `variant`, one wording of `item` (what the runner calls).

        Most arms answer a wording on its own and need nothing else: this is `answer`. An arm
        that also reads the item's other wordings (the oracle) overrides it.
        """
        return await self.answer(variant, kind, seed=seed)


def sample_seed(seed: int, sample: int) -> int:
    """Seed of sampling call number `sample` in a run with seed `seed`.

    The same for every question, so that concurrent sampled calls of one sample index
    can share a batched generate on the embedded model; distinct across sample indices,
    so the k+1 samples of one question are independent draws.
    """
    return (seed * 1_000_003 + sample + 1) % 2**31


def as_int(arm: str, key: str, value: Any, low: int, high: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"arm {arm!r}: {key} must be an integer, got {value!r}") from None
    if not low <= number <= high:
        raise ConfigError(f"arm {arm!r}: {key} must be between {low} and {high}, got {number}")
    return number


def as_float(arm: str, key: str, value: Any, low: float, high: float) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"arm {arm!r}: {key} must be a number, got {value!r}") from None
    if not low <= number <= high:
        raise ConfigError(f"arm {arm!r}: {key} must be between {low:g} and {high:g}, got {number:g}")
    return number


def as_bool(arm: str, key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ConfigError(f"arm {arm!r}: {key} must be true or false, got {value!r}")
