"""The arm registry: a name for every arm class, so that a new arm is one small module.

    @register_arm("mine", "my-alias")
    class MyArm(Arm):
        ...

The decorator gives the class its `name` (written once, there) and rejects a name or alias
already taken. An arm module registers itself when imported; `evaluation.arms` imports the
built-in ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from evaluation.arms.base import Arm
from selfpara.util import Registry

ArmT = TypeVar("ArmT", bound=type[Arm])

ARMS: Registry[type[Arm]] = Registry("arm", normalize=str.lower)
"""Arm classes by name, in the order they were registered (aliases resolve through `resolve_arm_name`)."""


def register_arm(name: str, *aliases: str) -> Callable[[ArmT], ArmT]:
    """Class decorator: make the arm known as `name` (its `name` from then on) and by
    `aliases` to specs and `make_arm`. ValueError when a name is taken."""

    def add(cls: ArmT) -> ArmT:
        ARMS.add(name, cls, *aliases)
        cls.name = name
        return cls

    return add


def resolve_arm_name(name: str) -> str:
    """The registry name for `name` (aliases allowed); ConfigError listing the known arms otherwise."""
    return ARMS.canonical(name)
