"""Reading and deciding one chat request before any upstream call: auth, body limits,
parsing, the passthrough decision and the per-request settings (`Plan`)."""

from __future__ import annotations

import asyncio
import hmac
import json
import re
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from pydantic import SecretStr, ValidationError

from selfpara.config import WrapConfig
from selfpara.errors import ConfigError
from selfpara.models.client import ModelClient
from selfpara.paraphraser import client_from_config
from selfpara.server.errors import ProxyError, bad_request
from selfpara.server.schema import ChatCompletionRequest
from selfpara.server.settings import ServerSettings
from selfpara.server.state import Proxy
from selfpara.server.upstreams import check_client_api_base, follows_no_redirect
from selfpara.util.messages import content_text, is_text_content

# Top-level request fields the wrapped path honours; the rest are listed as ignored.
_WRAPPED_FIELDS = {
    "model",
    "messages",
    "stream",
    "stream_options",
    "temperature",
    "max_tokens",
    "max_completion_tokens",
    "selfpara",
    "n",
    "user",
    "tools",
    "tool_choice",
    "functions",
    "function_call",
    "response_format",
    "logprobs",
    "top_logprobs",
}


@dataclass
class Plan:
    """What one request will do, decided before any upstream call."""

    mode: str  # "wrapped" | "passthrough"
    reason: str | None
    overrides: dict[str, Any]
    paraphraser: Any
    cfg: WrapConfig  # the request's settings: the server's with the request's overrides
    client: ModelClient
    ignored: list[str]

    @property
    def model(self) -> str:
        """The upstream model (litellm string) this request's calls go to."""
        return self.cfg.model


def check_auth(request: Request, settings: ServerSettings) -> None:
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


def check_content_type(request: Request) -> None:
    """Only JSON bodies: a browser's "simple" cross-site POST (text/plain, form data) must not
    start a pipeline, even on a proxy without a key."""
    media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media != "application/json" and not (media.startswith("application/") and media.endswith("+json")):
        raise ProxyError(
            415,
            f"send the body as Content-Type: application/json (got {media[:60]!r})"
            if media
            else "send the body as Content-Type: application/json (no Content-Type given)",
            code="unsupported_media_type",
        )


async def read_body(request: Request, limit: int, timeout_s: float | None = None) -> bytes:
    """The request body, at most `limit` bytes (413 above), all of it within `timeout_s` (408)."""
    try:
        return await asyncio.wait_for(_read(request, limit), timeout_s)
    except asyncio.TimeoutError:
        raise ProxyError(
            408, f"the request body did not arrive within {timeout_s:g}s", code="request_body_timeout"
        ) from None


async def _read(request: Request, limit: int) -> bytes:
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


def parse_json(raw: bytes) -> dict[str, Any]:
    """The body as a JSON object; 400 for anything a later step could choke on (bad JSON,
    nesting deeper than Python's recursion allows, lone surrogates that cannot be encoded)."""
    try:
        body = json.loads(raw)
        json.dumps(body, ensure_ascii=False).encode("utf-8")
    except RecursionError:
        raise bad_request("the request body is nested too deeply") from None
    except UnicodeEncodeError:
        raise bad_request("the request body holds invalid Unicode (a lone surrogate such as \\ud800)") from None
    except (ValueError, UnicodeDecodeError):
        raise bad_request("the request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise bad_request("the request body must be a JSON object")
    return body


def validate(model: type[Any], body: dict[str, Any]) -> Any:
    """`body` as the request model `model`; the first problem as a 400."""
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        more = f" (and {len(exc.errors()) - 1} more problems)" if len(exc.errors()) > 1 else ""
        raise bad_request(f"invalid request: {where}: {first['msg']}{more}", param=where or None) from None


def parse(raw: bytes) -> tuple[dict[str, Any], ChatCompletionRequest]:
    """A chat request body: the JSON object and its parsed form."""
    body = parse_json(raw)
    return body, validate(ChatCompletionRequest, body)


def passthrough_reason(req: ChatCompletionRequest) -> str | None:
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
    if not all(is_text_content(m.content) for m in req.messages):
        return "non_text_content"
    if not content_text(last.content).strip():
        return "empty_question"
    return None


async def plan_request(proxy: Proxy, req: ChatCompletionRequest, own: tuple[str, int] | None = None) -> Plan:
    """What `req` will do (400/404 for what it may not), before any upstream call; `own` is the proxy's
    address as the request reached it (host, port: a request may not point the proxy at itself)."""
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
        raise bad_request(
            f"max_tokens={max_tokens} exceeds this proxy's limit {settings.max_max_tokens}", param="max_tokens"
        )
    if (req.n or 1) > settings.max_k + 1:
        raise bad_request(f"n={req.n} exceeds this proxy's limit {settings.max_k + 1}", param="n")
    overrides: dict[str, Any] = opts.overrides()
    k = overrides.get("k")
    if k is not None and k > settings.max_k:
        raise bad_request(f"k={k} exceeds this proxy's limit {settings.max_k}", param="selfpara.k")
    for name in ("judge_model", "paraphrase_model"):
        value = overrides.get(name)
        if value is not None:
            model = settings.helper_model(value)
            if model is None:
                raise bad_request(f"{name} {value!r} is not allowed on this proxy", param=f"selfpara.{name}")
            overrides[name] = model  # an alias of the upstream (`fake`, `selfpara/fake`) as its litellm string
    if opts.api_key is not None and opts.api_base is None:
        raise bad_request("selfpara.api_key only goes with selfpara.api_base", param="selfpara.api_key")

    most = settings.upstream.max_calls
    overrides["max_calls"] = min(most, settings.max_upstream_calls) if most else settings.max_upstream_calls
    if req.temperature is not None:
        overrides["temperature"] = req.temperature
    if max_tokens is not None:
        overrides["max_tokens"] = max_tokens
    if req.logprobs:  # the answer calls ask the upstream for theirs; the chosen answer's are returned
        overrides["logprobs"] = True
        if req.top_logprobs is not None:
            overrides["top_logprobs"] = req.top_logprobs
    try:  # validate now, so a bad setting is a 400 before anything starts
        cfg = settings.upstream.with_overrides(**overrides)
    except ConfigError as exc:
        raise bad_request(str(exc), param=_param_of(str(exc))) from None

    client, paraphraser = proxy.client, proxy.paraphraser
    if opts.api_base is not None:
        try:
            await check_client_api_base(opts.api_base, settings.client_bases(), own)
        except ValueError as exc:
            raise bad_request(str(exc), param="selfpara.api_base") from None
        if not follows_no_redirect(cfg.transport, cfg.model, opts.api_base):
            raise bad_request(
                f"selfpara.api_base cannot be used with {cfg.model} over litellm, whose client follows redirects "
                "(a redirect could lead off this proxy's list): only openai/ models, or the http transport",
                param="selfpara.api_base",
            )
        # The server's key never goes to a client-chosen host: the client's key or a dummy.
        api_base, api_key = opts.api_base, opts.api_key or "no-key"
        from selfpara.paraphraser import SelfParaphraser

        try:
            cfg = cfg.with_overrides(api_base=api_base, api_key=SecretStr(api_key))
        except ConfigError as exc:
            raise bad_request(str(exc), param="selfpara.api_base") from None
        # No call cache: answers from a host the client chose must not be served to other clients.
        client = client_from_config(
            cfg, backoff_s=settings.backoff_s, http=proxy.client.http, observer=proxy.client.observer, cache=None
        )
        paraphraser = SelfParaphraser(cfg, client=client)

    reason = passthrough_reason(req)
    ignored = sorted(k for k in (req.model_extra or {}) if k not in _WRAPPED_FIELDS) if reason is None else []
    return Plan(
        mode="wrapped" if reason is None else "passthrough",
        reason=reason,
        overrides=overrides,
        paraphraser=paraphraser,
        cfg=cfg,
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


def messages_of(req: ChatCompletionRequest) -> list[dict[str, Any]]:
    out = []
    for m in req.messages:
        message: dict[str, Any] = {"role": m.role, "content": m.content if m.content is not None else ""}
        if m.name:
            message["name"] = m.name
        out.append(message)
    return out
