"""The grader registry: every grader name maps to a factory, so that a new grader is one small module.

    @register_grader("mine", "my-alias")
    def _mine(*, client=None, model=None, nli=None, usage=None, **_) -> Grader:
        return MyGrader()

A grader module registers its names when imported; `evaluation.graders` imports the
built-in ones. `evaluation.graders.choose.grader_for(kind, name)` builds a grader by name.
A name or alias already taken (or `auto`/`default`, the per-kind default) is a ValueError.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from evaluation.graders.base import Grader
from selfpara.util import Registry

GraderFactory = Callable[..., Grader]
"""`factory(*, client, model, nli, usage) -> Grader`; a factory takes what it needs and ignores the rest."""

FactoryT = TypeVar("FactoryT", bound=GraderFactory)

DEFAULT_NAMES = ("", "auto", "default")
"""Names that ask for the default grader of each item's kind (no factory: `grader_for` builds it)."""


def normalize_grader_name(name: str) -> str:
    """The registry spelling of a grader name (case and `_`/`-` do not matter)."""
    return name.strip().lower().replace("_", "-")


FACTORIES: Registry[GraderFactory] = Registry("grader", normalize=normalize_grader_name)
"""Grader factories by name, in the order they were registered."""

GRADERS: list[str] = ["auto"]
"""Names `grader_for` accepts (besides aliases), in the order they were registered."""


def register_grader(name: str, *aliases: str) -> Callable[[FactoryT], FactoryT]:
    """Decorator: make `factory` the grader called `name` (and `aliases`)."""

    def add(factory: FactoryT) -> FactoryT:
        taken = [n for n in (name, *aliases) if normalize_grader_name(n) in DEFAULT_NAMES]
        if taken:
            raise ValueError(f"grader name {taken[0]!r} is taken by the per-kind default")
        FACTORIES.add(name, factory, *aliases)
        GRADERS.append(name)
        return factory

    return add


def check_grader_name(name: str) -> None:
    """ConfigError unless `name` names a grader (or the default)."""
    if normalize_grader_name(name) not in DEFAULT_NAMES:
        factory_for(name)


def factory_for(name: str) -> GraderFactory:
    """The factory registered as `name` (or an alias); ConfigError listing the names otherwise."""
    return FACTORIES.get_entry(name)
