"""POST /v1/chat/completions: the wrapped answer (plain or streamed) or the passthrough."""

from __future__ import annotations

import time
import uuid
from typing import Any

from fastapi import Request
from fastapi.responses import Response

from selfpara.result import WrappedAnswer
from selfpara.server import passthrough, wrapped
from selfpara.server.endpoint import Call, handle
from selfpara.server.errors import ProxyError
from selfpara.server.output import ScrubbedJSON
from selfpara.server.plan import messages_of, plan_request, validate
from selfpara.server.schema import ChatCompletion, ChatCompletionRequest, Choice, CompletionUsage, ResponseMessage
from selfpara.server.streaming import DONE, answer_events, error_event


async def chat_completions(request: Request) -> Response:
    return await handle(request, _chat)


def _usage(wa: WrappedAnswer) -> dict[str, int]:
    usage = wrapped.client_usage(wa)
    return CompletionUsage(
        prompt_tokens=usage["prompt_tokens"],
        completion_tokens=usage["completion_tokens"],
        total_tokens=usage["prompt_tokens"] + usage["completion_tokens"],
    ).model_dump()


async def _chat(call: Call, body: dict[str, Any]) -> Response:
    req: ChatCompletionRequest = validate(ChatCompletionRequest, body)
    call.model = req.model
    plan = await plan_request(call.proxy, req, call.request.scope.get("server"))
    call.enter()
    if plan.mode == "passthrough":
        assert plan.reason is not None
        return await passthrough.respond(
            call,
            plan.client,
            plan.model,
            body,
            endpoint="chat/completions",
            requested_model=req.model,
            reason=plan.reason,
            stream=req.stream,
        )
    fingerprint = wrapped.fingerprint(plan.cfg)
    work = plan.paraphraser.aanswer(messages_of(req), **plan.overrides)

    if req.stream:
        completion_id = f"chatcmpl-{uuid.uuid4().hex}"
        created = int(time.time())
        include_usage = bool((req.stream_options or {}).get("include_usage"))

        def render(wa: WrappedAnswer) -> list[bytes]:
            return list(
                answer_events(
                    completion_id,
                    created,
                    req.model,
                    wa.answer,
                    chunk_chars=call.proxy.settings.stream_chunk_chars,
                    finish_reason=wrapped.finish_reason(wa),
                    usage=_usage(wa),
                    include_usage=include_usage,
                    report=wrapped.report(wa, call, ignored=plan.ignored, notes=_notes(wa, req)),
                    secrets=call.secrets,
                    system_fingerprint=fingerprint,
                    logprobs=wrapped.chosen_logprobs(wa) if req.logprobs else None,
                )
            )

        def error_events(err: ProxyError) -> list[bytes]:
            return [error_event(err.body()), DONE]

        return await wrapped.stream(call, work, render, error_events)

    wa = await call.guarded(work)
    tokens = wrapped.chosen_logprobs(wa) if req.logprobs else None
    completion = ChatCompletion(
        id=f"chatcmpl-{uuid.uuid4().hex}",
        model=req.model,
        choices=[
            Choice(
                message=ResponseMessage(content=wa.answer),
                finish_reason=wrapped.finish_reason(wa),
                logprobs=None if tokens is None else {"content": tokens, "refusal": None},
            )
        ],
        usage=CompletionUsage(**_usage(wa)),
        system_fingerprint=fingerprint,
        selfpara=wrapped.report(wa, call, ignored=plan.ignored, notes=_notes(wa, req)),
    )
    answer = ScrubbedJSON(completion.model_dump(), secrets=call.secrets, headers=wrapped.headers(wa))
    wrapped.done(call, wa)  # after the answer is encoded: an answer JSON cannot carry is logged as its 502
    return answer


def _notes(wa: WrappedAnswer, req: ChatCompletionRequest) -> list[str]:
    """The response's `selfpara.notes`: logprobs asked for but missing."""
    return wrapped.logprob_notes(wa, req.logprobs)
