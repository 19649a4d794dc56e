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
from selfpara.models.client import ModelClient

__all__ = ["Backend", "ModelClient", "RawBackend"]
