"""The one door to models: every call goes through ModelClient.

ModelClient adds what every call needs (timeout, retries with backoff, a concurrency limit, usage
accounting, secret-safe errors, a credential check before anything is sent) on top of a Backend
(`selfpara.models.backends`), which only makes one call: HttpBackend for OpenAI-compatible upstreams
whose base URL is known, LiteLLMBackend for any other litellm model string, local GGUF models on
llama.cpp (`selfpara.models.engines`), or any object with the same `complete` method (tests and
benchmarks plug fakes in here). `selfpara.paraphraser.client_from_config` builds the client a
`WrapConfig` describes, so that this layer never reads the settings.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, TypeVar

from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from selfpara.errors import SelfparaError, UpstreamError, UpstreamTimeout
from selfpara.models.backends import Backend, CallObserver, RawBackend
from selfpara.models.cache import CallCache, cacheable, call_key, tenant
from selfpara.models.credentials import require_credential
from selfpara.models.engines import embedded_engine
from selfpara.models.http_backend import HttpBackend, HttpSessions, Transport, endpoint_from_env, resolve_transport
from selfpara.models.litellm_backend import LiteLLMBackend
from selfpara.models.names import is_embedded, provider_of
from selfpara.models.upstream_data import UpstreamResponseTooLarge, one_piece, stream_event_text
from selfpara.result import Completion, Message, Usage
from selfpara.util.extras import within
from selfpara.util.redaction import redact

log = logging.getLogger(__name__)

# tenacity 9.2 renamed wait_exponential_jitter's `initial` to `multiplier` (the old name warns);
# the floor, 8.2, knows only `initial`. The same first wait under either name.
_BACKOFF_BASE = "multiplier" if "multiplier" in inspect.signature(wait_exponential_jitter).parameters else "initial"

T = TypeVar("T")


class ModelClient:
    """Calls models with timeout, retries, a concurrency limit and usage accounting.

    Args:
        api_base: base URL passed to every litellm call (None: the provider's default).
        api_key: key passed to every litellm call (None: the provider's env var).
        timeout_s: limit of one attempt.
        retries: extra attempts after a transient failure (rate limit, 5xx, connection, timeout).
        concurrency: calls in flight at once through this client.
        backoff_s: first retry wait; it doubles per attempt, with jitter.
        backend: use this backend for every model instead of choosing by model name.
        provider: send `api_base` and `api_key` only to models of this provider (None: to every model).
        transport: how `openai/...` and `hosted_vllm/...` models are reached. auto: HttpBackend when
            their base URL is known (`api_base`, or OPENAI_API_BASE/OPENAI_BASE_URL, HOSTED_VLLM_API_BASE),
            else litellm. http: always HttpBackend for them (ConfigError without a base URL). litellm: litellm.
        http: the connection pool of the http transport; pass another client's
            `http` to share it (default: this client's own, made on first use).
        routes: backends for chosen model strings, used before the choice by name (the
            proxy's deployment groups, `selfpara.models.routing`); they get no base URL or key.
        observer: called after every attempt (see CallObserver); it must not raise.
        environ: where base URLs and keys the client was not given are read (default
            `os.environ`).
        cache: answers identical cacheable calls (temperature 0, or seeded) of `complete`
            across requests; a hit is counted in `Usage.cache_hits`, not in `calls`. None:
            no cache (`selfpara.paraphraser.client_from_config` builds the one the config's
            `cache` names).
        clock: seconds, what calls are timed with (`time.perf_counter`; tests pass a fake one).
    """

    def __init__(
        self,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        retries: int = 3,
        concurrency: int = 16,
        backoff_s: float = 0.5,
        backend: Backend | None = None,
        provider: str | None = None,
        transport: Transport = "auto",
        http: HttpSessions | None = None,
        environ: Mapping[str, str] | None = None,
        routes: Mapping[str, Backend] | None = None,
        observer: CallObserver | None = None,
        cache: CallCache | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        if transport not in ("auto", "litellm", "http"):
            raise ValueError(f"transport must be auto, litellm or http, not {transport!r}")
        self.api_base = api_base
        self.provider = provider
        self._api_key = api_key
        self.timeout_s = timeout_s
        self.retries = retries
        self.concurrency = concurrency
        self.backoff_s = backoff_s
        self._backend = backend
        self.transport = transport
        self.http = http
        self._environ = environ
        self.routes = dict(routes or {})
        self.observer = observer
        self.cache = cache
        self.clock = clock
        self._litellm: Backend | None = None
        self._http_backends: dict[tuple[str, str | None], HttpBackend] = {}
        # A semaphore belongs to one event loop; the sync API runs a new loop per call.
        self._limits: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    def backend_for(self, model: str) -> Backend:
        """The backend that serves `model`."""
        if self._backend is not None:
            return self._backend
        if model in self.routes:
            return self.routes[model]
        if is_embedded(model):  # an in-process engine (local/... on llama.cpp), see selfpara.models.engines
            return embedded_engine(model)
        base, key = self._endpoint(model)
        if resolve_transport(self.transport, model, base) == "http":
            assert base is not None
            backend = self._http_backends.get((base, key))
            if backend is None:
                if self.http is None:
                    self.http = HttpSessions(max_connections=self.concurrency)
                backend = self._http_backends[(base, key)] = HttpBackend(self.http, base, key)
            return backend
        if self._litellm is None:  # litellm is imported by its `prepare`, after the server answered a connect
            self._litellm = LiteLLMBackend(self.http.max_response_bytes if self.http is not None else None)
        return self._litellm

    def _endpoint(self, model: str) -> tuple[str | None, str | None]:
        """The base URL and key `model` is reached with, where known: this client's for its provider, else the env's."""
        env_base, env_key = endpoint_from_env(model, self._environ)
        if self.api_base and (self.provider is None or provider_of(model) == self.provider):
            return self.api_base, self._api_key or env_key
        return env_base, env_key

    def require_credentials(self, model: str) -> None:
        """Raise MissingCredential, before anything is sent, when `model` needs a key that is nowhere."""
        if self._backend is None and model not in self.routes:
            require_credential(model, self._call_params(model), self._environ)

    async def aclose(self) -> None:
        """Close the http transport's and the cache's connections of the running loop (asyncio.run closes them too)."""
        if self.http is not None:
            await self.http.aclose()
        if self.cache is not None:
            await self.cache.aclose()

    def _limit(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        sem = self._limits.get(loop)
        if sem is None:
            sem = self._limits[loop] = asyncio.Semaphore(self.concurrency)
        return sem

    async def complete(
        self,
        model: str,
        messages: list[Message],
        *,
        usage: Usage | None = None,
        temperature: float = 0.0,
        max_tokens: int = 256,
        kind: str = "call",
        **extra: Any,
    ) -> Completion:
        """Call `model` on `messages`; add the call's tokens and cost to `usage`.

        `kind` names what the call is for (paraphrase, answer, judge, passthrough) for the observer.
        A cacheable call (temperature 0, or a `seed`) is answered from `cache` when an
        identical one succeeded before; it then counts in `usage.cache_hits` only.
        Raises UpstreamError (UpstreamTimeout for timeouts) once retries are spent or
        at once for failures retrying cannot fix (bad key, unknown model, bad request).
        """
        params = self._keyed(model, {"temperature": temperature, "max_tokens": max_tokens, **extra})
        if self.cache is not None and cacheable(params):
            key = call_key(model, messages, params, tenant=self._tenant(model, params))
            call = lambda: self._complete(model, messages, params, usage, kind)  # noqa: E731
            result, _ = await self.cache.fetch(key, call, usage)
            return result
        return await self._complete(model, messages, params, usage, kind)

    async def _complete(
        self, model: str, messages: list[Message], params: dict[str, Any], usage: Usage | None, kind: str
    ) -> Completion:
        """One call (retried) through the model's backend, counted in `usage`."""
        self.require_credentials(model)
        backend = self.backend_for(model)
        await self._prepare(backend, model, params, usage)
        try:
            async for attempt in self._retrying():
                with attempt:
                    if usage is not None:
                        usage.count_call()  # CallLimitReached past the request's max_calls
                    result = await self._observed(kind, self._attempt(backend, model, messages, params))
        except UpstreamError as exc:
            if usage is not None:
                usage.failed_calls += 1
            raise self._redacted(exc, params) from None
        if usage is not None:
            usage.prompt_tokens += result.prompt_tokens
            usage.completion_tokens += result.completion_tokens
            usage.cost += result.cost
        return result

    async def _prepare(self, backend: Backend, model: str, params: dict[str, Any], usage: Usage | None) -> None:
        """The backend's `prepare` (an embedded model's load; litellm's connect and import) outside every
        call's timeout: no part of a call. A failure (no connection) counts as one failed call."""
        try:
            if (prepare := getattr(backend, "prepare", None)) is not None:
                await prepare(model, params)
        except UpstreamError as exc:
            if usage is not None:
                usage.count_call()
                usage.failed_calls += 1
            raise self._redacted(exc, params) from None

    def _retrying(self) -> AsyncRetrying:
        return AsyncRetrying(
            stop=stop_after_attempt(self.retries + 1),
            wait=wait_exponential_jitter(
                **{_BACKOFF_BASE: self.backoff_s}, max=max(self.backoff_s, 8.0), jitter=self.backoff_s
            ),
            retry=retry_if_exception(lambda e: isinstance(e, UpstreamError) and e.retryable),
            reraise=True,
        )

    def _tenant(self, model: str, params: Mapping[str, Any]) -> str:
        """A call's cache tenant (`selfpara.models.cache.tenant`): its route's, else its base URL's and key's."""
        route = self.routes.get(model)
        if route is not None:
            return str(getattr(route, "cache_tenant", "") or tenant(f"route:{model}", None))
        env_base, env_key = endpoint_from_env(model, self._environ)
        return tenant(params.get("api_base") or env_base, params.get("api_key") or env_key)

    def _call_params(self, model: str) -> dict[str, Any]:
        """The client's own parameters of a call to `model`: base URL and key (for its provider only: a judge
        or paraphraser of another provider must not get them) and the timeout."""
        params: dict[str, Any] = {}
        if self.provider is None or provider_of(model) == self.provider:
            if self.api_base:
                params["api_base"] = self.api_base
            if self._api_key:
                params["api_key"] = self._api_key
        params["timeout"] = self.timeout_s
        return params

    async def _raw_backend(self, model: str, endpoint: str, usage: Usage | None) -> tuple[RawBackend, dict[str, Any]]:
        """The prepared backend of a pass-through call to `model` and the call's parameters."""
        self.require_credentials(model)
        backend = self.backend_for(model)
        if endpoint not in getattr(backend, "raw_endpoints", ()):
            raise UpstreamError(f"{model}: this backend cannot pass {endpoint} requests through", status=400)
        params = self._call_params(model)
        await self._prepare(backend, model, params, usage)
        return backend, params  # type: ignore[return-value]

    def can_pass_through(self, model: str, endpoint: str = "chat/completions") -> bool:
        """Whether `raw` / `raw_stream` can send `endpoint` requests to `model` (the http and
        litellm backends can; the embedded model and text-only fakes cannot)."""
        return endpoint in getattr(self.backend_for(model), "raw_endpoints", ())

    async def raw(self, model: str, body: dict[str, Any], *, endpoint: str = "chat/completions") -> dict[str, Any]:
        """Send an OpenAI request `body` to `model` unchanged but for the model name and
        return the upstream's JSON answer, with this client's timeout, retries,
        concurrency limit and secret-safe errors. Raises UpstreamError; see `can_pass_through`."""
        backend, params = await self._raw_backend(model, endpoint, None)
        return await self._retried(model, params, lambda: backend.raw(model, endpoint, body, params))

    async def raw_stream(
        self,
        model: str,
        body: dict[str, Any],
        *,
        endpoint: str = "chat/completions",
        usage: Usage | None = None,
        kind: str = "passthrough",
    ) -> AsyncIterator[dict[str, Any]]:
        """`raw` for `stream: true`: opens the stream (retrying until it opens; errors
        raise here, before a byte reaches the caller's client) and returns an iterator of
        the upstream's event objects. The timeout bounds the opening and each gap between
        events; a failure mid-stream raises UpstreamError from the iterator. Each attempt
        to open counts in `usage` (a failure to open as a failed call)."""
        backend, params = await self._raw_backend(model, endpoint, usage)

        def attempt() -> Awaitable[AsyncIterator[dict[str, Any]]]:
            if usage is not None:
                usage.count_call()
            return backend.raw_stream(model, endpoint, body, params)

        try:
            events = await self._retried(model, params, attempt, kind)
        except UpstreamError:
            if usage is not None:
                usage.failed_calls += 1
            raise

        async def bounded() -> AsyncIterator[dict[str, Any]]:
            iterator = events.__aiter__()
            try:
                while True:
                    try:
                        item = await self._bounded(model, iterator.__anext__())
                    except StopAsyncIteration:
                        return
                    yield item
            except UpstreamError as exc:
                raise self._redacted(exc, params) from None
            finally:
                close = getattr(iterator, "aclose", None)
                if close is not None:
                    await close()

        return bounded()

    async def stream_text(
        self,
        model: str,
        messages: list[Message],
        *,
        usage: Usage | None = None,
        temperature: float = 0.0,
        max_tokens: int = 256,
        kind: str = "call",
        **extra: Any,
    ) -> AsyncGenerator[str, None] | None:
        """`complete`, streamed: the reply's text in pieces as the upstream generates it, or None when
        `model`'s backend cannot stream (the embedded model, text-only fakes): then call `complete`.

        Opening the stream raises UpstreamError as `complete` does; a failure mid-stream raises
        it from the iterator. Tokens count in `usage` where the upstream reports them (the
        request asks for them with `stream_options`). A cacheable call shares `complete`'s
        cache entry: a hit comes back as one piece, and a stream read to its end is stored."""
        if not self.can_pass_through(model):
            return None
        params: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens, **extra}
        key = await self._stream_cache_key(model, messages, params, usage)
        if isinstance(key, Completion):
            return one_piece(key.text)
        body: dict[str, Any] = {"messages": messages, **params, "stream_options": {"include_usage": True}}
        events = await self.raw_stream(model, body, usage=usage, kind=kind)

        async def pieces() -> AsyncGenerator[str, None]:
            text: list[str] = []
            tokens = [0, 0]
            try:
                async for event in events:
                    found, prompt_tokens, completion_tokens = stream_event_text(model, event)
                    for piece in found:
                        text.append(piece)
                        yield piece
                    tokens[0] += prompt_tokens
                    tokens[1] += completion_tokens
            except UpstreamError:
                if usage is not None:
                    usage.failed_calls += 1
                raise
            finally:
                if usage is not None:
                    usage.prompt_tokens += tokens[0]
                    usage.completion_tokens += tokens[1]
                await events.aclose()  # type: ignore[attr-defined]
            if key is not None and self.cache is not None:  # only a reply read to its end is stored
                done = Completion(text="".join(text), prompt_tokens=tokens[0], completion_tokens=tokens[1])
                await self.cache.put(key, done)

        return pieces()

    async def _stream_cache_key(
        self, model: str, messages: list[Message], params: dict[str, Any], usage: Usage | None
    ) -> str | Completion | None:
        """For a streamed call: the cached Completion on a hit, else the key to store the reply under
        (None: not cacheable, or no reachable cache), counted as `complete` counts them."""
        if self.cache is None or not cacheable(params):
            return None
        keyed = self._keyed(model, dict(params))  # as `complete` keys it
        key = call_key(model, messages, keyed, tenant=self._tenant(model, keyed))
        found, reachable = await self.cache.get(key)
        self.cache.count(found, reachable, usage)
        return found if found is not None else key if reachable else None

    def _keyed(self, model: str, params: dict[str, Any]) -> dict[str, Any]:
        """`params` with the client's own call parameters for `model` where they give none (its timeout always)."""
        for name, value in self._call_params(model).items():
            params[name] = value if name == "timeout" else params.get(name, value)
        return params

    async def _retried(
        self,
        model: str,
        params: Mapping[str, Any],
        make_call: Callable[[], Awaitable[Any]],
        kind: str = "passthrough",
    ) -> Any:
        """Await a fresh `make_call()` per attempt under the limit, timeout and retries; errors redacted."""
        try:
            async for attempt in self._retrying():
                with attempt:
                    async with self._limit():
                        result = await self._observed(kind, self._bounded(model, make_call()))
        except UpstreamError as exc:
            raise self._redacted(exc, params) from None
        return result

    async def _observed(self, kind: str, attempt: Awaitable[T]) -> T:
        """`attempt`'s result, the observer told of its outcome."""
        try:
            result = await attempt
        except UpstreamError as exc:
            self._observe(kind, exc)
            raise
        self._observe(kind, None)
        return result

    def _observe(self, kind: str, error: UpstreamError | None) -> None:
        if self.observer is not None:
            try:
                self.observer(kind, error)
            except Exception:  # counting must never fail a call
                log.exception("call observer failed")

    async def _bounded(self, model: str, call: Awaitable[T], detail: bool = False) -> T:
        """Await `call` within the timeout; any failure becomes an UpstreamError (`detail`: with the error's
        message; else a stream's StopAsyncIteration passes)."""
        try:
            return await within(self.timeout_s, call)
        except asyncio.TimeoutError:
            raise UpstreamTimeout(f"{model}: no answer within {self.timeout_s:g}s") from None
        except SelfparaError:
            raise
        except Exception as exc:  # a backend bug or an unexpected library error
            if isinstance(exc, StopAsyncIteration) and not detail:
                raise
            raise UpstreamError(f"{model}: {type(exc).__name__}{f': {exc}' if detail else ''}", status=502) from None

    def _redacted(self, exc: UpstreamError, params: Mapping[str, Any]) -> UpstreamError:
        exc.args = (redact(str(exc), [self._api_key, params.get("api_key")]),)
        return exc

    async def _attempt(
        self, backend: Backend, model: str, messages: list[Message], params: dict[str, Any]
    ) -> Completion:
        async with self._limit():
            started = self.clock()
            try:
                result = await self._bounded(model, backend.complete(model, messages, params), detail=True)
            finally:
                log.debug("call %s took %.3fs", model, self.clock() - started)
        # the http transport's byte cap, for backends that read whole responses themselves (litellm)
        cap = self.http.max_response_bytes if self.http is not None else None
        if cap is not None and len(result.text) > cap:
            raise UpstreamResponseTooLarge(f"{model}: the upstream's answer exceeds {cap} bytes")
        return result
