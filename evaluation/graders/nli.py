"""`nli`: correct when the answer entails a gold answer (a local NLI model)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from evaluation.graders.base import declines
from evaluation.graders.registry import register_grader
from evaluation.records import Item, Label
from selfpara.errors import ConfigError

EntailFn = Callable[[str, str], Any]
"""entail(premise, hypothesis) -> P(entailment) as a float (or an awaitable of one)."""


class NLIGrader:
    """Correct when the answer entails a gold answer, conditioned on the question (METHOD §5).

    Premise "question answer", hypothesis "question gold"; correct if P(entailment) ≥
    `threshold` for some gold alias. For truthful items (false references present) the
    TruthfulQA convention applies: entailing a false reference makes the answer
    incorrect even if it also entails a true one.

    Args:
        nli: `entail(premise, hypothesis) -> float` (sync or async), or an object with
            `probs(pairs) -> [obj with .entailment]` such as `selfpara.pipeline.equivalence.nli.NLIModel`.
        threshold: entailment probability needed.
        with_question: prefix premise and hypothesis with the original question.
    """

    name = "nli"

    def __init__(self, nli: Any, *, threshold: float = 0.5, with_question: bool = True) -> None:
        self._entail = _entail_fn(nli)
        self.threshold = threshold
        self.with_question = with_question

    async def _p(self, premise: str, hypothesis: str) -> float:
        value = self._entail(premise, hypothesis)
        if inspect.isawaitable(value):
            value = await value
        return float(value)

    async def grade(self, item: Item, answer: str | None) -> Label:
        if declines(answer):
            return "not_attempted"
        assert answer is not None
        prefix = item.original.question.strip() + " " if self.with_question else ""
        premise = prefix + answer.strip()
        for ref in item.incorrect:
            if await self._p(premise, prefix + ref) >= self.threshold:
                return "incorrect"
        for ref in item.gold:
            if await self._p(premise, prefix + ref) >= self.threshold:
                return "correct"
        return "incorrect"


def _entail_fn(nli: Any) -> EntailFn:
    if nli is None:
        raise ConfigError("the NLI grader needs an NLI model: pass entail(premise, hypothesis) or an NLIModel")
    if hasattr(nli, "aprobs"):

        async def via_aprobs(p: str, h: str) -> float:
            return float(_entailment_of((await nli.aprobs([(p, h)]))[0]))

        return via_aprobs
    if hasattr(nli, "probs"):
        return lambda p, h: _entailment_of(nli.probs([(p, h)])[0])
    if callable(nli):

        def call(p: str, h: str) -> Any:
            value = nli(p, h)
            if inspect.isawaitable(value):

                async def wait() -> float:
                    return _entailment_of(await value)

                return wait()
            return _entailment_of(value)

        return call
    raise ConfigError(f"cannot use {type(nli).__name__} as an NLI model: pass a callable or an NLIModel")


def _entailment_of(value: Any) -> float:
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, dict):
        return float(value["entailment"])
    return float(value.entailment)


@register_grader("nli")
def _nli(*, nli: Any = None, **_: object) -> NLIGrader:
    return NLIGrader(nli)
