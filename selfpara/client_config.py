"""The ModelClient a WrapConfig describes.

Kept apart from `selfpara.llm` so that the model door never imports the settings: the
config validates names against the equivalence registry, whose LLM judge types the client,
and a client that read the config would close that circle.
"""

from __future__ import annotations

from typing import Any

from selfpara.cache import open_call_cache
from selfpara.config import WrapConfig
from selfpara.llm import ModelClient
from selfpara.model_names import provider_of


def client_from_config(config: WrapConfig, **changes: Any) -> ModelClient:
    """The client `config` describes: its base URL, key, timeout, retries, concurrency, call
    cache and transport, with the base URL and key sent only to the answering model's provider.

    Args:
        config: the settings to read.
        **changes: `ModelClient` arguments that replace what `config` gives (e.g.
            `concurrency=`, `backoff_s=`, `http=`, `backend=`, or `provider=None` to send the
            base URL and key to every model, `cache=None` for no cache).
    """
    if "cache" not in changes:
        changes["cache"] = open_call_cache(
            config.cache,
            size=config.cache_size,
            ttl_s=config.cache_ttl_s,
            # a Redis connection per call in flight: lookups beyond it wait for one
            max_connections=int(changes.get("concurrency", config.concurrency)),
        )
    values: dict[str, Any] = {
        "api_base": config.api_base,
        "api_key": config.api_key.get_secret_value() if config.api_key else None,
        "timeout_s": config.call_timeout_s,
        "retries": config.retries,
        "concurrency": config.concurrency,
        "provider": provider_of(config.model),
        "transport": config.transport,
    }
    return ModelClient(**{**values, **changes})
