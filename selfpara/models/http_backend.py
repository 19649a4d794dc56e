"""A lean backend for OpenAI-compatible upstreams (`transport="http"`).

litellm reaches every provider but spends several milliseconds of CPU per call
(response objects, cost calculation, logging hooks). When the upstream speaks the
OpenAI API anyway (vLLM, llama.cpp, Ollama's /v1, TGI, LM Studio, OpenAI), this backend
posts the request with one pooled aiohttp session per event loop instead. It is a
`selfpara.models.backends.Backend`, so ModelClient still does the timeouts, retries, concurrency
limit and usage accounting: the door is the same, only the last step differs. Errors
are classified as `selfpara.models.litellm_backend._classify` does for litellm's exceptions (same
statuses, same retryability); no message carries a key.

Model names: `openai/NAME` and `hosted_vllm/NAME` are sent as NAME; cost is not
computed (0.0). `ModelClient(transport="auto")` picks this backend for those prefixes
when a base URL is known (see `endpoint_from_env` for the environment's part).
"""

from __future__ import annotations

import asyncio
import json
import os
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, Literal

from selfpara.errors import ConfigError, UpstreamError, UpstreamTimeout
from selfpara.models.names import OPENAI_COMPATIBLE, is_embedded
from selfpara.models.sse import data_lines
from selfpara.models.unreachable import unreachable
from selfpara.models.upstream_data import (
    UpstreamInvalidResponse,
    UpstreamResponseTooLarge,
    UpstreamRetryLater,
    completion_from_json,
    parse_json,
    retry_after_seconds,
)
from selfpara.result import Completion, Message
from selfpara.util.envvars import (
    HOSTED_VLLM_API_BASE_ENV,
    HOSTED_VLLM_API_KEY_ENV,
    OLLAMA_API_BASE_ENV,
    OPENAI_API_BASE_ENV,
    OPENAI_API_KEY_ENV,
    OPENAI_BASE_URL_ENV,
)

if TYPE_CHECKING:  # aiohttp is imported when the first call is made
    import aiohttp

Transport = Literal["auto", "litellm", "http"]

# Parameters ModelClient passes that are ours, not the upstream's.
_CLIENT_PARAMS = {"api_base", "api_key", "timeout"}


def supports(model: str) -> bool:
    """Whether this backend can reach `model` (an OpenAI-compatible provider prefix)."""
    return model.startswith(OPENAI_COMPATIBLE)


def upstream_name(model: str) -> str:
    """The name the upstream knows `model` by: 'llama' for 'openai/llama'."""
    for prefix in OPENAI_COMPATIBLE:
        if model.startswith(prefix):
            return model[len(prefix) :]
    return model


def endpoint_from_env(model: str, environ: Mapping[str, str] | None = None) -> tuple[str | None, str | None]:
    """The base URL and key the environment gives an OpenAI-compatible `model`, as litellm
    reads them: OPENAI_API_BASE / OPENAI_BASE_URL / OPENAI_API_KEY for `openai/...` (and
    bare names), HOSTED_VLLM_API_BASE / HOSTED_VLLM_API_KEY for `hosted_vllm/...`.
    (None, None) for other providers. The one place selfpara reads these variables (named in selfpara.util.envvars)."""
    env = os.environ if environ is None else environ
    if model.startswith("hosted_vllm/"):
        return env.get(HOSTED_VLLM_API_BASE_ENV) or None, env.get(HOSTED_VLLM_API_KEY_ENV) or None
    if model.startswith("openai/") or "/" not in model:
        base = env.get(OPENAI_API_BASE_ENV) or env.get(OPENAI_BASE_URL_ENV) or None
        return base, env.get(OPENAI_API_KEY_ENV) or None
    return None, None


def known_base(model: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The base URL a call of `model` goes to, where selfpara knows it without the call's own setting: the
    environment's for OpenAI-compatible models (`endpoint_from_env`), Ollama's (OLLAMA_API_BASE, else the
    localhost:11434 litellm defaults to). None for other providers: litellm's default, which selfpara
    does not know."""
    if model.startswith(("ollama/", "ollama_chat/")):
        env = os.environ if environ is None else environ
        return env.get(OLLAMA_API_BASE_ENV) or "http://localhost:11434"
    return endpoint_from_env(model, environ)[0]


def resolve_transport(transport: Transport, model: str, api_base: str | None) -> str:
    """Which backend serves `model`: "embedded", "http" or "litellm".

    auto: http for openai/ and hosted_vllm/ models when their base URL (`api_base`) is
    known, else litellm (e.g. api.openai.com itself, where litellm's parameter mapping
    matters). http: http for those prefixes (a ConfigError without a base URL), litellm
    for any other provider (a judge of another provider, say).
    """
    if is_embedded(model):
        return "embedded"
    if transport == "litellm" or not supports(model):
        return "litellm"
    if api_base:
        return "http"
    if transport == "http":
        raise ConfigError(f"transport http needs the base URL of {model}: api_base, or OPENAI_API_BASE/OPENAI_BASE_URL")
    return "litellm"


# ---- errors ------------------------------------------------------------------------------


def classify_status(model: str, status: int, message: str, retry_after: str | None = None) -> UpstreamError:
    """An HTTP error status of the upstream as an UpstreamError (selfpara.models.litellm_backend._classify uses
    it for litellm's statuses too, so both transports map a status alike). A readable
    `retry_after` (the upstream's header) makes it an UpstreamRetryLater."""
    err = _classified(model, status, message)
    seconds = retry_after_seconds(retry_after)
    if seconds is None:
        return err
    return UpstreamRetryLater(str(err), status=err.status, retryable=err.retryable, retry_after_s=seconds)


def _classified(model: str, status: int, message: str) -> UpstreamError:
    if 300 <= status < 400:  # redirects are never followed: a hop could leave the allowed upstreams
        return UpstreamError(
            f"{model}: the upstream answered with a redirect (HTTP {status}), which is not followed: "
            "give the address it redirects to as the base URL",
            status=502,
        )
    if status in (401, 403):  # 403: the key is valid but may not use this model or endpoint
        return UpstreamError(f"{model}: the upstream rejected the API key (HTTP {status})", status=401)
    if status == 404:
        return UpstreamError(f"{model}: unknown model or endpoint ({message})", status=404)
    if status == 429:
        return UpstreamError(f"{model}: rate limited ({message})", status=429, retryable=True)
    if status in (408, 409) or status >= 500:
        return UpstreamError(f"{model}: upstream error {status} ({message})", status=502, retryable=True)
    # 400, 413 (the request is too large for the upstream), 422, ...: the request itself
    return UpstreamError(f"{model}: the upstream rejected the request (HTTP {status}: {message})", status=400)


def classify_exception(model: str, exc: BaseException, url: str | None = None) -> UpstreamError:
    """A failure to reach the upstream at `url` as an UpstreamError: no connection made is
    UpstreamUnreachable, "cannot connect to URL (cause)" (the password masked), never retried; else the
    exception's text is left out (it may hold the URL)."""
    import aiohttp

    if isinstance(exc, UpstreamError):
        return exc
    no_connection = unreachable(model, exc, url)
    if no_connection is not None:
        return no_connection
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


# ---- the connection pool -----------------------------------------------------------------


class HttpSessions:
    """One pooled aiohttp session per event loop, shared by every call and every base URL.

    aiohttp parses HTTP in C: about 0.3 ms of CPU per call, against ~3 ms for httpx and
    ~8 ms for litellm. A session belongs to its loop; the sync API runs a new loop per
    call (`asyncio.run`), so each loop's session is closed when that loop shuts its async
    generators down (asyncio.run and uvicorn do), or by `aclose()`.
    """

    def __init__(self, *, max_connections: int = 1024, max_response_bytes: int | None = None) -> None:
        """Args:
        max_connections: connections open at once, over all base URLs.
        max_response_bytes: largest response body (or whole event stream) read from an
            upstream; beyond it the call fails with UpstreamResponseTooLarge. None: no limit.
        """
        self.max_connections = max_connections
        self.max_response_bytes = max_response_bytes
        # loop -> (session, the async generator whose finalisation closes it)
        self._sessions: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[aiohttp.ClientSession, AsyncGenerator[None, None]]
        ] = weakref.WeakKeyDictionary()

    async def session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        entry = self._sessions.get(loop)
        if entry is not None and not entry[0].closed:
            return entry[0]
        import aiohttp

        connector = aiohttp.TCPConnector(limit=self.max_connections, ttl_dns_cache=300)
        session = aiohttp.ClientSession(
            connector=connector, timeout=aiohttp.ClientTimeout(total=None), raise_for_status=False
        )
        guard = _closer(session)
        await guard.__anext__()  # registers it with this loop's shutdown_asyncgens
        self._sessions[loop] = (session, guard)
        return session

    async def aclose(self) -> None:
        """Close this loop's session (a later call opens a new one)."""
        entry = self._sessions.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            await entry[1].aclose()

    async def post(
        self,
        model: str,
        body: dict[str, Any],
        *,
        api_base: str,
        api_key: str | None,
        timeout_s: float,
        path: str = "chat/completions",
    ) -> dict[str, Any]:
        """POST `body` to `{api_base}/{path}`; return the parsed JSON or raise UpstreamError."""
        import aiohttp

        try:
            session = await self.session()
            async with session.post(
                _url(api_base, path),
                data=json.dumps(body),
                timeout=aiohttp.ClientTimeout(total=timeout_s),
                headers=_headers(api_key),
                allow_redirects=False,
            ) as response:
                status = response.status
                retry_after = response.headers.get("Retry-After")
                raw = await self._read(model, response)
        except Exception as exc:
            raise classify_exception(model, exc, api_base) from None
        if status >= 300:
            raise classify_status(model, status, _error_message(raw), retry_after)
        data = parse_json(model, raw)
        if not isinstance(data, dict):
            raise UpstreamInvalidResponse(f"{model}: upstream returned a body that is not a JSON object")
        return data

    async def _read(self, model: str, response: aiohttp.ClientResponse) -> bytes:
        """The response body, at most `max_response_bytes` of it (UpstreamResponseTooLarge beyond)."""
        limit = self.max_response_bytes
        if limit is None:
            return await response.read()
        if response.content_length is not None and response.content_length > limit:
            raise self._too_large(model)
        parts: list[bytes] = []
        size = 0
        async for part in response.content.iter_chunked(1 << 16):
            size += len(part)
            if size > limit:
                raise self._too_large(model)
            parts.append(part)
        return b"".join(parts)

    def _too_large(self, model: str) -> UpstreamResponseTooLarge:
        return UpstreamResponseTooLarge(
            f"{model}: the upstream's response exceeds {self.max_response_bytes} bytes (max_upstream_response_bytes)"
        )

    async def stream(
        self,
        model: str,
        body: dict[str, Any],
        *,
        api_base: str,
        api_key: str | None,
        timeout_s: float,
        path: str = "chat/completions",
    ) -> AsyncIterator[dict[str, Any]]:
        """A streaming request to `{api_base}/{path}`. Awaiting this opens the stream (errors,
        and a 200 that is not an event stream, raise here); the returned iterator yields the
        upstream's event objects and raises UpstreamError when the upstream sends an error
        event or ends without any event. `timeout_s` bounds the wait for the response head
        and each gap between chunks."""
        import aiohttp

        try:
            session = await self.session()
            response = await session.post(
                _url(api_base, path),
                data=json.dumps({**body, "stream": True}),
                timeout=aiohttp.ClientTimeout(total=None, sock_connect=timeout_s, sock_read=timeout_s),
                headers=_headers(api_key),
                allow_redirects=False,
            )
        except Exception as exc:
            raise classify_exception(model, exc, api_base) from None
        if response.status >= 300:
            try:
                raw = await self._read(model, response)
            except Exception as exc:
                raise classify_exception(model, exc) from None
            finally:
                response.release()
            raise classify_status(model, response.status, _error_message(raw), response.headers.get("Retry-After"))
        if response.content_type != "text/event-stream":
            response.release()
            raise UpstreamError(
                f"{model}: upstream answered a stream request with {response.content_type or 'no content type'}, "
                "not an event stream",
                status=502,
            )

        limit = self.max_response_bytes

        async def chunks() -> AsyncIterator[dict[str, Any]]:
            events = 0
            try:
                async for payload in data_lines(response.content, model=model, limit=limit):
                    if payload == "[DONE]":
                        break
                    item = parse_json(model, payload)
                    if not isinstance(item, dict):
                        raise UpstreamInvalidResponse(f"{model}: upstream sent a stream event that is no JSON object")
                    if "error" in item and "choices" not in item and "type" not in item:
                        raise classify_status(model, 502, _error_message(payload.encode()))
                    events += 1
                    yield item
            except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                raise classify_exception(model, exc) from None
            finally:
                response.release()
            if events == 0:  # ended, or sent [DONE], before any event: nothing was streamed
                raise UpstreamError(f"{model}: upstream ended the stream without sending an event", status=502)

        return chunks()


async def _closer(session: aiohttp.ClientSession) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        await session.close()


def _url(api_base: str, path: str = "chat/completions") -> str:
    return f"{api_base.rstrip('/')}/{path}"


def _headers(api_key: str | None) -> dict[str, str]:
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


# ---- the backend -------------------------------------------------------------------------


class HttpBackend:
    """A `selfpara.models.backends.RawBackend` for OpenAI-compatible models over an HttpSessions.

    A call's `api_base` / `api_key` params (ModelClient's, for its own provider) win over
    the defaults given here (the environment's, for the model's provider).
    """

    raw_endpoints = frozenset({"chat/completions", "completions", "responses"})

    def __init__(self, sessions: HttpSessions, api_base: str | None, api_key: str | None = None) -> None:
        self.sessions = sessions
        self.api_base = api_base
        self._api_key = api_key

    def _where(self, model: str, api_base: str | None, api_key: str | None) -> tuple[str, str | None]:
        base = api_base or self.api_base
        if not base:
            raise UpstreamError(f"{model}: no base URL for the http transport", status=502)
        return base, api_key or self._api_key

    async def complete(self, model: str, messages: list[Message], params: dict[str, Any]) -> Completion:
        body: dict[str, Any] = {"model": upstream_name(model), "messages": messages}
        body.update({k: v for k, v in params.items() if k not in _CLIENT_PARAMS and v is not None})
        data = await self.post(
            model,
            body,
            timeout_s=float(params.get("timeout") or 60.0),
            api_base=params.get("api_base"),
            api_key=params.get("api_key"),
        )
        return completion_from_json(data, model)

    async def post(
        self,
        model: str,
        body: dict[str, Any],
        *,
        timeout_s: float,
        api_base: str | None = None,
        api_key: str | None = None,
        path: str = "chat/completions",
    ) -> dict[str, Any]:
        base, key = self._where(model, api_base, api_key)
        return await self.sessions.post(model, body, api_base=base, api_key=key, timeout_s=timeout_s, path=path)

    async def stream(
        self,
        model: str,
        body: dict[str, Any],
        *,
        timeout_s: float,
        api_base: str | None = None,
        api_key: str | None = None,
        path: str = "chat/completions",
    ) -> AsyncIterator[dict[str, Any]]:
        base, key = self._where(model, api_base, api_key)
        return await self.sessions.stream(model, body, api_base=base, api_key=key, timeout_s=timeout_s, path=path)

    async def raw(self, model: str, endpoint: str, body: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
        return await self.post(model, _raw_body(model, body), path=endpoint, **_where_params(params))

    async def raw_stream(
        self, model: str, endpoint: str, body: dict[str, Any], params: dict[str, Any]
    ) -> AsyncIterator[dict[str, Any]]:
        return await self.stream(model, _raw_body(model, body), path=endpoint, **_where_params(params))


def _raw_body(model: str, body: dict[str, Any]) -> dict[str, Any]:
    """A passthrough body as the upstream expects it: its own model name, our keys dropped."""
    return {**{k: v for k, v in body.items() if k not in ("selfpara", "stream")}, "model": upstream_name(model)}


def _where_params(params: dict[str, Any]) -> dict[str, Any]:
    return {
        "timeout_s": float(params.get("timeout") or 60.0),
        "api_base": params.get("api_base"),
        "api_key": params.get("api_key"),
    }
