"""The grader registry: every grader name maps to a factory, so that a new grader is one small module.

    @register_grader("mine", "my-alias")
    def _mine(*, client=None, model=None, nli=None, usage=None, **_) -> Grader:
        return MyGrader()

A grader module registers its names when imported; `evaluation.graders` imports the
built-in ones. `evaluation.graders.choose.grader_for(kind, name)` builds a grader by name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from evaluation.graders.base import Grader
from selfpara.errors import ConfigError

GraderFactory = Callable[..., Grader]
"""`factory(*, client, model, nli, usage) -> Grader`; a factory takes what it needs and ignores the rest."""

FactoryT = TypeVar("FactoryT", bound=GraderFactory)

GRADERS: list[str] = ["auto"]
"""Names `grader_for` accepts (besides aliases), in the order they were registered."""

_FACTORIES: dict[str, GraderFactory] = {}


def register_grader(name: str, *aliases: str) -> Callable[[FactoryT], FactoryT]:
    """Decorator: make `factory` the grader called `name` (and `aliases`)."""

    def add(factory: FactoryT) -> FactoryT:
        for key in (name, *aliases):
            if key in _FACTORIES or key in ("auto", "default"):
                raise ValueError(f"grader name {key!r} is taken")
            _FACTORIES[key] = factory
        GRADERS.append(name)
        return factory

    return add


def normalize_grader_name(name: str) -> str:
    """The registry spelling of a grader name (case and `_`/`-` do not matter)."""
    return name.strip().lower().replace("_", "-")


def check_grader_name(name: str) -> None:
    """ConfigError unless `name` names a grader (or the default)."""
    key = normalize_grader_name(name)
    if key not in _FACTORIES and key not in ("", "auto", "default"):
        raise ConfigError(f"unknown grader {name!r}; choose from {', '.join(GRADERS)}")


def factory_for(name: str) -> GraderFactory:
    """The factory registered as `name` (or an alias); ConfigError listing the names otherwise."""
    factory = _FACTORIES.get(normalize_grader_name(name))
    if factory is None:
        raise ConfigError(f"unknown grader {name!r}; choose from {', '.join(GRADERS)}")
    return factory
