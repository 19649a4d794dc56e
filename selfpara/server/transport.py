"""A lean transport for OpenAI-compatible upstreams (`--upstream-transport http`).

litellm reaches every provider but spends several milliseconds of CPU per call
(response objects, cost calculation, logging hooks). Behind a busy proxy whose upstream
speaks the OpenAI API anyway (vLLM, llama.cpp, Ollama's /v1, TGI, LM Studio, OpenAI),
that CPU is the proxy's throughput limit. This backend posts the request with one
shared aiohttp session instead. It is a `selfpara.llm.Backend`, so ModelClient still does
the timeouts, retries, concurrency limit and usage accounting: the door is the same,
only the last step differs. Errors are classified as `selfpara.llm._classify` does
for litellm's exceptions (same statuses, same retryability).

Model names: `openai/NAME` and `hosted_vllm/NAME` are sent as NAME; cost is not
computed (0.0).
"""

from __future__ import annotations

import asyncio
import json
import weakref
from collections.abc import AsyncIterator
from typing import Any

from selfpara.errors import UpstreamError, UpstreamTimeout
from selfpara.result import Completion, Message

PREFIXES = ("openai/", "hosted_vllm/")

# Parameters ModelClient passes that are ours, not the upstream's.
_CLIENT_PARAMS = {"api_base", "api_key", "timeout"}


def supports(model: str) -> bool:
    """Whether this transport can reach `model` (an OpenAI-compatible provider prefix)."""
    return model.startswith(PREFIXES)


def upstream_name(model: str) -> str:
    for prefix in PREFIXES:
        if model.startswith(prefix):
            return model[len(prefix):]
    return model


def classify_status(model: str, status: int, message: str) -> UpstreamError:
    """An HTTP error status of the upstream as an UpstreamError (cf. selfpara.llm._classify)."""
    if status in (401, 403):
        return UpstreamError(f"{model}: the upstream rejected the API key (HTTP {status})", status=401)
    if status == 404:
        return UpstreamError(f"{model}: unknown model or endpoint ({message})", status=404)
    if status == 429:
        return UpstreamError(f"{model}: rate limited ({message})", status=429, retryable=True)
    if status in (408, 409) or status >= 500:
        return UpstreamError(f"{model}: upstream error {status} ({message})", status=502, retryable=True)
    return UpstreamError(f"{model}: the upstream rejected the request ({message})", status=400)


def classify_exception(model: str, exc: BaseException) -> UpstreamError:
    import aiohttp

    if isinstance(exc, asyncio.TimeoutError):  # aiohttp's timeouts are asyncio.TimeoutError subclasses
        return UpstreamTimeout(f"{model}: timed out ({type(exc).__name__})")
    if isinstance(exc, (aiohttp.ClientError, OSError)):
        return UpstreamError(f"{model}: upstream unavailable ({type(exc).__name__})", status=502, retryable=True)
    return UpstreamError(f"{model}: {type(exc).__name__}", status=502)


def _error_message(raw: bytes) -> str:
    try:
        data = json.loads(raw)
    except ValueError:
        return raw[:300].decode("utf-8", "replace") or "no body"
    if isinstance(data, dict):
        error = data.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        return str(message or data)[:300]
    return str(data)[:300]


def _completion(data: Any) -> Completion:
    try:
        choice = data["choices"][0]
        text = choice["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise UpstreamError("upstream returned a response with no choices", status=502) from None
    if not isinstance(text, str):
        raise UpstreamError("upstream returned a choice with no text content", status=502)
    usage = data.get("usage") or {}
    logprob = None
    content = ((choice.get("logprobs") or {}).get("content")) or []
    values = [t["logprob"] for t in content if isinstance(t, dict) and t.get("logprob") is not None]
    if values:
        logprob = sum(values) / len(values)
    return Completion(
        text=text,
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        logprob=logprob,
        finish_reason=choice.get("finish_reason") or "stop",
    )


class HttpTransport:
    """One pooled aiohttp session per event loop, reused by every call to the upstream.

    aiohttp (already installed with litellm) parses HTTP in C: about 0.3 ms of CPU per
    call here, against ~3 ms for httpx and ~8 ms for litellm.
    """

    def __init__(self, api_base: str, api_key: str | None, *, max_connections: int = 1024) -> None:
        self.api_base = api_base.rstrip("/")
        self._api_key = api_key
        self.max_connections = max_connections
        self._sessions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()

    def session(self) -> Any:
        import aiohttp

        loop = asyncio.get_running_loop()
        session = self._sessions.get(loop)
        if session is None or session.closed:
            connector = aiohttp.TCPConnector(limit=self.max_connections, ttl_dns_cache=300)
            session = self._sessions[loop] = aiohttp.ClientSession(
                connector=connector, timeout=aiohttp.ClientTimeout(total=None), raise_for_status=False
            )
        return session

    async def aclose(self) -> None:
        loop = asyncio.get_running_loop()
        session = self._sessions.pop(loop, None)
        if session is not None:
            await session.close()

    def headers(self, api_key: str | None = None) -> dict[str, str]:
        key = api_key or self._api_key
        return {"Authorization": f"Bearer {key}"} if key else {}

    def url(self, api_base: str | None = None) -> str:
        return f"{(api_base or self.api_base).rstrip('/')}/chat/completions"

    async def post(self, model: str, body: dict[str, Any], *, timeout_s: float, api_base: str | None = None,
                   api_key: str | None = None) -> dict[str, Any]:
        """POST a chat completion body; return the parsed JSON or raise UpstreamError."""
        import aiohttp

        try:
            async with self.session().post(
                self.url(api_base), data=json.dumps(body), timeout=aiohttp.ClientTimeout(total=timeout_s),
                headers={"Content-Type": "application/json", **self.headers(api_key)},
            ) as response:
                status = response.status
                raw = await response.read()
        except Exception as exc:
            raise classify_exception(model, exc) from None
        if status >= 400:
            raise classify_status(model, status, _error_message(raw))
        try:
            data = json.loads(raw)
        except ValueError:
            raise UpstreamError(f"{model}: upstream returned a malformed body", status=502, retryable=True) from None
        if not isinstance(data, dict):
            raise UpstreamError(f"{model}: upstream returned a malformed body", status=502, retryable=True)
        return data

    async def stream(self, model: str, body: dict[str, Any], *, timeout_s: float, api_base: str | None = None,
                     api_key: str | None = None) -> AsyncIterator[dict[str, Any]]:
        """A streaming chat completion. Awaiting this opens the stream (errors raise here);
        the returned iterator yields the upstream's chunk objects. `timeout_s` bounds the
        wait for the response head and each gap between chunks."""
        import aiohttp

        try:
            response = await self.session().post(
                self.url(api_base), data=json.dumps({**body, "stream": True}),
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=timeout_s, sock_read=timeout_s),
                headers={"Content-Type": "application/json", **self.headers(api_key)},
            )
        except Exception as exc:
            raise classify_exception(model, exc) from None
        if response.status >= 400:
            raw = await response.read()
            response.release()
            raise classify_status(model, response.status, _error_message(raw))

        async def chunks() -> AsyncIterator[dict[str, Any]]:
            try:
                async for line in response.content:
                    text = line.decode("utf-8", "replace").strip()
                    if not text.startswith("data:"):
                        continue
                    payload = text[5:].strip()
                    if payload == "[DONE]":
                        break
                    try:
                        yield json.loads(payload)
                    except ValueError:
                        raise UpstreamError(f"{model}: upstream sent a malformed chunk", status=502) from None
            except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                raise classify_exception(model, exc) from None
            finally:
                response.release()

        return chunks()


class HttpBackend:
    """A `selfpara.llm.Backend` over HttpTransport for OpenAI-compatible models; any other
    model goes to `fallback` (litellm, or the embedded model)."""

    def __init__(self, transport: HttpTransport, fallback: Any) -> None:
        self.transport = transport
        self.fallback = fallback

    async def complete(self, model: str, messages: list[Message], params: dict[str, Any]) -> Completion:
        if not supports(model):
            return await self.fallback.complete(model, messages, params)
        body: dict[str, Any] = {"model": upstream_name(model), "messages": messages}
        body.update({k: v for k, v in params.items() if k not in _CLIENT_PARAMS and v is not None})
        data = await self.transport.post(
            model, body, timeout_s=float(params.get("timeout") or 60.0),
            api_base=params.get("api_base"), api_key=params.get("api_key"),
        )
        return _completion(data)
