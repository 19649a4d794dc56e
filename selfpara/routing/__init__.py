"""Several deployments of one model behind one client: a litellm `model_list` file
(`config`), served by a lean pool on the http transport (`pool`) or by litellm's Router
(`litellm_router`). `build_routes` gives ModelClient the backend of each routed model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from selfpara.backends import Backend
from selfpara.cache.keys import tenant
from selfpara.http_backend import HttpTransport
from selfpara.routing.config import Deployment, RouterConfig, load_router_config
from selfpara.routing.pool import DEFAULT_ALLOWED_FAILS, DEFAULT_COOLDOWN_S, DEFAULT_NUM_RETRIES, DeploymentPool

if TYPE_CHECKING:
    from selfpara.routing.litellm_router import RouterBackend

__all__ = ["Deployment", "DeploymentPool", "RouterConfig", "build_routes", "group_tenant", "load_router_config"]


def group_tenant(deployments: list[Deployment]) -> str:
    """The call cache's tenant of a group (`selfpara.cache.tenant`): of every deployment's address and key,
    so that groups of other servers or other keys share no entry."""
    parts = sorted(
        tenant(d.api_base or d.model, d.api_key.get_secret_value() if d.api_key else None) for d in deployments
    )
    return tenant("\n".join(parts), None)


def build_routes(config: RouterConfig, models: list[str], *, transport: str, http: HttpTransport) -> dict[str, Backend]:
    """The backend of each model in `models` that the config has a group for.

    Args:
        config: the router config.
        models: model strings the client will be asked for (the upstream, its judge, ...).
        transport: the upstream's transport setting (auto, http, litellm; see
            `RouterConfig.transport_for`).
        http: the connection pool the lean pools share.

    Raises ConfigError when transport http cannot serve a group, or litellm's Router
    refuses the config.
    """
    routes: dict[str, Backend] = {}
    backends: dict[str, Backend] = {}
    router: Any = None
    settings = config.router_settings
    for model in models:
        group = config.group_for(model)
        if group is None:
            continue
        if group not in backends:
            backend: DeploymentPool | RouterBackend
            if config.transport_for(group, transport) == "http":
                backend = DeploymentPool(
                    group,
                    config.groups()[group],
                    http,
                    routing_strategy=settings.get("routing_strategy", "simple-shuffle"),
                    allowed_fails=settings.get("allowed_fails", DEFAULT_ALLOWED_FAILS),
                    cooldown_s=float(settings.get("cooldown_time", DEFAULT_COOLDOWN_S)),
                    num_retries=settings.get("num_retries", DEFAULT_NUM_RETRIES),
                )
            else:
                from selfpara.routing.litellm_router import RouterBackend, build_router

                router = router or build_router(config)
                backend = RouterBackend(router, group)
            backend.cache_tenant = group_tenant(config.groups()[group])
            backends[group] = backend
        routes[model] = backends[group]
    return routes
