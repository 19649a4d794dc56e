"""Deployment groups served by litellm's Router: any provider, every routing strategy,
fallbacks between groups, litellm's cooldown rules. Used for the groups the lean pool
cannot serve as written (`RouterConfig.transport_for`), or all groups with transport litellm.
"""

from __future__ import annotations

from typing import Any

from selfpara._litellm import import_litellm
from selfpara.errors import ConfigError
from selfpara.litellm_backend import LiteLLMBackend
from selfpara.redaction import redact
from selfpara.routing.config import RouterConfig


def build_router(config: RouterConfig) -> Any:
    """A litellm Router over every deployment of `config` (fallbacks may name any group),
    with its router_settings. ConfigError when litellm refuses them."""
    litellm = import_litellm()
    settings = dict(config.router_settings)
    try:
        return litellm.Router(model_list=[d.litellm_entry() for d in config.deployments], **settings)
    except Exception as exc:  # a TypeError for an unknown setting, a ValueError for a bad value
        secrets: list[str | None] = [*config.secrets()]
        message = redact(f"{type(exc).__name__}: {exc}".splitlines()[0][:300], secrets)
        raise ConfigError(f"router config {config.path}: litellm's Router refused it ({message})") from None


class RouterBackend(LiteLLMBackend):
    """A `selfpara.backends.RawBackend` that sends every call for a model to one group of a
    litellm Router. The Router retries on other deployments (its `num_retries`) and cools
    failing ones down; ModelClient's retries come on top. The call's base URL and key are
    dropped: each deployment has its own.

    Args:
        router: the litellm Router.
        group: the model_name calls are sent to.
    """

    cache_tenant = ""  # set by build_routes: the group's fingerprint for the call cache

    def __init__(self, router: Any, group: str) -> None:
        super().__init__()  # the Router's own clients read its replies (uncapped until in: docs/proxy.md)
        self.router = router
        self.group = group

    def _call(self, endpoint: str) -> Any:
        return self.router.acompletion if endpoint == "chat/completions" else self.router.atext_completion

    async def _target(self, model: str, params: dict[str, Any]) -> dict[str, Any]:
        return {"model": self.group, **{k: v for k, v in params.items() if k not in ("api_base", "api_key")}}
