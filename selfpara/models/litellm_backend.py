"""The litellm transport: `LiteLLMBackend` reaches any model litellm knows (openai/..., anthropic/...,
ollama/..., hosted_vllm/...), and litellm's responses and exceptions read as selfpara's
(`completion_from_response`, `classify_litellm_error`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

from selfpara.errors import UpstreamError, UpstreamTimeout
from selfpara.models.http_backend import classify_status, endpoint_from_env, known_base
from selfpara.models.litellm_clients import CappedOpenAIClients, too_large_error
from selfpara.models.litellm_import import import_litellm
from selfpara.models.unreachable import unreachable
from selfpara.models.upstream_data import UpstreamResponseTooLarge, completion_from_json
from selfpara.result import Completion, Message
from selfpara.util.hosts import is_loopback

# OpenAI chat-completion parameters litellm takes by name; others ride in extra_body.
_LITELLM_PARAMS = {
    "temperature",
    "top_p",
    "n",
    "stream_options",
    "stop",
    "max_tokens",
    "max_completion_tokens",
    "presence_penalty",
    "frequency_penalty",
    "logit_bias",
    "user",
    "response_format",
    "seed",
    "tools",
    "tool_choice",
    "logprobs",
    "top_logprobs",
    "parallel_tool_calls",
    "functions",
    "function_call",
    "reasoning_effort",
    "modalities",
    "audio",
    "prediction",
    "service_tier",
    "metadata",
    "store",
    "web_search_options",
    "messages",
    "prompt",
    "echo",
    "best_of",
    "suffix",
}


class LiteLLMBackend:
    """Any model litellm reaches: openai/..., anthropic/..., ollama/..., hosted_vllm/....

    Args:
        max_response_bytes: the byte cap of one response (or stream) of an `openai/...` model, enforced
            while litellm reads it (`selfpara.models.litellm_clients`, whose clients follow no redirect);
            None: none.
    """

    raw_endpoints = frozenset({"chat/completions", "completions"})

    def __init__(self, max_response_bytes: int | None = None, probe_timeout_s: float = 3.0) -> None:
        self._capped = CappedOpenAIClients(max_response_bytes)
        self._probe_timeout_s = probe_timeout_s
        self._reached: set[str] = set()
        self._probing: dict[str, asyncio.Task[None]] = {}
        self._imported = False

    async def prepare(self, model: str, params: dict[str, Any]) -> None:
        """Before a call (and outside its timeout): connect once to the base URL where it is on this machine,
        then import litellm (seconds), so that a local server that is not running (Ollama not started) is
        named at once. Raises UpstreamUnreachable on a connection refused. A remote base is not probed: it
        may be reached only through an HTTP proxy, which litellm's clients use and a bare connect would not."""
        base = _base(model, params)
        if base is not None and base not in self._reached and is_loopback(urlsplit(base).hostname or ""):
            # concurrent first calls wait on one probe: none starts the import before it is answered
            probe = self._probing.get(base)
            if probe is None:
                probe = self._probing[base] = asyncio.ensure_future(self._probe(model, base))
            try:
                await asyncio.shield(probe)
            finally:
                if probe.done():
                    self._probing.pop(base, None)
            self._reached.add(base)
        if not self._imported:
            await asyncio.to_thread(import_litellm)
            self._imported = True

    async def _probe(self, model: str, base: str) -> None:
        """Connect to `base`: UpstreamUnreachable if no connection can be made; a probe that connects or
        times out lets the call go ahead, and litellm's own errors decide."""
        parts = urlsplit(base)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            _, writer = await asyncio.wait_for(
                asyncio.open_connection(parts.hostname, port), timeout=self._probe_timeout_s
            )
        except (OSError, asyncio.TimeoutError) as exc:
            failure = unreachable(model, exc, base)
            if failure is not None:
                raise failure from None
            return
        writer.close()

    async def complete(self, model: str, messages: list[Message], params: dict[str, Any]) -> Completion:
        call = self._call("chat/completions")
        try:
            response = await call(messages=messages, **await self._target(model, params))
        except Exception as exc:
            raise _classify(model, exc, _base(model, params)) from None
        return completion_from_response(response, model)

    async def raw(self, model: str, endpoint: str, body: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
        call = self._call(endpoint)
        try:
            response = await call(**_litellm_kwargs(await self._target(model, params), body))
        except Exception as exc:
            raise _classify(model, exc, _base(model, params)) from None
        return _dump(response, exclude_none=False)

    async def raw_stream(
        self, model: str, endpoint: str, body: dict[str, Any], params: dict[str, Any]
    ) -> AsyncIterator[dict[str, Any]]:
        call = self._call(endpoint)
        try:
            response = await call(**_litellm_kwargs(await self._target(model, params), body), stream=True)
            iterator = response.__aiter__()
            try:  # the first chunk, so that an upstream failing at once raises before the stream opens
                first: Any = await iterator.__anext__()
            except StopAsyncIteration:
                first = None
        except Exception as exc:
            raise _classify(model, exc, _base(model, params)) from None

        async def chunks() -> AsyncIterator[dict[str, Any]]:
            if first is None:
                return
            yield _dump(first)
            try:
                async for item in iterator:
                    yield _dump(item)
            except Exception as exc:
                raise _classify(model, exc, _base(model, params)) from None

        return chunks()

    def _call(self, endpoint: str) -> Any:
        """The litellm function that serves `endpoint`."""
        litellm = import_litellm()
        return litellm.acompletion if endpoint == "chat/completions" else litellm.atext_completion

    async def _target(self, model: str, params: dict[str, Any]) -> dict[str, Any]:
        """The call's model and parameters as litellm takes them (retries are ModelClient's), with a
        capped OpenAI client that follows no redirect for `openai/...` models whose key is known."""
        target = {"model": model, "num_retries": 0, **params}
        if model.startswith("openai/"):
            env_base, env_key = endpoint_from_env(model)
            key = params.get("api_key") or env_key
            if key:
                target["client"] = await self._capped.client(params.get("api_base") or env_base, key)
        return target


def _litellm_kwargs(target: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    """litellm keyword arguments: `target` (model and call parameters) and an OpenAI `body`."""
    kwargs: dict[str, Any] = dict(target)
    extra_body: dict[str, Any] = {}
    for key, value in body.items():
        if key in ("model", "stream"):
            continue
        if key in _LITELLM_PARAMS:
            kwargs[key] = value
        else:
            extra_body[key] = value
    if extra_body:
        kwargs["extra_body"] = extra_body
    return kwargs


def _dump(item: Any, *, exclude_none: bool = True) -> dict[str, Any]:
    if hasattr(item, "model_dump"):
        return item.model_dump(exclude_none=exclude_none)
    return dict(item)


def completion_from_response(response: Any, model: str) -> Completion:
    """Read a litellm response as the OpenAI body it dumps to (`completion_from_json`), with litellm's cost."""
    hidden = getattr(response, "_hidden_params", None) or {}
    completion = completion_from_json(_dump(response, exclude_none=False), model)
    return completion.model_copy(update={"cost": float(hidden.get("response_cost") or 0.0)})


def _base(model: str, params: dict[str, Any]) -> str | None:
    """The base URL a call of `model` goes to, where selfpara knows it (else litellm's provider default).
    A refused connection names it: litellm's exceptions carry a placeholder request to api.openai.com
    whatever the provider, so the URL they hold would misname an Ollama server."""
    return params.get("api_base") or known_base(model)


def _classify(model: str, exc: Exception, url: str | None = None) -> UpstreamError:
    """Map a litellm exception to an UpstreamError with a fitting status and retryability (a call to
    `url` that made no connection: UpstreamUnreachable, named so and not retried)."""
    litellm = import_litellm()

    capped = too_large_error(exc)
    if capped is not None:
        return UpstreamResponseTooLarge(f"{model}: {capped}")
    no_connection = unreachable(model, exc, url)
    if no_connection is not None:
        return no_connection
    name = type(exc).__name__
    message = str(exc).splitlines()[0] if str(exc) else name
    if isinstance(exc, litellm.Timeout):
        return UpstreamTimeout(f"{model}: timed out ({message})")
    if isinstance(exc, litellm.BadRequestError) and "LLM Provider NOT provided" in str(exc):
        return UpstreamError(f"unknown model {model!r}: name it as provider/model, e.g. openai/gpt-4o-mini", status=404)
    status = getattr(exc, "status_code", None)
    # every litellm status error (401, 404, 429, 5xx, ...) carries its code: mapped as the http transport maps it
    if isinstance(status, int) and status >= 300:
        return classify_status(model, status, message, _retry_after(exc))
    return UpstreamError(f"{model}: {name}: {message}", status=502)


def _retry_after(exc: Exception) -> str | None:
    """The upstream's Retry-After header behind a litellm exception, where it kept the response.

    Older litellm releases (1.83.0, the floor) keep the headers only in `litellm_response_headers`
    and leave `exc.response.headers` empty, so that is read first.
    """
    for headers in (
        getattr(exc, "litellm_response_headers", None),
        getattr(getattr(exc, "response", None), "headers", None),
    ):
        try:
            value = headers.get("retry-after") if headers is not None else None
        except Exception:  # a response object of another shape
            value = None
        if value:
            return str(value)
    return None
