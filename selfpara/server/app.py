"""The OpenAI-compatible proxy: a thin HTTP shell over `SelfParaphraser.aanswer`.

    app = create_app(ServerSettings(upstream=build_config(model="openai/llama3", api_base=...)))
    uvicorn.run(app)

All state lives in the app built by `create_app` (one `_Proxy` per app); per-request state
lives in the handler's locals. Nothing is kept in module globals.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import re
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import SecretStr, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from selfpara.config import WrapConfig, build_config, is_embedded
from selfpara.errors import ConfigError, SelfparaError
from selfpara.llm import ModelClient, redact
from selfpara.result import WrappedAnswer
from selfpara.server import passthrough
from selfpara.server.errors import ProxyError, bad_request, error_response, for_status, from_selfpara
from selfpara.server.schema import (
    ChatCompletion,
    ChatCompletionRequest,
    Choice,
    CompletionUsage,
    ModelCard,
    ModelList,
    ResponseMessage,
)
from selfpara.server.settings import ServerSettings, upstream_api_key, upstream_base_url
from selfpara.server.streaming import DONE, KEEPALIVE, answer_events, error_event, event
from selfpara.server.transport import HttpBackend, HttpTransport, supports

log = logging.getLogger("selfpara.server")

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
# Top-level request fields the wrapped path honours; the rest are listed as ignored.
_WRAPPED_FIELDS = {
    "model", "messages", "stream", "stream_options", "temperature", "max_tokens", "max_completion_tokens",
    "selfpara", "n", "user", "tools", "tool_choice", "functions", "function_call", "response_format",
}


# ---- per-app state -----------------------------------------------------------------------


class _Slot:
    """One taken place under the gate. `release` runs once however often it is called;
    `handed_off` marks that a streaming response took it over (and releases it on close)."""

    def __init__(self, gate: _Gate) -> None:
        self._gate = gate
        self._released = False
        self.handed_off = False

    def release(self) -> None:
        if not self._released:
            self._released = True
            self._gate.active -= 1


class _Gate:
    """The proxy's own concurrency limit: a request beyond it is refused at once (429).

    The proxy runs on one event loop, so a plain counter is exact without a lock.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.active = 0

    def try_enter(self) -> _Slot | None:
        if self.active >= self.limit:
            return None
        self.active += 1
        return _Slot(self)


@dataclass
class _Proxy:
    settings: ServerSettings
    client: ModelClient
    paraphraser: Any  # SelfParaphraser
    gate: _Gate
    transport: HttpTransport | None  # the lean OpenAI-API transport, when in use
    custom_client: bool  # a caller-supplied client (tests, benchmarks): no probing, no warm-up
    started: int = field(default_factory=lambda: int(time.time()))
    ready_cache: tuple[float, bool, dict[str, Any]] | None = None
    preload_task: asyncio.Task[None] | None = None
    preload_error: str | None = None

    @property
    def secrets(self) -> list[str | None]:
        return self.settings.secrets()


def _server_key(cfg: WrapConfig) -> str | None:
    return cfg.api_key.get_secret_value() if cfg.api_key else None


def _default_client(settings: ServerSettings) -> tuple[ModelClient, HttpTransport | None]:
    cfg = settings.upstream
    transport: HttpTransport | None = None
    backend = None
    if settings.resolved_transport() == "http":
        base = upstream_base_url(settings)
        if not base:
            raise ConfigError("upstream_transport http needs the upstream's base URL (api_base or OPENAI_API_BASE)")
        transport = HttpTransport(base, upstream_api_key(settings), max_connections=settings.upstream_concurrency)
        backend = HttpBackend(transport, fallback=_Fallback())
    client = ModelClient(
        api_base=cfg.api_base,
        api_key=_server_key(cfg),
        timeout_s=cfg.call_timeout_s,
        retries=cfg.retries,
        # One client serves every request, so its limit is the proxy's, not one wrapper's.
        concurrency=max(cfg.concurrency, settings.upstream_concurrency),
        backoff_s=settings.backoff_s,
        backend=backend,
    )
    return client, transport


class _Fallback:
    """Backend for models the http transport does not reach (judge models of other providers,
    the embedded model): whatever ModelClient would choose by name."""

    def __init__(self) -> None:
        self._chooser = ModelClient()

    async def complete(self, model: str, messages: list[Any], params: dict[str, Any]) -> Any:
        return await self._chooser.backend_for(model).complete(model, messages, params)


# ---- the app -------------------------------------------------------------------------------


def create_app(settings: ServerSettings | None = None, *, client: ModelClient | None = None) -> FastAPI:
    """Build the proxy app.

    Args:
        settings: the upstream, the proxy key and the limits (default: the embedded model).
        client: the model door for every upstream call (default: one built from
            `settings`); pass one to plug in a fake backend or share a limit.
    """
    from selfpara.pipeline import SelfParaphraser

    settings = settings or ServerSettings()
    custom = client is not None
    transport: HttpTransport | None = None
    if client is None:
        client, transport = _default_client(settings)
    proxy = _Proxy(
        settings=settings,
        client=client,
        paraphraser=SelfParaphraser(settings.upstream, client=client),
        gate=_Gate(settings.max_concurrent_requests),
        transport=transport,
        custom_client=custom,
    )

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if settings.preload and is_embedded(settings.upstream.model):
            proxy.preload_task = asyncio.create_task(_preload(proxy))
        elif not proxy.custom_client and proxy.transport is None:
            await _warm_litellm(settings.upstream.model)
        log.info(
            "selfpara proxy serving %s (k=%d, auth=%s, max_concurrent=%d, transport=%s)",
            settings.upstream.model, settings.upstream.k, "on" if settings.api_key else "off",
            settings.max_concurrent_requests, "custom" if proxy.custom_client else settings.resolved_transport(),
        )
        yield
        if proxy.preload_task is not None and not proxy.preload_task.done():
            proxy.preload_task.cancel()
        if proxy.transport is not None:
            await proxy.transport.aclose()

    app = FastAPI(title="selfpara proxy", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.proxy = proxy
    app.add_middleware(_RequestIdMiddleware)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        message = f"{request.method} {request.url.path}: {exc.detail}"
        return error_response(for_status(exc.status_code, message))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error on %s", request.url.path)
        return error_response(ProxyError(500, "internal error", type="server_error", code="internal_error"))

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/ready")
    async def ready() -> JSONResponse:
        ok, detail = await _readiness(proxy)
        return JSONResponse({"status": "ready" if ok else "not_ready", **detail}, status_code=200 if ok else 503)

    @app.get("/v1/models")
    async def models(request: Request) -> Response:
        try:
            _check_auth(request, settings)
        except ProxyError as err:
            return error_response(err)
        cards = [ModelCard(id=name, created=proxy.started) for name in settings.model_names()]
        return JSONResponse(ModelList(data=cards).model_dump())

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request) -> Response:
        return await _chat(proxy, request)

    # Many clients are configured with the base URL without /v1.
    app.add_api_route("/chat/completions", chat_completions, methods=["POST"], include_in_schema=False)
    app.add_api_route("/models", models, methods=["GET"], include_in_schema=False)
    return app


class _RequestIdMiddleware:
    """Gives every request an id (the client's `X-Request-Id` when sane, else a new one),
    puts it in `request.state.request_id` and on every response, errors included."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"x-request-id"), None)
        rid = given if given and _REQUEST_ID.match(given) else uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = rid

        async def send_with_id(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"x-request-id"]
                message = {**message, "headers": [*headers, (b"x-request-id", rid.encode())]}
            await send(message)

        await self.app(scope, receive, send_with_id)


async def _warm_litellm(model: str) -> None:
    """Import litellm and run one mock call before the first request arrives.

    Importing litellm takes seconds and its first call builds clients lazily; done inside
    a request, that time blocks the event loop and eats into the upstream timeout.
    """
    started = time.perf_counter()
    try:
        import litellm

        await litellm.acompletion(model=model, messages=[{"role": "user", "content": "warm-up"}], mock_response="ok")
    except Exception as exc:  # warming is an optimisation only
        log.debug("litellm warm-up failed: %s", type(exc).__name__)
    log.info("litellm ready in %.1fs", time.perf_counter() - started)


SPEC_ENV = "SELFPARA_SERVE_SPEC"


def app_from_env() -> FastAPI:
    """App factory for several worker processes (`selfpara serve --workers N`, or
    `uvicorn --factory selfpara.server.app:app_from_env`): each worker rebuilds the
    settings from the JSON in $SELFPARA_SERVE_SPEC (`load_settings` arguments plus
    `log_format` / `verbose`; keys are read from the environment, never from the spec)."""
    import os

    from selfpara.server.logs import setup_server_logging
    from selfpara.server.settings import load_settings

    spec = json.loads(os.environ.get(SPEC_ENV) or "{}")
    settings = load_settings(
        spec.get("config_file"),
        upstream=spec.get("upstream"),
        server=spec.get("server"),
        api_key_env=spec.get("api_key_env"),
        upstream_key_env=spec.get("upstream_key_env"),
    )
    if spec.get("log_format"):
        setup_server_logging(spec["log_format"], bool(spec.get("verbose")), settings.secrets())
    return create_app(settings)


async def _preload(proxy: _Proxy) -> None:
    try:
        from selfpara import local

        backend = local.embedded_backend()
        load = getattr(backend, "load", None)
        if load is not None:
            await asyncio.to_thread(load)
    except Exception as exc:  # readiness reports it; requests will raise it themselves
        proxy.preload_error = redact(f"{type(exc).__name__}: {exc}", proxy.secrets)
        log.error("embedded model failed to load: %s", proxy.preload_error)


# ---- readiness -----------------------------------------------------------------------------


async def _readiness(proxy: _Proxy) -> tuple[bool, dict[str, Any]]:
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
            ok, checks["upstream"] = await _probe(base, model, settings)
    detail = {"model": model, "checks": checks}
    if ok:  # cache only good news: a recovering upstream is noticed on the next probe
        proxy.ready_cache = (now, ok, detail)
    return ok, detail


async def _probe(base: str, model: str, settings: ServerSettings) -> tuple[bool, str]:
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


# ---- chat completions ----------------------------------------------------------------------


@dataclass
class _Plan:
    """What one request will do, decided before any upstream call."""

    mode: str  # "wrapped" | "passthrough"
    reason: str | None
    overrides: dict[str, Any]
    paraphraser: Any
    upstream: passthrough.Upstream
    client: ModelClient
    ignored: list[str]


def _check_auth(request: Request, settings: ServerSettings) -> None:
    if settings.api_key is None:
        return
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    expected = settings.api_key.get_secret_value().encode()
    if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(), expected):
        raise ProxyError(
            401,
            "missing or wrong API key: send the proxy's key as `Authorization: Bearer <key>`",
            code="invalid_api_key",
            headers={"WWW-Authenticate": "Bearer"},
        )


async def _read_body(request: Request, limit: int) -> bytes:
    too_large = ProxyError(413, f"request body exceeds {limit} bytes", code="request_too_large")
    length = request.headers.get("content-length")
    if length is not None:
        try:
            if int(length) > limit:
                raise too_large
        except ValueError:
            raise bad_request("malformed Content-Length header") from None
    parts: list[bytes] = []
    size = 0
    async for part in request.stream():
        size += len(part)
        if size > limit:
            raise too_large
        parts.append(part)
    return b"".join(parts)


def _parse(raw: bytes) -> tuple[dict[str, Any], ChatCompletionRequest]:
    try:
        body = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise bad_request("the request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise bad_request("the request body must be a JSON object")
    try:
        req = ChatCompletionRequest.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        more = f" (and {len(exc.errors()) - 1} more problems)" if len(exc.errors()) > 1 else ""
        raise bad_request(f"invalid request: {where}: {first['msg']}{more}", param=where or None) from None
    return body, req


def _passthrough_reason(req: ChatCompletionRequest) -> str | None:
    """Why the method does not fit this request, or None when it does."""
    if not req.options.enabled:
        return "disabled"
    if req.tools or req.functions or req.tool_choice not in (None, "none"):
        return "tools"
    if (req.n or 1) > 1:
        return "n>1"
    fmt = (req.response_format or {}).get("type")
    if fmt == "json_schema":
        return "json_schema"
    if fmt == "json_object":
        return "json_object"
    for message in req.messages:
        extra = message.model_extra or {}
        if message.role in ("tool", "function") or extra.get("tool_calls") or extra.get("function_call"):
            return "tool_messages"
    last = req.messages[-1]
    if last.role != "user":
        return "last_message_not_user"
    content = last.content
    if isinstance(content, list):
        if not all(isinstance(p, dict) and p.get("type") == "text" for p in content):
            return "non_text_content"
        content = "".join(str(p.get("text", "")) for p in content)
    if not content or not str(content).strip():
        return "empty_question"
    return None


def _plan(proxy: _Proxy, req: ChatCompletionRequest) -> _Plan:
    settings = proxy.settings
    opts = req.options
    if not settings.serves(req.model):
        raise ProxyError(
            404,
            f"unknown model {req.model!r}; this proxy serves {settings.model_names()}",
            param="model",
            code="model_not_found",
        )
    if len(req.messages) > settings.max_messages:
        raise bad_request(f"{len(req.messages)} messages; the limit is {settings.max_messages}", param="messages")
    max_tokens = req.requested_max_tokens
    if max_tokens is not None and max_tokens > settings.max_max_tokens:
        raise bad_request(f"max_tokens={max_tokens} exceeds this proxy's limit {settings.max_max_tokens}", param="max_tokens")
    if (req.n or 1) > settings.max_k + 1:
        raise bad_request(f"n={req.n} exceeds this proxy's limit {settings.max_k + 1}", param="n")
    if opts.k is not None and opts.k > settings.max_k:
        raise bad_request(f"k={opts.k} exceeds this proxy's limit {settings.max_k}", param="selfpara.k")
    for name in ("judge_model", "paraphrase_model"):
        value = getattr(opts, name)
        if value is not None and not settings.helper_model_allowed(value):
            raise bad_request(f"{name} {value!r} is not allowed on this proxy", param=f"selfpara.{name}")
    if opts.api_key is not None and opts.api_base is None:
        raise bad_request("selfpara.api_key only goes with selfpara.api_base", param="selfpara.api_key")

    overrides: dict[str, Any] = opts.overrides()
    if req.temperature is not None:
        overrides["temperature"] = req.temperature
    if max_tokens is not None:
        overrides["max_tokens"] = max_tokens
    try:  # validate now, so a bad setting is a 400 before anything starts
        cfg = settings.upstream.with_overrides(**overrides)
    except ConfigError as exc:
        raise bad_request(str(exc), param=_param_of(str(exc))) from None

    client, paraphraser = proxy.client, proxy.paraphraser
    api_base, api_key = cfg.api_base, _server_key(cfg)
    if opts.api_base is not None:
        if not settings.allow_client_api_base:
            raise bad_request("this proxy does not let a request choose its upstream (selfpara.api_base)",
                              param="selfpara.api_base")
        # The server's key never goes to a client-chosen host: the client's key or a dummy.
        api_base, api_key = opts.api_base, opts.api_key or "no-key"
        from selfpara.pipeline import SelfParaphraser

        cfg = build_config(**{**cfg.model_dump(), "api_base": api_base, "api_key": SecretStr(api_key)})
        client = ModelClient(
            api_base=api_base, api_key=api_key, timeout_s=cfg.call_timeout_s, retries=cfg.retries,
            concurrency=cfg.concurrency, backoff_s=settings.backoff_s,
            backend=HttpBackend(proxy.transport, fallback=_Fallback()) if proxy.transport else None,
        )
        paraphraser = SelfParaphraser(cfg, client=client)

    reason = _passthrough_reason(req)
    upstream = passthrough.Upstream(
        model=cfg.model, api_base=api_base, api_key=api_key,
        timeout_s=cfg.call_timeout_s, retries=cfg.retries, backoff_s=settings.backoff_s,
    )
    ignored = sorted(k for k in (req.model_extra or {}) if k not in _WRAPPED_FIELDS) if reason is None else []
    return _Plan(
        mode="wrapped" if reason is None else "passthrough",
        reason=reason,
        overrides=overrides,
        paraphraser=paraphraser,
        upstream=upstream,
        client=client,
        ignored=ignored,
    )


def _param_of(message: str) -> str:
    """The request parameter a WrapConfig validation message is about ("invalid settings: k: ...")."""
    match = re.match(r"invalid settings: ([A-Za-z_]+)", message)
    name = match.group(1) if match else ""
    if name in ("temperature", "max_tokens"):
        return name
    return f"selfpara.{name}" if name and name != "config" else "selfpara"


def _messages(req: ChatCompletionRequest) -> list[dict[str, Any]]:
    out = []
    for m in req.messages:
        message: dict[str, Any] = {"role": m.role, "content": m.content if m.content is not None else ""}
        if m.name:
            message["name"] = m.name
        out.append(message)
    return out


class _JSON(JSONResponse):
    """A JSON response scrubbed of the proxy's secrets (defence in depth: none should be there)."""

    def __init__(self, content: Any, *, secrets: list[str | None], **kwargs: Any) -> None:
        self._secrets = [s for s in secrets if s]
        super().__init__(content, **kwargs)

    def render(self, content: Any) -> bytes:
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text.encode("utf-8")


class _GuardedStream(StreamingResponse):
    """A streaming response that runs `on_close` however the stream ends (done, error, disconnect)."""

    def __init__(self, content: AsyncIterator[bytes], *, on_close: Callable[[], None], **kwargs: Any) -> None:
        super().__init__(content, media_type="text/event-stream", **kwargs)
        self._on_close = on_close

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self._on_close()


_SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def _usage(wa: WrappedAnswer) -> dict[str, int]:
    return CompletionUsage(
        prompt_tokens=wa.usage.prompt_tokens,
        completion_tokens=wa.usage.completion_tokens,
        total_tokens=wa.usage.prompt_tokens + wa.usage.completion_tokens,
    ).model_dump()


def _report(wa: WrappedAnswer, request_id: str, ignored: list[str]) -> dict[str, Any]:
    report = wa.model_dump(mode="json")
    report["passthrough"] = False
    report["failed_variants"] = wa.failed_variants
    report["request_id"] = request_id
    if ignored:
        report["ignored_params"] = ignored
    return report


def _wrapped_headers(wa: WrappedAnswer) -> dict[str, str]:
    headers = {
        "X-Selfpara-Agreement": f"{wa.agreement:.4f}",
        "X-Selfpara-K": str(wa.k_requested),
        "X-Selfpara-K-Kept": str(wa.k_kept),
        "X-Selfpara-Entropy": f"{wa.entropy:.4f}",
        "X-Selfpara-Original-Won": "true" if wa.original_won else "false",
    }
    if wa.flags:
        headers["X-Selfpara-Flags"] = ",".join(wa.flags)
    return headers


async def _chat(proxy: _Proxy, request: Request) -> Response:
    settings = proxy.settings
    started = time.perf_counter()
    rid = getattr(request.state, "request_id", None) or uuid.uuid4().hex
    headers: dict[str, str] = {}  # X-Request-Id is added by _RequestIdMiddleware
    slot: _Slot | None = None
    model = "-"

    def done(status: int, **fields: Any) -> None:
        extra = " ".join(f"{k}={v}" for k, v in fields.items())
        log.info(
            "request_id=%s status=%d model=%s latency_ms=%.0f %s",
            rid, status, model, 1000 * (time.perf_counter() - started), extra,
            extra={"request_id": rid},
        )

    try:
        _check_auth(request, settings)
        raw = await _read_body(request, settings.max_body_bytes)
        body, req = _parse(raw)
        model = req.model
        plan = _plan(proxy, req)
        slot = proxy.gate.try_enter()
        if slot is None:
            raise ProxyError(
                429,
                f"the proxy is handling its limit of {settings.max_concurrent_requests} requests; retry shortly",
                type="rate_limit_error", code="proxy_overloaded", headers={"Retry-After": "1"},
            )
        if plan.mode == "passthrough":
            response = await _passthrough(proxy, plan, body, req, rid, headers, slot, done)
        elif req.stream:
            response = await _wrapped_stream(proxy, plan, req, rid, headers, slot, done)
        else:
            wa = await plan.paraphraser.aanswer(_messages(req), **plan.overrides)
            completion = ChatCompletion(
                id=f"chatcmpl-{uuid.uuid4().hex}",
                model=req.model,
                choices=[Choice(message=ResponseMessage(content=wa.answer))],
                usage=CompletionUsage(**_usage(wa)),
                selfpara=_report(wa, rid, plan.ignored),
            )
            response = _JSON(completion.model_dump(), secrets=proxy.secrets, headers={**headers, **_wrapped_headers(wa)})
            done(200, mode="wrapped", k=wa.k_requested, k_kept=wa.k_kept, agreement=f"{wa.agreement:.2f}",
                 calls=wa.usage.calls, flags=",".join(wa.flags) or "-")
        return response
    except ProxyError as err:
        err.message = redact(err.message, proxy.secrets)
        done(err.status, error=err.code or err.type)
        return error_response(err, headers)
    except SelfparaError as exc:
        err = from_selfpara(exc, proxy.secrets)
        done(err.status, error=err.code, detail=repr(err.message[:200]))
        return error_response(err, headers)
    finally:
        # A streaming response takes the slot over and releases it when the stream closes.
        if slot is not None and not slot.handed_off:
            slot.release()


async def _wrapped_stream(
    proxy: _Proxy,
    plan: _Plan,
    req: ChatCompletionRequest,
    rid: str,
    headers: dict[str, str],
    slot: _Slot,
    done: Callable[..., None],
) -> Response:
    settings = proxy.settings
    completion_id = f"chatcmpl-{uuid.uuid4().hex}"
    created = int(time.time())
    include_usage = bool((req.stream_options or {}).get("include_usage"))
    task: asyncio.Task[WrappedAnswer] = asyncio.create_task(plan.paraphraser.aanswer(_messages(req), **plan.overrides))

    def events(wa: WrappedAnswer) -> list[bytes]:
        return list(
            answer_events(
                completion_id, created, req.model, wa.answer,
                chunk_chars=settings.stream_chunk_chars, usage=_usage(wa), include_usage=include_usage,
                report=_scrub(_report(wa, rid, plan.ignored), proxy.secrets),
            )
        )

    # Wait a moment before sending headers: a fast answer or a fast failure then gets
    # its real status code; a slow one gets a 200 and keep-alives.
    try:
        await asyncio.wait({task}, timeout=settings.keepalive_s)
    except BaseException:
        task.cancel()
        raise
    if task.done():
        wa = task.result()  # raises SelfparaError -> the caller's error response
        done(200, mode="wrapped", stream=True, k=wa.k_requested, k_kept=wa.k_kept, agreement=f"{wa.agreement:.2f}")
        return StreamingResponse(_iter(events(wa)), media_type="text/event-stream",
                                 headers={**headers, **_SSE_HEADERS, **_wrapped_headers(wa)})

    async def body() -> AsyncIterator[bytes]:
        yield KEEPALIVE
        while not task.done():
            await asyncio.wait({task}, timeout=settings.keepalive_s)
            if not task.done():
                yield KEEPALIVE
        try:
            wa = task.result()
        except SelfparaError as exc:
            err = from_selfpara(exc, proxy.secrets)
            done(err.status, stream=True, error=err.code, detail=repr(err.message[:200]))
            yield error_event(err.body())
            yield DONE
            return
        except Exception:
            log.exception("request_id=%s pipeline failed", rid, extra={"request_id": rid})
            yield error_event(ProxyError(500, "internal error", type="server_error", code="internal_error").body())
            yield DONE
            return
        done(200, mode="wrapped", stream=True, k=wa.k_requested, k_kept=wa.k_kept, agreement=f"{wa.agreement:.2f}")
        for item in events(wa):
            yield item

    def on_close() -> None:
        if not task.done():  # the client went away: stop spending upstream calls
            task.cancel()
            log.info("request_id=%s client disconnected; pipeline cancelled", rid, extra={"request_id": rid})
        slot.release()

    slot.handed_off = True
    return _GuardedStream(body(), on_close=on_close, headers={**headers, **_SSE_HEADERS})


async def _passthrough(
    proxy: _Proxy,
    plan: _Plan,
    body: dict[str, Any],
    req: ChatCompletionRequest,
    rid: str,
    headers: dict[str, str],
    slot: _Slot,
    done: Callable[..., None],
) -> Response:
    marker = {"passthrough": True, "reason": plan.reason, "request_id": rid}
    out_headers = {**headers, "X-Selfpara-Passthrough": str(plan.reason)}
    via_http = proxy.transport is not None and supports(plan.upstream.model)
    via_litellm = not via_http and passthrough.uses_litellm(plan.client, plan.upstream.model)
    if req.stream and (via_litellm or via_http):
        if via_http:
            chunks = await passthrough.stream_http(proxy.transport, plan.upstream, body)  # type: ignore[arg-type]
        else:
            chunks = await passthrough.stream(plan.upstream, body)  # raises before any byte is sent

        async def sse() -> AsyncIterator[bytes]:
            first = True
            try:
                async for item in chunks:
                    item["model"] = req.model
                    if first:
                        item["selfpara"] = marker
                        first = False
                    yield event(_scrub(item, proxy.secrets))
            except SelfparaError as exc:
                yield error_event(from_selfpara(exc, proxy.secrets).body())
            except Exception as exc:  # the upstream broke off mid-stream
                from selfpara.llm import _classify

                yield error_event(from_selfpara(_classify(plan.upstream.model, exc), proxy.secrets).body())
            yield DONE

        done(200, mode="passthrough", reason=plan.reason, stream=True)
        slot.handed_off = True
        return _GuardedStream(sse(), on_close=slot.release, headers={**out_headers, **_SSE_HEADERS})

    if via_http:
        data = await passthrough.complete_http(proxy.transport, plan.upstream, body)  # type: ignore[arg-type]
    elif via_litellm:
        data = await passthrough.complete(plan.upstream, body)
    else:
        data = await passthrough.complete_text(plan.client, plan.upstream, body)
    data["model"] = req.model
    data["selfpara"] = marker
    done(200, mode="passthrough", reason=plan.reason)
    if req.stream:  # a text-only backend: send the finished answer as a stream
        choice = data["choices"][0]
        items = answer_events(
            data["id"], data["created"], req.model, choice["message"]["content"] or "",
            chunk_chars=proxy.settings.stream_chunk_chars, finish_reason=choice.get("finish_reason") or "stop",
            usage=data.get("usage"), include_usage=bool((req.stream_options or {}).get("include_usage")),
            report=marker, report_first=True,
        )
        return StreamingResponse(_iter(list(items)), media_type="text/event-stream", headers={**out_headers, **_SSE_HEADERS})
    return _JSON(data, secrets=proxy.secrets, headers=out_headers)


def _scrub(data: dict[str, Any], secrets: list[str | None]) -> dict[str, Any]:
    real = [s for s in secrets if s]
    if not real:
        return data
    text = json.dumps(data)
    if not any(s in text for s in real):
        return data
    for secret in real:
        text = text.replace(secret, "***")
    return json.loads(text)


async def _iter(items: list[bytes]) -> AsyncIterator[bytes]:
    for item in items:
        yield item
