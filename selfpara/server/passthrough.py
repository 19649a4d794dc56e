"""Passthrough: requests the method does not fit go to the upstream unchanged.

Three ways through, chosen by the backend that serves the upstream model:

- litellm models: the request's own OpenAI parameters (tools, n, response_format,
  logprobs, ...) go to `litellm.acompletion` as they came, the response comes back as
  it came. Same timeout, retries and error classification as `selfpara.llm`.
- models behind the lean http transport (`selfpara.http_backend`): the body goes to the
  upstream as it came, with the same timeout, retries and classification.
- any other backend (the embedded model, in-process fakes): through
  `ModelClient.complete`, text only; `n` fans out into n calls; tools are refused.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from selfpara.errors import UpstreamError, UpstreamTimeout
from selfpara.http_backend import HttpBackend, upstream_name
from selfpara.llm import ModelClient, redact
from selfpara.result import Usage
from selfpara.server.errors import ProxyError

# Body keys that are the proxy's business, not the upstream's.
_OWN_KEYS = {"model", "stream", "selfpara", "messages"}
# OpenAI chat-completion parameters litellm takes by name; anything else rides in extra_body.
_OPENAI_PARAMS = {
    "temperature", "top_p", "n", "stream_options", "stop", "max_tokens", "max_completion_tokens",
    "presence_penalty", "frequency_penalty", "logit_bias", "user", "response_format", "seed", "tools",
    "tool_choice", "logprobs", "top_logprobs", "parallel_tool_calls", "functions", "function_call",
    "reasoning_effort", "modalities", "audio", "prediction", "service_tier", "metadata", "store",
    "web_search_options",
}


@dataclass(frozen=True)
class Upstream:
    """Where and how one request's upstream calls go."""

    model: str
    api_base: str | None
    api_key: str | None
    timeout_s: float
    retries: int
    backoff_s: float


def _retrying(up: Upstream) -> AsyncRetrying:
    return AsyncRetrying(
        stop=stop_after_attempt(up.retries + 1),
        wait=wait_exponential_jitter(initial=up.backoff_s, max=max(up.backoff_s, 8.0), jitter=up.backoff_s),
        retry=retry_if_exception(lambda e: isinstance(e, UpstreamError) and e.retryable),
        reraise=True,
    )


def _kwargs(up: Upstream, body: dict[str, Any]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"model": up.model, "messages": body["messages"], "num_retries": 0, "timeout": up.timeout_s}
    extra_body: dict[str, Any] = {}
    for key, value in body.items():
        if key in _OWN_KEYS:
            continue
        if key in _OPENAI_PARAMS:
            kwargs[key] = value
        else:
            extra_body[key] = value
    if extra_body:
        kwargs["extra_body"] = extra_body
    if up.api_base:
        kwargs["api_base"] = up.api_base
    if up.api_key:
        kwargs["api_key"] = up.api_key
    return kwargs


async def _call(up: Upstream, kwargs: dict[str, Any]) -> Any:
    import litellm

    return await _timed(up, litellm.acompletion(**kwargs))


def _redacted(exc: UpstreamError, up: Upstream) -> UpstreamError:
    exc.args = (redact(str(exc), [up.api_key]),)
    return exc


async def complete(up: Upstream, body: dict[str, Any]) -> dict[str, Any]:
    """One non-streaming passthrough call through litellm; returns the response as a dict."""
    kwargs = _kwargs(up, body)
    try:
        async for attempt in _retrying(up):
            with attempt:
                response = await _call(up, kwargs)
    except UpstreamError as exc:
        raise _redacted(exc, up) from None
    data = response.model_dump() if hasattr(response, "model_dump") else dict(response)
    return data


async def stream(up: Upstream, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
    """A streaming passthrough through litellm. Retries happen only before the first chunk.

    Returns an async iterator of chunk dicts; awaiting this function already fetched
    the first chunk, so an upstream that fails at once raises here (and the proxy can
    still answer with a fitting status).
    """
    kwargs = {**_kwargs(up, body), "stream": True}
    try:
        async for attempt in _retrying(up):
            with attempt:
                response = await _call(up, kwargs)
                iterator = response.__aiter__()
                try:
                    first = await _timed(up, iterator.__anext__())
                except StopAsyncIteration:
                    first = None
    except UpstreamError as exc:
        raise _redacted(exc, up) from None

    async def chunks() -> AsyncIterator[dict[str, Any]]:
        if first is None:
            return
        yield _dump(first)
        async for item in iterator:  # type: ignore[attr-defined]
            yield _dump(item)

    return chunks()


def _raw_body(up: Upstream, body: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in body.items() if k not in ("selfpara", "stream")}
    out["model"] = upstream_name(up.model)
    return out


async def complete_http(backend: HttpBackend, up: Upstream, body: dict[str, Any]) -> dict[str, Any]:
    """Non-streaming passthrough over the lean transport: the body goes upstream as it came."""
    raw = _raw_body(up, body)
    return await _retried(up, lambda: backend.post(up.model, raw, timeout_s=up.timeout_s,
                                                   api_base=up.api_base, api_key=up.api_key))


async def stream_http(backend: HttpBackend, up: Upstream, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
    """Streaming passthrough over the lean transport; retries only before the stream opens."""
    raw = _raw_body(up, body)
    return await _retried(up, lambda: backend.stream(up.model, raw, timeout_s=up.timeout_s,
                                                     api_base=up.api_base, api_key=up.api_key))


async def _retried(up: Upstream, make_call: Any) -> Any:
    """Await a fresh `make_call()` per attempt, with the upstream's retries, timeout and redaction."""
    try:
        async for attempt in _retrying(up):
            with attempt:
                return await _timed(up, make_call())
    except UpstreamError as exc:
        raise _redacted(exc, up) from None
    raise AssertionError("unreachable")


async def _timed(up: Upstream, call: Any) -> Any:
    """Await `call` within the upstream's timeout; failures become UpstreamError (litellm's classified)."""
    from selfpara.llm import _classify

    try:
        return await asyncio.wait_for(call, up.timeout_s)
    except asyncio.TimeoutError:
        raise UpstreamTimeout(f"{up.model}: no answer within {up.timeout_s:g}s") from None
    except (UpstreamError, StopAsyncIteration):
        raise
    except Exception as exc:
        raise _classify(up.model, exc) from None


def _dump(item: Any) -> dict[str, Any]:
    if hasattr(item, "model_dump"):
        return item.model_dump(exclude_none=True)
    return dict(item)


def _text_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            content = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
        out.append({"role": m.get("role"), "content": content if content is not None else ""})
    return out


async def complete_text(client: ModelClient, up: Upstream, body: dict[str, Any]) -> dict[str, Any]:
    """Passthrough for a backend that only returns text (the embedded model, fakes)."""
    if body.get("tools") or body.get("functions"):
        raise ProxyError(400, f"the upstream {up.model} does not support tools", param="tools", code="unsupported")
    n = int(body.get("n") or 1)
    usage = Usage()
    temperature = body.get("temperature")
    max_tokens = body.get("max_completion_tokens") or body.get("max_tokens") or 256
    messages = _text_messages(body["messages"])
    results = await asyncio.gather(
        *[
            client.complete(
                up.model,
                messages,
                usage=usage,
                temperature=0.0 if temperature is None else float(temperature),
                max_tokens=int(max_tokens),
            )
            for _ in range(n)
        ]
    )
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": up.model,
        "choices": [
            {"index": i, "message": {"role": "assistant", "content": r.text}, "finish_reason": r.finish_reason, "logprobs": None}
            for i, r in enumerate(results)
        ],
        "usage": {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens,
        },
    }
