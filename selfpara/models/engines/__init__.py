"""Engines that run embedded models (model strings `local/...`) inside this process.

- `registry`: which engine runs which model strings (`register_engine`, `engine_for`); the
  model client asks it first. A new engine is one module that registers its factory,
  imported below.
- `llamacpp`: llama.cpp through llama-cpp-python; the engine every `local/...` model
  string uses (registered here, as `llamacpp`).
- `embedded`: the embedded models by name, and GGUF files by path.
- `params`: one call's OpenAI-style parameters parsed into a `GenRequest` for an engine.
- `parts`: assembly of a model carried on PyPI in parts into a verified cache file.
"""

from __future__ import annotations

from selfpara.models.backends import Backend
from selfpara.models.engines.registry import ENGINES, Engine, engine_for, register_engine
from selfpara.models.names import is_embedded

__all__ = ["ENGINES", "Engine", "engine_for", "register_engine"]


@register_engine("llamacpp", serves=is_embedded)
def _llamacpp(model: str) -> Backend:
    """The llama.cpp engine of `model`: one process-wide engine per model file. Its imports wait
    until an embedded model is first used (llama_cpp is an extra, and slow to import)."""
    from selfpara.models.engines.embedded import resolve
    from selfpara.util.extras import requires_extra

    with requires_extra(resolve(model).extra, f"the embedded model {model}"):
        from selfpara.models.engines.llamacpp import llamacpp_model

    return llamacpp_model(model)
