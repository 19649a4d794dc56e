"""The one door to models, and everything behind it. Never imports the pipeline or the settings.

- `client`: `ModelClient`, the door: timeouts, retries, a concurrency limit, usage accounting,
  the call cache, key redaction; it picks a backend per model.
- `backends`: what a backend is (`Backend`, `RawBackend`); `http_backend` (a lean OpenAI-API
  client) and `litellm_backend` (any provider litellm reaches) are the network ones;
  `upstream_data` checks what an upstream sends.
- `engines/`: embedded models in process (llama.cpp); `cache/`: the call cache and its stores;
  `routing/`: several deployments of one model.
- `names`: what a model string says (embedded, provider, OpenAI-compatible).
"""

from selfpara.models.backends import Backend, RawBackend
from selfpara.models.cache import CallCache, cacheable, call_key
from selfpara.models.cache.sqlite_store import SQLiteStore
from selfpara.models.client import ModelClient
from selfpara.models.names import EMBEDDED_MODEL, is_embedded

__all__ = [
    "EMBEDDED_MODEL",
    "Backend",
    "CallCache",
    "ModelClient",
    "RawBackend",
    "SQLiteStore",
    "cacheable",
    "call_key",
    "is_embedded",
]
