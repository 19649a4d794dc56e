"""The proxy's per-app state: the shared model client, the request gate, model preloading.

One `Proxy` per app (built by `create_app`); nothing is kept in module globals.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from selfpara.models.cache import open_call_cache
from selfpara.models.client import ModelClient
from selfpara.models.http_backend import HttpSessions
from selfpara.paraphraser import client_from_config
from selfpara.server.metrics import ProxyMetrics
from selfpara.server.settings import ServerSettings
from selfpara.util.redaction import redact

log = logging.getLogger("selfpara.server")


class Slot:
    """One taken place under the gate. `release` runs once however often it is called;
    `handed_off` marks that a streaming response took it over (and releases it on close)."""

    def __init__(self, gate: Gate) -> None:
        self._gate = gate
        self._released = False
        self.handed_off = False

    def release(self) -> None:
        if not self._released:
            self._released = True
            self._gate.active -= 1


class Gate:
    """The proxy's own concurrency limit: a request beyond it is refused at once (429).

    The proxy runs on one event loop, so a plain counter is exact without a lock.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.active = 0

    def try_enter(self) -> Slot | None:
        if self.active >= self.limit:
            return None
        self.active += 1
        return Slot(self)


@dataclass
class Proxy:
    settings: ServerSettings
    client: ModelClient
    paraphraser: Any  # SelfParaphraser
    gate: Gate
    custom_client: bool  # a caller-supplied client (tests, benchmarks): no probing, no warm-up, not closed here
    started: int = field(default_factory=lambda: int(time.time()))
    ready_cache: tuple[float, bool, dict[str, Any]] | None = None
    ready_lock: asyncio.Lock | None = None
    preload_task: asyncio.Task[None] | None = None
    preload_error: str | None = None
    metrics: ProxyMetrics | None = None  # None when settings.metrics is off

    @property
    def secrets(self) -> list[str | None]:
        return self.settings.secrets()


def default_client(settings: ServerSettings) -> ModelClient:
    """The one client every request's upstream calls go through; with a router config, the
    upstream (and a judge or paraphrase model the config also names) goes to its deployments.

    Raises ConfigError for a transport that cannot reach the upstream or a deployment."""
    cfg = settings.upstream
    settings.resolved_transport()  # a forced http transport without a base URL fails now, not on a request
    # Made now so that per-request clients (selfpara.api_base) and deployment pools share its connections.
    http = HttpSessions(
        max_connections=settings.upstream_concurrency, max_response_bytes=settings.max_upstream_response_bytes
    )
    concurrency = max(cfg.concurrency, settings.upstream_concurrency)
    routes: dict[str, Any] = {}
    if settings.router_config is not None:
        from selfpara.models.routing import build_routes

        models = [m for m in (cfg.model, cfg.judge_model, cfg.paraphrase_model) if m]
        routes = build_routes(settings.router_config, models, transport=cfg.transport, http=http)
    cache = open_call_cache(
        cfg.cache,
        size=cfg.cache_size,
        ttl_s=cfg.cache_ttl_s,
        max_bytes=settings.cache_max_bytes,
        max_connections=settings.cache_max_connections or concurrency,
        pool_timeout_s=settings.cache_pool_timeout_s,
    )
    return client_from_config(
        cfg,
        # One client serves every request, so its limit is the proxy's, not one wrapper's.
        concurrency=concurrency,
        backoff_s=settings.backoff_s,
        http=http,
        routes=routes,
        cache=cache,
    )


async def warm_litellm(model: str) -> None:
    """Import litellm and run one mock call before the first request arrives.

    Importing litellm takes seconds and its first call builds clients lazily; done inside
    a request, that time blocks the event loop and eats into the upstream timeout.
    """
    started = time.perf_counter()
    try:
        from selfpara.models.litellm_import import import_litellm

        warm_up = [{"role": "user", "content": "warm-up"}]
        await import_litellm().acompletion(model=model, messages=warm_up, mock_response="ok")
    except Exception as exc:  # warming is an optimisation only
        log.debug("litellm warm-up failed: %s", type(exc).__name__)
    log.info("litellm ready in %.1fs", time.perf_counter() - started)


async def preload(proxy: Proxy) -> None:
    try:
        backend = proxy.client.backend_for(proxy.settings.upstream.model)
        load = getattr(backend, "load", None)
        if load is not None:
            await asyncio.to_thread(load)
    except Exception as exc:  # readiness reports it; requests will raise it themselves
        proxy.preload_error = redact(f"{type(exc).__name__}: {exc}", proxy.secrets)
        log.error("embedded model failed to load: %s", proxy.preload_error)
