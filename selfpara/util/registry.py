"""One registry shape for every "pick it by name" choice: equivalence functions, arms, graders,
dataset formats.

    FORMATS: Registry[FormatLoader] = Registry("dataset format")

    @FORMATS.register("mine", "my-alias")
    def load_mine(path, *, limit=None): ...

The decorator takes the name once and returns what it decorated unchanged; a name (or
alias) already taken is a ValueError naming both owners, so two modules cannot silently
replace each other's entry. A lookup of an unknown name is a ConfigError that lists the
names, and `help_names()` gives the same list for an option's `--help`. A registry is a
read-only mapping from canonical name to entry, in registration order; aliases resolve
through `canonical` and `get`, but are not listed.

A leaf: it imports nothing of selfpara but the errors.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Generic, TypeVar

from selfpara.errors import ConfigError

T = TypeVar("T")
X = TypeVar("X")


def _exact(name: str) -> str:
    return name


class Registry(Mapping[str, T], Generic[T]):
    """Entries of one kind by name.

    Args:
        kind: what an entry is, for messages ("dataset format", "arm").
        normalize: how a name is spelled before it is looked up or stored (e.g. case and
            `_`/`-` folded); default: names are taken exactly.
    """

    def __init__(self, kind: str, *, normalize: Callable[[str], str] = _exact) -> None:
        self.kind = kind
        self._normalize = normalize
        self._entries: dict[str, T] = {}
        self._aliases: dict[str, str] = {}

    def add(self, name: str, entry: T, *aliases: str) -> T:
        """Register `entry` as `name` (and `aliases`); ValueError when any of them is taken."""
        key = self._normalize(name)
        keys = [key, *(self._normalize(a) for a in aliases)]
        for k in keys:
            owner = self._aliases.get(k, k if k in self._entries else None)
            if owner is not None:
                raise ValueError(f"{self.kind} name {k!r} is taken by {owner!r}: pick another name")
        if len(set(keys)) != len(keys):
            raise ValueError(f"{self.kind} {name!r} names itself twice: {aliases}")
        self._entries[key] = entry
        for alias in keys[1:]:
            self._aliases[alias] = key
        return entry

    def register(self, name: str, *aliases: str) -> Callable[[X], X]:
        """Decorator: register what it decorates (a class or a function) as `name` (and
        `aliases`) and return it unchanged. Only for registries whose entries are the
        decorated objects themselves; others wrap `add` in their own decorator."""

        def add(obj: X) -> X:
            self.add(name, obj, *aliases)  # type: ignore[arg-type]
            return obj

        return add

    def canonical(self, name: str) -> str:
        """The registered name `name` (or an alias of it) stands for; ConfigError listing the names otherwise."""
        key = self._normalize(name.strip())
        key = self._aliases.get(key, key)
        if key not in self._entries:
            raise ConfigError(f"unknown {self.kind} {name.strip()!r}; choose from {self.help_names()}")
        return key

    def get_entry(self, name: str) -> T:
        """The entry of `name` (or an alias); ConfigError listing the names otherwise."""
        return self._entries[self.canonical(name)]

    def knows(self, name: str) -> bool:
        """Whether `name` (or an alias) is registered."""
        key = self._normalize(name.strip())
        return self._aliases.get(key, key) in self._entries

    def names(self) -> list[str]:
        """The registered names, in registration order (aliases left out)."""
        return list(self._entries)

    def help_names(self) -> str:
        """The names as an option's `--help` lists them: "a, b, c"."""
        return ", ".join(self._entries)

    def __getitem__(self, name: str) -> T:
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}: {self.help_names()})"
