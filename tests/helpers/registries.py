"""A registry put back as it was: for tests that register throwaway entries."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

from selfpara.util.registry import Registry

T = TypeVar("T")


@contextmanager
def restored(registry: Registry[T]) -> Iterator[Registry[T]]:
    """`registry`, put back on exit as it is now."""
    entries, aliases = dict(registry._entries), dict(registry._aliases)
    try:
        yield registry
    finally:
        registry._entries, registry._aliases = entries, aliases
