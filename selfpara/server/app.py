"""The OpenAI-compatible proxy: a thin HTTP shell over `SelfParaphraser.aanswer`.

    app = create_app(ServerSettings(upstream=build_config(model="openai/llama3", api_base=...)))
    uvicorn.run(app)

All state lives in the app built by `create_app` (one `Proxy` per app, see `state`);
per-request state lives in the handler's locals. Nothing is kept in module globals.
The routes live in `chat` (chat completions, deciding each request in `plan`),
`responses` (the Responses API), `completions` (text completions, passed through) and
`health` (health, readiness, metrics, model list and card); what the POST routes share
is in `endpoint`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import uuid
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from selfpara.models.client import ModelClient
from selfpara.models.names import is_embedded
from selfpara.server import chat, completions, health, responses
from selfpara.server.errors import ProxyError, error_response, for_status
from selfpara.server.hosts import HostCheckMiddleware
from selfpara.server.metrics import MetricsMiddleware, ProxyMetrics
from selfpara.server.settings import ServerSettings
from selfpara.server.state import Gate, Proxy, default_client, preload, warm_litellm
from selfpara.server.streaming import DONE, error_event, responses_error_event
from selfpara.util.envvars import SERVE_SPEC_ENV

log = logging.getLogger("selfpara.server")

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


def create_app(settings: ServerSettings | None = None, *, client: ModelClient | None = None) -> FastAPI:
    """Build the proxy app.

    Args:
        settings: the upstream, the proxy key and the limits (default: the embedded model).
        client: the model door for every upstream call (default: one built from
            `settings`); pass one to plug in a fake backend or share a limit. With
            metrics on, the app observes its calls (it sets `client.observer` when unset).
    """
    from selfpara.paraphraser import SelfParaphraser

    settings = settings or ServerSettings()
    custom = client is not None
    if client is None:
        client = default_client(settings)
    proxy = Proxy(
        settings=settings,
        client=client,
        paraphraser=SelfParaphraser(settings.upstream, client=client),
        gate=Gate(settings.max_concurrent_requests),
        custom_client=custom,
    )
    if settings.metrics:
        proxy.metrics = ProxyMetrics(in_flight=lambda: proxy.gate.active, client=client)
        if client.observer is None:
            client.observer = proxy.metrics.observe_call

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if settings.preload and is_embedded(settings.upstream.model):
            proxy.preload_task = asyncio.create_task(preload(proxy))
        elif not proxy.custom_client and "litellm" in settings.resolved_transport():
            await warm_litellm(settings.upstream.model)
        log.info(
            "selfpara proxy serving %s%s (k=%d, auth=%s, max_concurrent=%d, transport=%s)",
            settings.upstream.model,
            _deployments(settings),
            settings.upstream.k,
            "on" if settings.api_key else "off",
            settings.max_concurrent_requests,
            "custom" if proxy.custom_client else settings.resolved_transport(),
        )
        yield
        if proxy.preload_task is not None and not proxy.preload_task.done():
            proxy.preload_task.cancel()
        if not proxy.custom_client:
            await proxy.client.aclose()

    app = FastAPI(title="selfpara proxy", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.proxy = proxy
    app.add_middleware(HostCheckMiddleware, patterns=settings.allowed_hosts)  # inside: its 400 gets the request id
    app.add_middleware(_RequestIdMiddleware)
    if proxy.metrics is not None:  # outermost: it sees the request-id layer's 500s too
        app.add_middleware(MetricsMiddleware, metrics=proxy.metrics)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = f"{request.method} {request.url.path}: {exc.detail}"
        return error_response(for_status(exc.status_code, message))

    app.add_api_route("/health", health.health, methods=["GET"])
    app.add_api_route("/ready", health.ready, methods=["GET"])
    if proxy.metrics is not None:
        app.add_api_route("/metrics", health.metrics, methods=["GET"])
    # Many clients are configured with the base URL without /v1: serve both.
    for prefix in ("/v1", ""):
        app.add_api_route(f"{prefix}/models", health.models, methods=["GET"])
        app.add_api_route(f"{prefix}/models/{{model_id:path}}", health.model, methods=["GET"])
        app.add_api_route(f"{prefix}/chat/completions", chat.chat_completions, methods=["POST"])
        app.add_api_route(f"{prefix}/completions", completions.completions, methods=["POST"])
        app.add_api_route(f"{prefix}/responses", responses.responses, methods=["POST"])
    return app


def _deployments(settings: ServerSettings) -> str:
    """' over N deployments (router config F)' for the startup line, or ''."""
    config = settings.router_config
    if config is None:
        return ""
    return f" over {len(config.groups()[settings.router_group()])} deployments (router config {config.path})"


class _RequestIdMiddleware:
    """Gives every request an id (the client's `X-Request-Id` when sane, else a new one),
    puts it in `request.state.request_id` and on every response, errors included.

    It is also the last line of defence: an unexpected exception becomes a JSON 500 (with
    the id) or, once an event stream has started, an error event and `[DONE]`; a request
    cancelled by the server's shutdown (after its grace period) gets a JSON 503, or an
    error event and `[DONE]` on a stream, instead of a plain-text 500 or a cut stream."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"x-request-id"), None)
        rid = given if given and _REQUEST_ID.match(given) else uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = rid

        sent = {"started": False, "stream": False, "finished": False}

        async def send_with_id(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"x-request-id"]
                message = {**message, "headers": [*headers, (b"x-request-id", rid.encode())]}
                sent["started"] = True
                sent["stream"] = any(
                    k.lower() == b"content-type" and v.startswith(b"text/event-stream") for k, v in headers
                )
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                sent["finished"] = True
            await send(message)

        async def fail(err: ProxyError) -> None:
            if sent["finished"]:
                return
            if not sent["started"]:
                await send_with_id(
                    {
                        "type": "http.response.start",
                        "status": err.status,
                        "headers": [(b"content-type", b"application/json")],
                    }
                )
                await send_with_id({"type": "http.response.body", "body": json.dumps(err.body()).encode()})
            elif sent["stream"]:
                # In the stream's own format: a Responses stream's client skips the chat form as unknown.
                responses_api = str(scope.get("path", "")).rstrip("/").endswith("/responses")
                last = responses_error_event(err.body()) if responses_api else error_event(err.body()) + DONE
                await send_with_id({"type": "http.response.body", "body": last, "more_body": True})
                await send_with_id({"type": "http.response.body", "body": b""})

        try:
            await self.app(scope, receive, send_with_id)
        except asyncio.CancelledError:
            # uvicorn cancels the requests still running when the shutdown grace period ends
            log.warning("request_id=%s cancelled by the server's shutdown", rid, extra={"request_id": rid})
            call = scope["state"].get("call")
            if call is not None and not call.logged:  # a stream logs its own end (GuardedStream)
                call.cut_by_shutdown()
            with contextlib.suppress(Exception):
                await fail(
                    ProxyError(
                        503,
                        f"the proxy is shutting down; retry (request id {rid})",
                        type="server_error",
                        code="shutting_down",
                    )
                )
        except Exception:
            log.exception("request_id=%s unexpected error on %r", rid, scope.get("path"), extra={"request_id": rid})
            with contextlib.suppress(Exception):
                await fail(
                    ProxyError(500, f"internal error (request id {rid})", type="server_error", code="internal_error")
                )


def app_from_env() -> FastAPI:
    """App factory for several worker processes (`selfpara serve --workers N`, or
    `uvicorn --factory selfpara.server.app:app_from_env`): each worker rebuilds the
    settings from the JSON in $SELFPARA_SERVE_SPEC (`load_settings` arguments under `settings`, plus
    `log_format` / `verbose`; keys are read from the environment, never from the spec)."""
    import os

    from selfpara.server.logs import setup_server_logging
    from selfpara.server.settings import load_settings

    spec = json.loads(os.environ.get(SERVE_SPEC_ENV) or "{}")
    settings = load_settings(**spec.get("settings", {}))
    if spec.get("log_format"):
        setup_server_logging(spec["log_format"], bool(spec.get("verbose")), settings.secrets())
    return create_app(settings)
