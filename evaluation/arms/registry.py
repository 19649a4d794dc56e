"""The arm registry: a name for every arm class, so that a new arm is one small module.

    @register_arm("my-alias")
    class MyArm(Arm):
        name = "mine"
        ...

An arm module registers itself when imported; `evaluation.arms` imports the built-in ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from evaluation.arms.base import Arm
from selfpara.errors import ConfigError

ArmT = TypeVar("ArmT", bound=type[Arm])

ARMS: dict[str, type[Arm]] = {}
"""Arm classes by name, in the order they were registered."""

ALIASES: dict[str, str] = {}
"""Other spellings accepted for an arm's name."""


def register_arm(*aliases: str) -> Callable[[ArmT], ArmT]:
    """Class decorator: make the arm known by its `name` (and `aliases`) to specs and `make_arm`."""

    def add(cls: ArmT) -> ArmT:
        known = ARMS.get(cls.name)
        if known is not None and known is not cls:
            raise ValueError(f"arm name {cls.name!r} is taken by {known.__qualname__}")
        ARMS[cls.name] = cls
        for alias in aliases:
            ALIASES[alias.lower()] = cls.name
        return cls

    return add


def resolve_arm_name(name: str) -> str:
    """The registry name for `name` (aliases allowed); ConfigError listing the known arms otherwise."""
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in ARMS:
        raise ConfigError(f"unknown arm {name.strip()!r}; choose from {', '.join(ARMS)}")
    return key
