"""Engines that run embedded models (model strings `local/...`) inside this process.

- `llamacpp`: llama.cpp through llama-cpp-python; the engine every `local/...` model string uses
  (`embedded_engine`, which `ModelClient.backend_for` calls first).
- `embedded`: the embedded models by name, and GGUF files by path.
- `params`: one call's OpenAI-style parameters parsed into a `GenRequest` for an engine.
- `parts`: assembly of a model carried on PyPI in parts into a verified cache file.
"""

from __future__ import annotations

from selfpara.models.backends import Backend


def embedded_engine(model: str) -> Backend:
    """The llama.cpp engine of the embedded `model`: one process-wide engine per model file. Its imports
    wait until an embedded model is first used (llama_cpp is an extra, and slow to import)."""
    from selfpara.models.engines.embedded import resolve
    from selfpara.util.extras import requires_extra

    with requires_extra(resolve(model).extra, f"the embedded model {model}"):
        from selfpara.models.engines.llamacpp import llamacpp_model

    return llamacpp_model(model)
