"""The engine registry: which in-process engine runs which model strings.

    @register_engine("mine", serves=lambda model: model.startswith("mine/"))
    def mine_model(model: str) -> Backend:
        return MyEngine(model)

`ModelClient.backend_for` asks `engine_for(model)` before the network transports, so a model
string an engine serves never leaves the process. A new engine is one module that registers
its factory, imported in `selfpara.models.engines`. A name already taken is a ValueError.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from selfpara.models.backends import Backend
from selfpara.util.registry import Registry

EngineFactory = Callable[[str], Backend]
"""`factory(model) -> Backend` for one model string (it may return a process-wide engine)."""

FactoryT = TypeVar("FactoryT", bound=EngineFactory)


@dataclass(frozen=True)
class Engine:
    """One registered engine.

    Attributes:
        name: what the engine is called (`--help`, errors).
        serves: whether it runs a model string.
        build: the backend for a model string it serves.
    """

    name: str
    serves: Callable[[str], bool]
    build: EngineFactory


ENGINES: Registry[Engine] = Registry("engine")
"""Engines by name, in registration order (the first that serves a model runs it)."""


def register_engine(name: str, *, serves: Callable[[str], bool]) -> Callable[[FactoryT], FactoryT]:
    """Decorator: make the factory it decorates the engine `name`, for the model strings `serves` accepts."""

    def add(factory: FactoryT) -> FactoryT:
        ENGINES.add(name, Engine(name=name, serves=serves, build=factory))
        return factory

    return add


def engine_for(model: str) -> Engine | None:
    """The first registered engine that serves `model`, or None (a network model)."""
    return next((engine for engine in ENGINES.values() if engine.serves(model)), None)
