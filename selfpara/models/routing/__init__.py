"""Several deployments of one model behind one client: a litellm `model_list` file
(`model_list`), served by a pool (`pool`) whose deployments are each reached over the lean
http transport or, where it cannot reach one as written, through litellm
(`litellm_deployment`). `build_routes` gives ModelClient the backend of each routed model.
"""

from __future__ import annotations

import logging

from selfpara.models.backends import Backend, RawBackend
from selfpara.models.cache.keys import tenant
from selfpara.models.http_backend import HttpBackend, HttpSessions, endpoint_from_env
from selfpara.models.routing.model_list import Deployment, RouterConfig, load_router_config
from selfpara.models.routing.pool import DEFAULT_ALLOWED_FAILS, DEFAULT_COOLDOWN_S, DEFAULT_NUM_RETRIES, DeploymentPool

__all__ = [
    "Deployment",
    "DeploymentPool",
    "RouterConfig",
    "build_pool",
    "build_routes",
    "group_tenant",
    "load_router_config",
]

log = logging.getLogger(__name__)


def group_tenant(deployments: list[Deployment]) -> str:
    """The call cache's tenant of a group (`selfpara.models.cache.tenant`): of every deployment's address and
    key, so that groups of other servers or other keys share no entry."""
    parts = sorted(
        tenant(d.api_base or d.model, d.api_key.get_secret_value() if d.api_key else None) for d in deployments
    )
    return tenant("\n".join(parts), None)


def build_routes(config: RouterConfig, models: list[str], *, transport: str, http: HttpSessions) -> dict[str, Backend]:
    """The backend of each model in `models` that the config has a group for (one pool per group).

    Args:
        config: the router config.
        models: model strings the client will be asked for (the upstream, its judge, ...).
        transport: the upstream's transport setting (auto, http, litellm; see `RouterConfig.over_http`).
        http: the connection pool the http deployments share.

    Raises ConfigError when transport http cannot reach a deployment.
    """
    routes: dict[str, Backend] = {}
    pools: dict[str, DeploymentPool] = {}
    for model in models:
        group = config.group_for(model)
        if group is None:
            continue
        if group not in pools:
            pools[group] = build_pool(config, group, transport=transport, http=http)
        routes[model] = pools[group]
    return routes


def build_pool(config: RouterConfig, group: str, *, transport: str, http: HttpSessions) -> DeploymentPool:
    """The pool of `group`, with the config's router_settings and each deployment's backend."""
    deployments = config.groups()[group]
    backends: list[RawBackend] = []
    for d, over_http in zip(deployments, config.over_http(group, transport), strict=True):
        if over_http:
            # Without its own key, a deployment gets its provider variable's, as a single upstream does.
            key = d.api_key.get_secret_value() if d.api_key else endpoint_from_env(d.model)[1]
            backends.append(HttpBackend(http, d.api_base, key))
        else:
            from selfpara.models.routing.litellm_deployment import LiteLLMDeployment

            backends.append(LiteLLMDeployment(d))
        how = "http" if over_http else "litellm" if transport == "litellm" else f"litellm: {d.http_misfit()}"
        log.info("%s: deployment %s over %s", group, d.label, how)
    settings = config.router_settings
    pool = DeploymentPool(
        group,
        deployments,
        backends,
        routing_strategy=settings.get("routing_strategy", "simple-shuffle"),
        allowed_fails=settings.get("allowed_fails", DEFAULT_ALLOWED_FAILS),
        cooldown_s=float(settings.get("cooldown_time", DEFAULT_COOLDOWN_S)),
        num_retries=settings.get("num_retries", DEFAULT_NUM_RETRIES),
    )
    pool.cache_tenant = group_tenant(deployments)
    return pool
