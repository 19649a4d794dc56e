"""POST /v1/completions: text completions pass through to the upstream.

A prompt is not a chat question (lm-eval's `local-completions` sends documents to score
with `echo` and `logprobs`), so nothing is wrapped: the body goes to the upstream's own
/completions through the model door, with the proxy's limits and model names. A
`selfpara` block other than `{"enabled": ...}` (a per-request `api_base`, `k`, ...) is
refused with 400 rather than ignored.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from selfpara.server import passthrough
from selfpara.server.endpoint import Call, handle
from selfpara.server.errors import ProxyError, bad_request
from selfpara.server.plan import validate


class CompletionRequest(BaseModel):
    """The fields of a text completion request the proxy checks; the rest pass as they came."""

    model_config = ConfigDict(extra="allow")

    model: str = Field(min_length=1)
    prompt: str | list[Any]
    stream: bool = Field(False, strict=True)
    max_tokens: int | None = Field(None, ge=0, strict=True)
    n: int | None = Field(None, ge=1, strict=True)
    best_of: int | None = Field(None, ge=1, strict=True)


def prompt_count(prompt: str | list[Any]) -> int:
    """How many prompts `prompt` holds: a string or one list of token ids is one, a list of strings or
    of token-id lists is one each."""
    if isinstance(prompt, str) or all(isinstance(p, int) and not isinstance(p, bool) for p in prompt):
        return 1
    return len(prompt)


async def completions(request: Request) -> Response:
    return await handle(request, _completions)


async def _completions(call: Call, body: dict[str, Any]) -> Response:
    req: CompletionRequest = validate(CompletionRequest, body)
    call.model = req.model
    settings = call.proxy.settings
    if not settings.serves(req.model):
        raise ProxyError(
            404,
            f"unknown model {req.model!r}; this proxy serves {settings.model_names()}",
            param="model",
            code="model_not_found",
        )
    if req.max_tokens is not None and req.max_tokens > settings.max_max_tokens:
        raise bad_request(
            f"max_tokens={req.max_tokens} exceeds this proxy's limit {settings.max_max_tokens}", param="max_tokens"
        )
    if (req.n or 1) > settings.max_k + 1:
        raise bad_request(f"n={req.n} exceeds this proxy's limit {settings.max_k + 1}", param="n")
    if (req.best_of or 1) > settings.max_k + 1:  # the upstream makes best_of completions to return n
        raise bad_request(f"best_of={req.best_of} exceeds this proxy's limit {settings.max_k + 1}", param="best_of")
    prompts = prompt_count(req.prompt)
    if prompts > settings.max_prompts:
        raise bad_request(f"{prompts} prompts; this proxy's limit is {settings.max_prompts}", param="prompt")
    options = body.get("selfpara")
    if options is not None and (not isinstance(options, dict) or set(options) - {"enabled"}):
        # Nothing is wrapped here: a per-request upstream (api_base) or any setting would be ignored silently.
        raise bad_request(
            "text completions pass through to the proxy's own upstream: `selfpara` settings "
            "(api_base, k, ...) do not apply to /v1/completions",
            param="selfpara",
        )
    call.enter()
    return await passthrough.respond(
        call,
        call.proxy.client,
        settings.upstream.model,
        body,
        endpoint="completions",
        requested_model=req.model,
        reason="completions",
        stream=req.stream,
    )
