"""What a model name says: the default model, local (in-process) models, OpenAI-compatible upstreams.

A leaf (it imports nothing of selfpara), so the transports, the config, the server and the
evaluation all read model names the same way without importing each other.
"""

from __future__ import annotations

EMBEDDED_MODEL = "local/qwen2.5-coder-1.5b"
"""The model used when none is named: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF, the `qwen`
extra), run in process. Chosen by measurement: it paraphrases; SmolLM2-135M (`local/smollm2`,
always installed, used by the fast tests) rarely writes a rewording that keeps the question."""

OPENAI_COMPATIBLE = ("openai/", "hosted_vllm/")
"""Model prefixes the lean http transport reaches (OpenAI-API upstreams)."""


def is_embedded(model: str) -> bool:
    """Whether `model` names an embedded model run in process (`local/...`, see selfpara.models.engines)."""
    return model.startswith("local/")


def takes_openai_params(model: str) -> bool:
    """Whether `model` accepts OpenAI's optional sampling parameters (`seed`, `logprobs`).

    True for the embedded models and OpenAI-compatible upstreams; other litellm providers
    may reject them, so selfpara does not send them there.
    """
    return is_embedded(model) or model.startswith(OPENAI_COMPATIBLE)


def provider_of(model: str) -> str:
    """The provider part of a litellm model string: 'openai' for 'openai/gpt-4o'."""
    return model.split("/", 1)[0] if "/" in model else model
