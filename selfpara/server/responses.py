"""POST /v1/responses: the Responses API, wrapped like chat where the method fits.

A text `input`, or a list of plain message items (roles user / assistant / system /
developer, text content), with optional `instructions`, is turned into chat messages
and answered by the pipeline; the answer comes back as a `response` object (or its
event stream) with the `selfpara` report. Anything else (tools, function-call items,
images, `previous_response_id`, a JSON `text.format`, `selfpara.enabled: false`) is
passed to the upstream's own /responses when its transport can, and refused with a
clear 400 (`unsupported_responses_input`) when it cannot.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from fastapi import Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from selfpara.result import WrappedAnswer
from selfpara.server import passthrough, wrapped
from selfpara.server.endpoint import Call, handle
from selfpara.server.errors import ProxyError, bad_request
from selfpara.server.output import ScrubbedJSON, scrub, scrub_text
from selfpara.server.plan import messages_of, plan_request, validate
from selfpara.server.schema import ChatCompletionRequest
from selfpara.server.streaming import named_event, responses_error_event, split_text

_ROLES = {"user", "assistant", "system", "developer"}
_TEXT_PARTS = {"input_text", "output_text", "text"}


class ResponsesRequest(BaseModel):
    """The fields of a Responses API request the proxy reads; the rest pass through or are listed as ignored."""

    model_config = ConfigDict(extra="allow")

    model: str = Field(min_length=1)
    input: str | list[dict[str, Any]]
    instructions: str | None = None
    stream: bool = Field(False, strict=True)
    temperature: float | None = Field(None, strict=True)
    max_output_tokens: int | None = Field(None, ge=1, strict=True)
    tools: list[dict[str, Any]] | None = None
    tool_choice: Any = None
    previous_response_id: str | None = None
    text: dict[str, Any] | None = None
    selfpara: dict[str, Any] | None = None


# Fields the wrapped path reads; others (metadata, store, top_p, ...) are listed in ignored_params.
_WRAPPED_FIELDS = {
    "model",
    "input",
    "instructions",
    "stream",
    "temperature",
    "max_output_tokens",
    "tools",
    "tool_choice",
    "previous_response_id",
    "text",
    "selfpara",
    "store",
    "metadata",
    "user",
}


def check_input(req: ResponsesRequest) -> None:
    """400 for what no upstream could take either: an empty input, a `text.format` that is no
    object, items without a role or type (checked before any upstream call, like chat input)."""
    if isinstance(req.input, list) and not req.input:
        raise bad_request("invalid request: input: give a text or at least one input item", param="input")
    text = req.text or {}
    fmt = text.get("format")
    if fmt is not None and (not isinstance(fmt, dict) or not isinstance(fmt.get("type"), str)):
        raise bad_request(
            'invalid request: text.format must be an object with a `type` ("text", "json_object", "json_schema")',
            param="text.format",
        )
    if isinstance(req.input, list):
        for i, item in enumerate(req.input):
            if not isinstance(item.get("type", "message"), str) or not (item.get("type") or item.get("role")):
                raise bad_request(f"invalid request: input.{i}: an item needs a `type` or a `role`", param=f"input.{i}")


def to_messages(req: ResponsesRequest) -> tuple[list[dict[str, Any]], str | None]:
    """The request as chat messages, or why it cannot be wrapped (then the messages are [])."""
    if req.tools or req.tool_choice not in (None, "none", "auto"):
        return [], "tools"
    if req.previous_response_id:
        return [], "previous_response_id"
    fmt = ((req.text or {}).get("format") or {}).get("type")  # an object: check_input saw to it
    if fmt in ("json_schema", "json_object"):
        return [], fmt
    messages: list[dict[str, Any]] = []
    if req.instructions:
        messages.append({"role": "system", "content": req.instructions})
    if isinstance(req.input, str):
        return [*messages, {"role": "user", "content": req.input}], None
    for i, item in enumerate(req.input):
        if item.get("type", "message") != "message" or item.get("role") not in _ROLES:
            return [], "non_message_items"
        content = item.get("content")
        if isinstance(content, list):
            if not all(isinstance(p, dict) and p.get("type") in _TEXT_PARTS for p in content):
                return [], "non_text_content"
            if not all(isinstance(p.get("text"), str) for p in content):
                raise bad_request(f"invalid request: input.{i}.content: `text` must be a string", param=f"input.{i}")
            content = "\n".join(p["text"] for p in content)
        elif not isinstance(content, str):
            raise bad_request(f"invalid request: input.{i}.content must be a string or text parts", param=f"input.{i}")
        messages.append({"role": item["role"], "content": content})
    return messages, None


async def responses(request: Request) -> Response:
    return await handle(request, _responses)


async def _responses(call: Call, body: dict[str, Any]) -> Response:
    req: ResponsesRequest = validate(ResponsesRequest, body)
    call.model = req.model
    check_input(req)
    messages, reason = to_messages(req)
    chat_body: dict[str, Any] = {
        "model": req.model,
        "messages": messages or [{"role": "user", "content": "-"}],  # for the checks when passing through
        "temperature": req.temperature,
        "max_tokens": req.max_output_tokens,
        "selfpara": req.selfpara,
    }
    chat_req = validate(ChatCompletionRequest, {k: v for k, v in chat_body.items() if v is not None})
    plan = await plan_request(call.proxy, chat_req, call.request.scope.get("server"))
    reason = reason or plan.reason
    call.enter()
    if reason is not None:
        if not plan.client.can_pass_through(plan.model, "responses"):
            raise ProxyError(
                400,
                f"this proxy cannot wrap this Responses request ({reason}) and its upstream transport does not "
                "take /responses; send it to /v1/chat/completions instead",
                code="unsupported_responses_input",
            )
        return await passthrough.respond(
            call,
            plan.client,
            plan.model,
            body,
            endpoint="responses",
            requested_model=req.model,
            reason=reason,
            stream=req.stream,
        )

    ignored = sorted(k for k in body if k not in _WRAPPED_FIELDS)
    work = plan.paraphraser.aanswer(messages_of(chat_req), **plan.overrides)
    response_id, message_id, created = f"resp_{uuid.uuid4().hex}", f"msg_{uuid.uuid4().hex}", int(time.time())

    def response(wa: WrappedAnswer | None) -> dict[str, Any]:
        return build(req, response_id, message_id, created, wa, call, ignored)

    if req.stream:

        def render(wa: WrappedAnswer) -> list[bytes]:
            return stream_events(response(None), response(wa), call)

        def error_events(err: ProxyError) -> list[bytes]:
            return [responses_error_event(err.body())]

        return await wrapped.stream(call, work, render, error_events)

    wa = await call.guarded(work)
    answer = ScrubbedJSON(response(wa), secrets=call.secrets, headers=wrapped.headers(wa))
    wrapped.done(call, wa)  # after the answer is encoded: an answer JSON cannot carry is logged as its 502
    return answer


def build(
    req: ResponsesRequest,
    response_id: str,
    message_id: str,
    created: int,
    wa: WrappedAnswer | None,
    call: Call,
    ignored: list[str],
) -> dict[str, Any]:
    """The `response` object: in progress (no answer yet) or finished with `wa`."""
    out: dict[str, Any] = {
        "id": response_id,
        "object": "response",
        "created_at": created,
        "model": req.model,
        "status": "in_progress",
        "error": None,
        "incomplete_details": None,
        "instructions": req.instructions,
        "max_output_tokens": req.max_output_tokens,
        "temperature": req.temperature,
        "top_p": None,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "text": {"format": {"type": "text"}},
        "metadata": body_metadata(req),
        "output": [],
        "usage": None,
    }
    if wa is None:
        return out
    text = scrub_text(wa.answer, call.secrets)
    cut = wrapped.finish_reason(wa) == "length"
    out["status"] = "incomplete" if cut else "completed"
    out["incomplete_details"] = {"reason": "max_output_tokens"} if cut else None
    out["output"] = [
        {
            "id": message_id,
            "type": "message",
            "status": out["status"],
            "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
    ]
    usage = wrapped.client_usage(wa)
    out["usage"] = {
        "input_tokens": usage["prompt_tokens"],
        "output_tokens": usage["completion_tokens"],
        "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"],
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }
    out["selfpara"] = wrapped.report(wa, call, ignored=ignored)
    return scrub(out, call.secrets)


def body_metadata(req: ResponsesRequest) -> dict[str, Any]:
    metadata = (req.model_extra or {}).get("metadata")
    return metadata if isinstance(metadata, dict) else {}


def sse(kind: str, data: dict[str, Any]) -> bytes:
    """One named Responses API event."""
    return named_event(kind, data)


def stream_events(started: dict[str, Any], done: dict[str, Any], call: Call) -> list[bytes]:
    """The Responses API events of a finished answer: created, the message's text in deltas, completed."""
    item = done["output"][0]
    text = item["content"][0]["text"]
    ids = {"item_id": item["id"], "output_index": 0, "content_index": 0}
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"response": started}),
        ("response.in_progress", {"response": started}),
        ("response.output_item.added", {"output_index": 0, "item": {**item, "status": "in_progress", "content": []}}),
        ("response.content_part.added", {**ids, "part": {"type": "output_text", "text": "", "annotations": []}}),
        *[
            ("response.output_text.delta", {**ids, "delta": piece})
            for piece in split_text(text, call.proxy.settings.stream_chunk_chars)
        ],
        ("response.output_text.done", {**ids, "text": text}),
        ("response.content_part.done", {**ids, "part": item["content"][0]}),
        ("response.output_item.done", {"output_index": 0, "item": item}),
        ("response.completed" if done["status"] == "completed" else "response.incomplete", {"response": done}),
    ]
    return [sse(kind, {"type": kind, "sequence_number": n, **data}) for n, (kind, data) in enumerate(events)]
