"""Server-sent events for `stream: true`.

The wrapped answer exists only after the vote, so the stream is honest about it: SSE
comment lines (`: keep-alive`) flow while the pipeline works, then the chosen answer is
sent as a role chunk, content chunks and a final chunk with finish_reason (which also
carries the `selfpara` report), an optional usage chunk, and `data: [DONE]`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from selfpara.server.output import dump_json, scrub, scrub_text
from selfpara.server.schema import chunk

KEEPALIVE = b": keep-alive\n\n"
DONE = b"data: [DONE]\n\n"

_PIECE = re.compile(r"\s*\S+|\s+$")


def event(data: dict[str, Any]) -> bytes:
    """One `data:` event (the proxy error upstream_invalid_response when `data` cannot be JSON)."""
    return b"data: " + dump_json(data) + b"\n\n"


def named_event(kind: str, data: dict[str, Any]) -> bytes:
    """One named event (`event: KIND`), as the Responses API streams them."""
    return f"event: {kind}\ndata: ".encode() + dump_json(data) + b"\n\n"


def responses_error_event(body: dict[str, Any], sequence_number: int = 0) -> bytes:
    """A Responses API `error` event for an OpenAI error `body` ({"error": {...}}): the form the
    `openai` client's Responses stream raises on (the chat form would be skipped as unknown)."""
    error = body.get("error") or {}
    data = {
        "type": "error",
        "code": error.get("code"),
        "message": error.get("message"),
        "param": error.get("param"),
        "sequence_number": sequence_number,
        "error": error,
    }
    return named_event("error", data)


def split_text(text: str, size: int) -> list[str]:
    """Split `text` at whitespace into pieces of about `size` characters; they join back to `text`."""
    if not text:
        return []
    pieces: list[str] = []
    current = ""
    for match in _PIECE.finditer(text):
        current += match.group(0)
        if len(current) >= size:
            pieces.append(current)
            current = ""
    if current:
        pieces.append(current)
    if "".join(pieces) != text:  # whitespace-only or unusual text: never lose a character
        return [text[i : i + size] for i in range(0, len(text), size)]
    return pieces


def answer_events(
    completion_id: str,
    created: int,
    model: str,
    text: str,
    *,
    chunk_chars: int,
    finish_reason: str = "stop",
    usage: dict[str, int] | None = None,
    include_usage: bool = False,
    report: dict[str, Any] | None = None,
    report_first: bool = False,
    secrets: list[str | None] = (),  # type: ignore[assignment]
    system_fingerprint: str | None = None,
    logprobs: list[dict[str, Any]] | None = None,
) -> Iterator[bytes]:
    """The events of one finished answer, `data: [DONE]` included, with `secrets` scrubbed
    from every event (from the text before it is split, so no secret straddles two chunks).
    `report` rides on the final chunk (the wrapped report), or on the first with
    `report_first` (a passthrough marker, where passthrough streams from the upstream
    carry it). `logprobs` (the answer's tokens, OpenAI form) ride on the content chunks:
    each chunk carries its own tokens when they join back to `text`, else the first all."""
    secrets = list(secrets)
    extra: dict[str, Any] = {"selfpara": report} if report is not None else {}
    first, last = (extra, {}) if report_first else ({}, extra)

    def out(data: dict[str, Any]) -> bytes:
        if system_fingerprint is not None:
            data["system_fingerprint"] = system_fingerprint
        return event(scrub(data, secrets))

    yield out(chunk(completion_id, created, model, delta={"role": "assistant", "content": ""}, **first))
    clean = scrub_text(text, secrets)
    # Token-aligned chunks only when no secret was scrubbed (one could straddle two chunks).
    groups = token_groups(logprobs, text, chunk_chars) if logprobs and clean == text else None
    if groups is None:
        groups = [(piece, logprobs if i == 0 else None) for i, piece in enumerate(split_text(clean, chunk_chars))]
    for piece, tokens in groups:
        yield out(chunk(completion_id, created, model, delta={"content": piece}, logprobs=tokens))
    yield out(chunk(completion_id, created, model, delta={}, finish_reason=finish_reason, **last))
    if include_usage and usage is not None:
        yield out(chunk(completion_id, created, model, usage=usage, no_choices=True))
    yield DONE


def token_groups(
    tokens: list[dict[str, Any]], text: str, size: int
) -> list[tuple[str, list[dict[str, Any]] | None]] | None:
    """`text` cut at token boundaries into pieces of about `size` characters, each with its
    tokens; None when the tokens do not join back to `text` exactly."""
    if "".join(str(t.get("token", "")) for t in tokens) != text:
        return None
    groups: list[tuple[str, list[dict[str, Any]] | None]] = []
    piece, members = "", []
    for token in tokens:
        piece += str(token.get("token", ""))
        members.append(token)
        if len(piece) >= size:
            groups.append((piece, members))
            piece, members = "", []
    if members:
        groups.append((piece, members))
    return groups


def error_event(body: dict[str, Any]) -> bytes:
    """An error after the stream started (its 200 status is already sent): the `openai`
    client raises APIError on a `data:` event that holds an `error` object."""
    return event(body)
