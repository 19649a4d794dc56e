"""Old module names kept for one release: `moved_names` makes the old module's `__getattr__`.

A renamed module stays as a small module of the old name whose every name resolves to the
new module's (under its new name where it changed), with a DeprecationWarning blamed on the
code that named it; importing the old module alone does not warn. A leaf: imports nothing
of selfpara.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any


def moved_names(old: str, new: ModuleType, renamed: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for the old module `old` whose names now live in `new`.

    Args:
        old: the old module's dotted name (its `__name__`), for the messages.
        new: the module that holds the names now.
        renamed: old name -> new name, for the names that changed; the others kept theirs.
    """

    def __getattr__(name: str) -> Any:
        target = renamed.get(name, name)
        if name.startswith("__") or not hasattr(new, target):
            raise AttributeError(f"module {old!r} has no attribute {name!r}")
        warnings.warn(f"{old}.{name} is deprecated; use {new.__name__}.{target}", DeprecationWarning, stacklevel=2)
        return getattr(new, target)

    return __getattr__
