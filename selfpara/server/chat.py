"""POST /v1/chat/completions: the wrapped answer (plain or streamed) or the passthrough."""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from selfpara.errors import SelfparaError
from selfpara.http_backend import HttpBackend
from selfpara.llm import LiteLLMBackend, redact
from selfpara.result import WrappedAnswer
from selfpara.server import passthrough
from selfpara.server.errors import ProxyError, error_response, from_selfpara
from selfpara.server.plan import Plan, check_auth, messages_of, parse, plan_request, read_body
from selfpara.server.schema import ChatCompletion, ChatCompletionRequest, Choice, CompletionUsage, ResponseMessage
from selfpara.server.state import Proxy, Slot
from selfpara.server.streaming import DONE, KEEPALIVE, answer_events, error_event, event

log = logging.getLogger("selfpara.server")


async def chat_completions(request: Request) -> Response:
    return await _chat(request.app.state.proxy, request)


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


async def _chat(proxy: Proxy, request: Request) -> Response:
    settings = proxy.settings
    started = time.perf_counter()
    rid = getattr(request.state, "request_id", None) or uuid.uuid4().hex
    headers: dict[str, str] = {}  # X-Request-Id is added by _RequestIdMiddleware
    slot: Slot | None = None
    model = "-"

    def done(status: int, **fields: Any) -> None:
        extra = " ".join(f"{k}={v}" for k, v in fields.items())
        log.info(
            "request_id=%s status=%d model=%s latency_ms=%.0f %s",
            rid, status, model, 1000 * (time.perf_counter() - started), extra,
            extra={"request_id": rid},
        )

    try:
        check_auth(request, settings)
        raw = await read_body(request, settings.max_body_bytes)
        body, req = parse(raw)
        model = req.model
        plan = plan_request(proxy, req)
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
            wa = await plan.paraphraser.aanswer(messages_of(req), **plan.overrides)
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
    proxy: Proxy,
    plan: Plan,
    req: ChatCompletionRequest,
    rid: str,
    headers: dict[str, str],
    slot: Slot,
    done: Callable[..., None],
) -> Response:
    settings = proxy.settings
    completion_id = f"chatcmpl-{uuid.uuid4().hex}"
    created = int(time.time())
    include_usage = bool((req.stream_options or {}).get("include_usage"))
    task: asyncio.Task[WrappedAnswer] = asyncio.create_task(plan.paraphraser.aanswer(messages_of(req), **plan.overrides))

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
    proxy: Proxy,
    plan: Plan,
    body: dict[str, Any],
    req: ChatCompletionRequest,
    rid: str,
    headers: dict[str, str],
    slot: Slot,
    done: Callable[..., None],
) -> Response:
    marker = {"passthrough": True, "reason": plan.reason, "request_id": rid}
    out_headers = {**headers, "X-Selfpara-Passthrough": str(plan.reason)}
    backend = plan.client.backend_for(plan.upstream.model)
    http = backend if isinstance(backend, HttpBackend) else None
    via_litellm = isinstance(backend, LiteLLMBackend)
    if req.stream and (via_litellm or http is not None):
        if http is not None:
            chunks = await passthrough.stream_http(http, plan.upstream, body)
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

    if http is not None:
        data = await passthrough.complete_http(http, plan.upstream, body)
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
