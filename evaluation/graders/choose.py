"""`grader_for(kind, name)`: a grader by name, or the default for an item kind."""

from __future__ import annotations

from typing import Any

from evaluation.graders.auto import AutoGrader
from evaluation.graders.base import Grader
from evaluation.graders.registry import factory_for, normalize_grader_name
from evaluation.records import ItemKind
from selfpara.errors import ConfigError


def grader_for(
    kind: ItemKind | None = None,
    name: str | None = None,
    *,
    client: Any = None,
    model: str | None = None,
    nli: Any = None,
    usage: Any = None,
) -> Grader:
    """A grader by name, or the default for `kind` (None or "auto": choose per item by its kind).

    Names: those in GRADERS (auto, match, exact, contains, numeric, truthful, nli, llm,
    llm-simpleqa, llm-truthfulqa) and their aliases; nli needs `nli`, the llm graders
    need `client` and `model`.
    """
    if name is None or normalize_grader_name(name) in ("", "auto", "default"):
        if kind is None:
            return AutoGrader()
        auto = AutoGrader()
        if kind not in auto.by_kind:
            raise ConfigError(f"unknown item kind {kind!r}; use factual, math or truthful")
        return auto.by_kind[kind]
    return factory_for(name)(client=client, model=model, nli=nli, usage=usage)
