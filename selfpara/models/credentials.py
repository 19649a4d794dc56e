"""Whether a model's credential is there before anything is sent: a missing key is a configuration
error, found at once and named, not an upstream failure after seconds of retries.

What "missing" means depends on the provider:

- a key given to the client (`api_key`), or a base URL (`api_base`: a local or self-hosted
  server, which may need no key) counts as present;
- OpenAI (`KEY_VARIABLES`): missing when OPENAI_API_KEY is unset; decided without importing
  litellm, so the error comes in well under a second;
- OpenAI-compatible servers named by a base URL in the environment (OPENAI_API_BASE,
  HOSTED_VLLM_API_BASE): present, a local server may need no key;
- providers reached without a key (`NO_KEY`: vLLM, Ollama, LM Studio, embedded models) or with
  credentials from elsewhere than one variable (`OTHER_SOURCES`: cloud credential chains,
  files, instance roles, tokens): never reported missing, the provider's own error says what
  is wrong;
- any other provider: litellm's own lookup (`litellm.validate_environment`), which names the
  variables its provider reads (ANTHROPIC_API_KEY, ...); missing when none of them is set.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from selfpara.errors import MissingCredential
from selfpara.models.http_backend import endpoint_from_env
from selfpara.models.names import is_embedded, provider_of
from selfpara.util.envvars import OPENAI_API_KEY_ENV

KEY_VARIABLES: dict[str, tuple[str, ...]] = {"openai": (OPENAI_API_KEY_ENV,)}
"""Providers whose key selfpara looks up itself, without importing litellm (which takes seconds)."""

NO_KEY = ("local", "hosted_vllm", "ollama", "ollama_chat", "lm_studio", "openai_like", "llamafile", "vllm")
"""Providers reached without a key: self-hosted servers (a key, if any, is the server's own choice)."""

OTHER_SOURCES = ("vertex_ai", "vertex_ai_beta", "bedrock", "sagemaker", "azure", "azure_ai", "watsonx", "databricks")
"""Providers whose credentials may come from a credential chain, a file or a token, not one variable."""


def missing_credential(
    model: str,
    *,
    api_key: str | None = None,
    api_base: str | None = None,
    environ: Mapping[str, str],
) -> tuple[str, ...]:
    """The environment variables one of which `model` needs and none of which is set; () when its
    credential is there or cannot be judged from here (see the module doc).

    Args:
        model: a litellm model string (`openai/gpt-4o-mini`, `local/smollm2`, ...).
        api_key: the key the client was given for this model, if any.
        api_base: the base URL the client was given for this model, if any.
        environ: where the provider's variables are read.
    """
    if api_key or api_base or is_embedded(model):
        return ()
    if "/" not in model:  # a bare name: litellm knows which provider it belongs to
        names = _litellm_lookup(model)
        return () if any(environ.get(name) for name in names) else names
    provider = provider_of(model)
    if provider in NO_KEY or provider in OTHER_SOURCES:
        return ()
    if provider in ("openai", "hosted_vllm") and any(endpoint_from_env(model, environ)):
        return ()  # a base URL of its own (a local server may need no key), or the key
    names = KEY_VARIABLES.get(provider) or _litellm_lookup(model)
    return () if any(environ.get(name) for name in names) else names


def require_credential(model: str, params: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> None:
    """Raise MissingCredential when `model`, called with `params` (its `api_key`, `api_base`),
    needs a key that `environ` (default `os.environ`) does not hold either."""
    missing = missing_credential(
        model,
        api_key=params.get("api_key"),
        api_base=params.get("api_base"),
        environ=os.environ if environ is None else environ,
    )
    if missing:
        raise MissingCredential(model, missing)


def _litellm_lookup(model: str) -> tuple[str, ...]:
    """The variables litellm says `model`'s provider reads and finds unset; () where it knows none."""
    from selfpara.models.litellm_import import import_litellm

    try:
        found = import_litellm().validate_environment(model=model)
    except Exception:  # a provider litellm cannot resolve: its call reports that, not this check
        return ()
    if found.get("keys_in_environment", True):
        return ()
    return tuple(str(name) for name in found.get("missing_keys") or ())
