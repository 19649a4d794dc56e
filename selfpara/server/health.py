"""The routes that are not chat: /health, /ready (readiness of the upstream) and /v1/models."""

from __future__ import annotations

import time
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse, Response

from selfpara.config import is_embedded
from selfpara.server.errors import ProxyError, error_response
from selfpara.server.plan import check_auth
from selfpara.server.schema import ModelCard, ModelList
from selfpara.server.settings import ServerSettings, upstream_api_key, upstream_base_url
from selfpara.server.state import Proxy


async def health() -> dict[str, str]:
    return {"status": "ok"}


async def ready(request: Request) -> JSONResponse:
    ok, detail = await readiness(request.app.state.proxy)
    return JSONResponse({"status": "ready" if ok else "not_ready", **detail}, status_code=200 if ok else 503)


async def models(request: Request) -> Response:
    proxy: Proxy = request.app.state.proxy
    try:
        check_auth(request, proxy.settings)
    except ProxyError as err:
        return error_response(err)
    cards = [ModelCard(id=name, created=proxy.started) for name in proxy.settings.model_names()]
    return JSONResponse(ModelList(data=cards).model_dump())


async def readiness(proxy: Proxy) -> tuple[bool, dict[str, Any]]:
    settings = proxy.settings
    now = time.monotonic()
    if proxy.ready_cache and now - proxy.ready_cache[0] < settings.ready_cache_s:
        return proxy.ready_cache[1], proxy.ready_cache[2]
    model = settings.upstream.model
    checks: dict[str, str] = {}
    ok = True
    if is_embedded(model):
        try:
            from selfpara import local

            loaded = bool(getattr(local.embedded_backend(), "is_loaded", False))
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
    else:
        base = upstream_base_url(settings)
        if base is None:
            checks["upstream"] = "not checked (provider endpoint)"
        else:
            ok, checks["upstream"] = await probe(base, model, settings)
    detail = {"model": model, "checks": checks}
    if ok:  # cache only good news: a recovering upstream is noticed on the next probe
        proxy.ready_cache = (now, ok, detail)
    return ok, detail


async def probe(base: str, model: str, settings: ServerSettings) -> tuple[bool, str]:
    import httpx

    base = base.rstrip("/")
    url = f"{base}/api/tags" if model.startswith(("ollama/", "ollama_chat/")) else f"{base}/models"
    key = upstream_api_key(settings)
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
