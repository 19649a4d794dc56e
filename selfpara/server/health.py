"""The routes that are not chat: /health, /ready (readiness of the upstream), /metrics,
/v1/models and /v1/models/{id}.

/health is open (liveness: the process answers; it touches nothing). /ready probes the
upstream, so it needs the proxy key when one is set (an open /ready would let anyone
make the proxy call its upstream) and its result, good or bad, is reused for
`ready_cache_s`: the upstream sees at most one probe per period however often it is
called. With a router config, it probes every deployment of the upstream's group and is
ready when one answers. /metrics needs the key too when one is set: its counts tell how
the proxy is used (Prometheus sends it with `authorization: {credentials: ...}`); the series
that would tell a client whether a question was asked before (the cache's hits, the upstream
calls) need the operator's metrics key (`metrics_key`), which no client holds."""

from __future__ import annotations

import asyncio
import hmac
import time
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse, Response
from pydantic import SecretStr

from selfpara.models.names import is_embedded
from selfpara.server.errors import ProxyError, error_response
from selfpara.server.plan import check_auth
from selfpara.server.schema import ModelCard, ModelList
from selfpara.server.settings import ServerSettings, upstream_api_key, upstream_base_url
from selfpara.server.state import Proxy


def _refused(request: Request, proxy: Proxy) -> Response | None:
    """The 401 for a request without the proxy's key, or None when it may proceed."""
    try:
        check_auth(request, proxy.settings)
    except ProxyError as err:
        return error_response(err)
    return None


async def health() -> dict[str, str]:
    return {"status": "ok"}


async def ready(request: Request) -> Response:
    proxy: Proxy = request.app.state.proxy
    if (refused := _refused(request, proxy)) is not None:
        return refused
    ok, detail = await readiness(proxy)
    return JSONResponse({"status": "ready" if ok else "not_ready", **detail}, status_code=200 if ok else 503)


async def metrics(request: Request) -> Response:
    """GET /metrics: the app's Prometheus metrics in the text exposition format; the operator's series
    (the cache's hits, the upstream calls: `ProxyMetrics`) only to the metrics key."""
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    proxy: Proxy = request.app.state.proxy
    assert proxy.metrics is not None  # the route exists only with metrics on
    text = generate_latest(proxy.metrics.registry)
    if _bearer_is(request, proxy.settings.metrics_key):
        text += generate_latest(proxy.metrics.operator_registry)
    elif (refused := _refused(request, proxy)) is not None:
        return refused
    return Response(text, headers={"Content-Type": CONTENT_TYPE_LATEST})


def _bearer_is(request: Request, key: SecretStr | None) -> bool:
    """Whether the request sends `key` as its bearer token (compared in constant time; False without a key)."""
    if key is None:
        return False
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), key.get_secret_value().encode())


async def models(request: Request) -> Response:
    proxy: Proxy = request.app.state.proxy
    if (refused := _refused(request, proxy)) is not None:
        return refused
    cards = [ModelCard(id=name, created=proxy.started) for name in proxy.settings.model_names()]
    return JSONResponse(ModelList(data=cards).model_dump())


async def model(request: Request) -> Response:
    """GET /v1/models/{id}: the card of a name this proxy serves (any name with --any-model), else 404."""
    proxy: Proxy = request.app.state.proxy
    name = request.path_params["model_id"]
    try:
        check_auth(request, proxy.settings)
        if not proxy.settings.serves(name):
            raise ProxyError(
                404,
                f"unknown model {name!r}; this proxy serves {proxy.settings.model_names()}",
                param="model",
                code="model_not_found",
            )
    except ProxyError as err:
        return error_response(err)
    return JSONResponse(ModelCard(id=name, created=proxy.started).model_dump())


async def readiness(proxy: Proxy) -> tuple[bool, dict[str, Any]]:
    """(ready, detail), reusing a result younger than `ready_cache_s`; concurrent callers share one probe."""
    if proxy.ready_lock is None:
        proxy.ready_lock = asyncio.Lock()
    async with proxy.ready_lock:
        now = time.monotonic()
        if proxy.ready_cache and now - proxy.ready_cache[0] < proxy.settings.ready_cache_s:
            return proxy.ready_cache[1], proxy.ready_cache[2]
        ok, detail = await _check(proxy)
        proxy.ready_cache = (time.monotonic(), ok, detail)
        return ok, detail


async def _check(proxy: Proxy) -> tuple[bool, dict[str, Any]]:
    settings = proxy.settings
    model = settings.upstream.model
    checks: dict[str, str] = {}
    ok = True
    if is_embedded(model):
        try:
            loaded = bool(getattr(proxy.client.backend_for(model), "is_loaded", False))
        except Exception as exc:
            loaded = False
            proxy.preload_error = proxy.preload_error or f"{type(exc).__name__}"
        if proxy.preload_error:
            checks["embedded_model"] = f"failed: {proxy.preload_error}"
        else:
            checks["embedded_model"] = "loaded" if loaded else "loading"
        ok = loaded
    elif proxy.custom_client:
        checks["upstream"] = "in-process backend"
    elif settings.router_config is not None:
        ok, checks = await _probe_deployments(settings)
    else:
        base = upstream_base_url(settings)
        if base is None:
            checks["upstream"] = "not checked (provider endpoint)"
        else:
            ok, checks["upstream"] = await probe(base, model, settings)
    detail: dict[str, Any] = {"model": model, "checks": checks}
    cache = proxy.client.cache
    if cache is not None:  # never a reason to be unready: without it calls go upstream
        state, why = cache.state()
        checks["cache"] = f"{cache.name}: {state}" + (f" ({why})" if why else "")
        detail["cache"] = {"store": cache.name, "state": state, "reason": why}
    return ok, detail


async def _probe_deployments(settings: ServerSettings) -> tuple[bool, dict[str, str]]:
    """Probe every deployment of the upstream's group at once; ready when one answers."""
    assert settings.router_config is not None
    group = settings.router_config.groups()[settings.router_group()]
    with_base = [d for d in group if d.api_base]
    results = await asyncio.gather(
        *(
            probe(d.api_base, d.model, settings, key=d.api_key.get_secret_value() if d.api_key else None)
            for d in with_base
            if d.api_base
        )
    )
    checks = {f"deployment {d.label}": detail for d, (_, detail) in zip(with_base, results, strict=True)}
    for d in group:
        if not d.api_base:
            checks[f"deployment {d.label}"] = "not checked (provider endpoint)"
    ok = any(up for up, _ in results) or len(with_base) < len(group)
    return ok, checks


async def probe(base: str, model: str, settings: ServerSettings, *, key: str | None = None) -> tuple[bool, str]:
    """Whether `base` answers `GET /models` (`/api/tags` for Ollama) with `key`
    (default: the upstream's key)."""
    import httpx

    base = base.rstrip("/")
    url = f"{base}/api/tags" if model.startswith(("ollama/", "ollama_chat/")) else f"{base}/models"
    key = key or upstream_api_key(settings)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        async with httpx.AsyncClient(timeout=min(5.0, settings.upstream.call_timeout_s)) as http:
            response = await http.get(url, headers=headers)
    except httpx.HTTPError as exc:
        return False, f"unreachable ({type(exc).__name__})"
    if response.status_code in (401, 403):
        return False, f"reachable, but it rejected the key (HTTP {response.status_code})"
    if response.status_code >= 500:
        return False, f"reachable, but failing (HTTP {response.status_code})"
    return True, "reachable"
