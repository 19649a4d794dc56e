"""Passthrough: requests the method does not fit go to the upstream unchanged.

Every passthrough goes through the same model door as wrapped calls (`ModelClient.raw` /
`raw_stream`): the same timeout, retries, concurrency limit and secret-safe errors. The
http and litellm backends pass the body through as it came (tools, n, response_format,
logprobs, ...); a backend that only returns text (the embedded model, in-process fakes)
gets chat requests through `ModelClient.complete`, text only (`n` fans out into n
calls; tools and a JSON `response_format` are refused), and no other endpoint.

A passthrough stream ends by the whole-request deadline like every other request (an
upstream that trickles events is cut off with a request_timeout error event), and its
outcome (done, failed, cut off, or the client gone) is its one log line, at its end.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from fastapi.responses import Response, StreamingResponse

from selfpara.errors import SelfparaError, UpstreamError
from selfpara.models.client import ModelClient
from selfpara.result import Message, Usage
from selfpara.server.endpoint import Call
from selfpara.server.errors import ProxyError, too_large
from selfpara.server.output import SSE_HEADERS, GuardedStream, ScrubbedJSON, iterate, scrub
from selfpara.server.stream_scrub import StreamScrubber
from selfpara.server.streaming import DONE, answer_events, error_event, event, responses_error_event
from selfpara.util.extras import within
from selfpara.util.messages import content_text


async def respond(
    call: Call,
    client: ModelClient,
    model: str,
    body: dict[str, Any],
    *,
    endpoint: str,
    requested_model: str,
    reason: str,
    stream: bool,
) -> Response:
    """Pass `body` to the upstream's `endpoint` and answer with what comes back, marked
    as passthrough (`selfpara` field on chat and completion objects, a header always)."""
    marker = {"passthrough": True, "reason": reason, "request_id": call.rid}
    headers = {"X-Selfpara-Passthrough": reason}
    body = {k: v for k, v in body.items() if k != "selfpara"}  # ours, not the upstream's
    secrets = call.secrets
    cap = call.proxy.settings.max_upstream_response_bytes

    def mark(item: dict[str, Any], first: bool) -> dict[str, Any]:
        if "choices" in item:  # chat and text completions; Responses API objects are left as they are
            item["model"] = requested_model
            if first:
                item["selfpara"] = marker
        return scrub(item, secrets)

    if not client.can_pass_through(model, endpoint):
        if endpoint != "chat/completions":
            raise ProxyError(
                400, f"this proxy's upstream ({model}) cannot take {endpoint} requests", code="unsupported_endpoint"
            )
        data = await call.guarded(complete_text(client, model, body))
        if stream:  # a text-only backend: send the finished answer as a stream
            items = _as_events(data, requested_model, call, marker, body)
            call.done(200, mode="passthrough", reason=reason, stream=stream)
            return StreamingResponse(iterate(items), media_type="text/event-stream", headers={**headers, **SSE_HEADERS})
        answer = ScrubbedJSON(mark(data, True), secrets=secrets, headers=headers)
        call.done(200, mode="passthrough", reason=reason)
        return answer

    if not stream:
        data = await call.guarded(client.raw(model, body, endpoint=endpoint))
        # Encoded before the log line: an answer JSON cannot carry (NaN, a lone surrogate) is its 502.
        answer = ScrubbedJSON(mark(data, True), secrets=secrets, headers=headers)
        if len(answer.body) > cap:  # the litellm transport reads whole responses: the cap bounds what is relayed
            raise too_large()
        call.done(200, mode="passthrough", reason=reason)
        return answer

    chunks = await call.guarded(client.raw_stream(model, body, endpoint=endpoint))  # raises before a byte is sent
    iterator = chunks.__aiter__()
    # The first event before the response starts: a stream that fails or ends at once is the client's
    # 502 with its real status, not a 200 of no event.
    opening = await call.guarded(_opening(iterator, model))
    responses_api = endpoint == "responses"
    scrubber = StreamScrubber(secrets)
    finished = False  # the stream's outcome is logged (else the client hung up first)

    def error_events(err: ProxyError) -> list[bytes]:
        if responses_api:
            return [responses_error_event(err.body())]
        return [error_event(err.body()), DONE]

    async def sse() -> AsyncIterator[bytes]:
        nonlocal finished
        first = True
        sent = size = 0
        try:
            while True:
                try:
                    item = opening.pop(0) if opening else await within(max(call.left(), 0.0), iterator.__anext__())
                except StopAsyncIteration:
                    break
                except asyncio.TimeoutError:  # the whole-request deadline, however slowly the upstream trickles
                    err = call.deadline_error()
                    finished = True
                    call.done(err.status, mode="passthrough", reason=reason, stream=True, events=sent, error=err.code)
                    for piece in error_events(err):
                        yield piece
                    return
                for part in scrubber.events(item):  # a secret split across events is masked too
                    data = event(mark(part, first))  # raises the 502 of an event JSON cannot carry
                    first = False
                    sent += 1
                    size += len(data)
                    if size > cap:
                        raise too_large()
                    yield data
        except SelfparaError as exc:  # the upstream broke off mid-stream, or sent what cannot be relayed
            finished = True
            for piece in error_events(call.failed(exc, stream=True)):
                yield piece
            return
        except ProxyError as err:
            finished = True
            call.done(err.status, mode="passthrough", reason=reason, stream=True, events=sent, error=err.code)
            for piece in error_events(err):
                yield piece
            return
        finally:
            close = getattr(iterator, "aclose", None)
            if close is not None:  # frees the upstream connection at once, whatever ended the stream
                await close()
        for part in scrubber.rest():  # text held back at the end of a stream cut short of its finish
            sent += 1
            yield event(mark(part, first))
        finished = True
        call.done(200, mode="passthrough", reason=reason, stream=True, events=sent)
        yield DONE

    slot = call.slot
    assert slot is not None

    def on_close(cut: bool) -> None:
        if not finished:
            if cut:
                call.cut_by_shutdown(stream=True)
            else:
                call.gone(stream=True)
        slot.release()

    slot.handed_off = True
    return GuardedStream(sse(), on_close=on_close, headers={**headers, **SSE_HEADERS})


async def _opening(iterator: AsyncIterator[dict[str, Any]], model: str) -> list[dict[str, Any]]:
    """A stream's first event (and the next, when the first says nothing): UpstreamError, a 502, when
    the stream ends before an event that says something (it opened with `data: [DONE]`, say; over
    litellm that arrives as litellm's own closing chunk). The iterator is closed when this fails."""
    events: list[dict[str, Any]] = []
    try:
        while not events or (len(events) == 1 and _says_nothing(events[0])):
            events.append(await iterator.__anext__())
    except StopAsyncIteration:
        if not events or _says_nothing(events[0]):
            raise UpstreamError(f"{model}: upstream ended the stream without sending an event", status=502) from None
    except BaseException:
        close = getattr(iterator, "aclose", None)
        if close is not None:
            await close()
        raise
    return events


def _says_nothing(event: dict[str, Any]) -> bool:
    """Whether a chat or text completion stream event carries no role, text or call: a closing chunk
    (only a finish reason). Events of other streams (the Responses API's) always say something."""
    choices = event.get("choices")
    if not isinstance(choices, list) or not choices or event.get("usage"):
        return False
    for choice in choices:
        if not isinstance(choice, dict) or choice.get("text") is not None:
            return False
        delta = choice.get("delta")
        if isinstance(delta, dict) and any(delta.get(k) for k in ("role", "content", "tool_calls", "function_call")):
            return False
    return True


def _as_events(
    data: dict[str, Any], model: str, call: Call, marker: dict[str, Any], body: dict[str, Any]
) -> list[bytes]:
    choice = data["choices"][0]
    return list(
        answer_events(
            data["id"],
            data["created"],
            model,
            choice["message"]["content"] or "",
            chunk_chars=call.proxy.settings.stream_chunk_chars,
            finish_reason=choice.get("finish_reason") or "stop",
            usage=data.get("usage"),
            include_usage=bool((body.get("stream_options") or {}).get("include_usage")),
            report=marker,
            report_first=True,
            secrets=call.secrets,
        )
    )


def _text_messages(messages: list[dict[str, Any]]) -> list[Message]:
    """Chat messages with their content as text (InputError, a 400, for non-text parts)."""
    return [{"role": m.get("role"), "content": content_text(m.get("content"))} for m in messages]


async def complete_text(client: ModelClient, model: str, body: dict[str, Any]) -> dict[str, Any]:
    """Passthrough for a backend that only returns text (the embedded model, fakes)."""
    if body.get("tools") or body.get("functions"):
        raise ProxyError(400, f"the upstream {model} does not support tools", param="tools", code="unsupported")
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") not in (None, "text"):
        # Its answer would be prose, not the JSON asked for: refuse rather than answer 200 with the wrong thing.
        raise ProxyError(
            400,
            f"the upstream {model} does not support response_format {fmt.get('type')!r} (structured output)",
            param="response_format",
            code="unsupported",
        )
    n = int(body.get("n") or 1)
    usage = Usage()
    temperature = body.get("temperature")
    max_tokens = body.get("max_completion_tokens") or body.get("max_tokens") or 256
    messages = _text_messages(body["messages"])
    results = await asyncio.gather(
        *[
            client.complete(
                model,
                messages,
                usage=usage,
                temperature=0.0 if temperature is None else float(temperature),
                max_tokens=int(max_tokens),
                kind="passthrough",
            )
            for _ in range(n)
        ]
    )
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": i,
                "message": {"role": "assistant", "content": r.text},
                "finish_reason": r.finish_reason,
                "logprobs": None,
            }
            for i, r in enumerate(results)
        ],
        "usage": {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens,
        },
    }
