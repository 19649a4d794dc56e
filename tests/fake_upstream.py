"""A fake OpenAI-compatible upstream on loopback, for the proxy's tests and benchmark.

It is a real HTTP server (uvicorn, raw ASGI: no framework), so the proxy reaches it
through litellm exactly as it reaches vLLM or Ollama. It understands selfpara's own
prompts:

- the paraphrase prompt ("Rewrite the question ... in N different ways ... <question>q</question>")
  gets N numbered rewordings `[vI] ...` that share about half their words with the
  question (so they pass the lexical filter); the answer to a rewording knows its
  variant index I;
- the question-equivalence judge ("Answer YES or NO", two questions) says YES;
- the answer-equivalence judge (<answer_1>...</answer_1> <answer_2>...</answer_2>) says YES only when the
  normalised answers are equal;
- anything else is an answer: `answers[I]` for variant I (0 = the original), else `answer`.

`stream_s` spreads a streamed reply's words over that many seconds (a model writing it);
`whole_reply_first(ask)` streams the paraphrase reply's lines in one event instead, so adaptive k
has every line before it can settle.

Faults are injected per call kind: `fail(status=500, when="answer", times=2)`,
`hang(...)` (answers only after `delay_s`), `hold(...)` (answers only once the test calls
`release()`), `malformed(...)` (200 with a broken body), `not_sse(...)` (a plain JSON 200 to
a stream request), `raw(bytes_or_chunks, ...)` (these exact bytes, as a body or as an event
stream with gaps, or `held` after its first event until `release()`).

Tests synchronise on the fake, not on the clock: `wait_for_calls(n, kind=...)` returns once
the fake has received n such calls, and a held call stays in flight for as long as the test
needs it to.

It also serves /completions (kind "completion": the prompt echoed back) and /responses
(kind "response": a function call when tools are given, else the answer), reports
`finish_reason` (`fake.finish_reason`, default "stop"), returns token logprobs when
asked, and sets `system_fingerprint: "fp_fake"`.

Run alone (for the benchmarks):  python tests/fake_upstream.py --port 9100 --delay-ms 50
(`--fail-status 500`: a broken server that answers every chat call with a 500)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")

PARAPHRASE_MARKER = "Rewrite the question"
JUDGE_MARKER = "Answer YES or NO"
_VARIANT = re.compile(r"^\[v(\d+)\]")
_WORD = re.compile(r"[A-Za-z0-9']+")
_SUFFIXES = [
    "ish",
    "oid",
    "ful",
    "esque",
    "ling",
    "ward",
    "ster",
    "ette",
    "kin",
    "let",
    "ade",
    "ite",
    "ism",
    "ist",
    "ment",
    "ness",
    "ship",
    "hood",
    "dom",
    "ery",
]


@dataclass
class Fault:
    kind: str  # "status" | "hang" | "hold" | "malformed" | "not_sse" | "raw"
    when: str = "any"  # "any" (a chat call) | "answer" | "paraphrase" | "judge" | "completion" | "response" ("raw")
    status: int = 500
    delay_s: float = 0.0
    times: int | None = 1  # None: every matching call
    variant: int | None = None  # only answers to this variant
    message: str = "injected failure"
    contains: str | None = None  # only calls whose last user message contains this
    chunks: list[bytes] = field(default_factory=list)  # "raw": the body, or a stream's events (then `gap_s` apart)
    gap_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)  # "raw" and "status": extra response headers
    stream: bool = False  # "raw": send `chunks` as an event stream
    held: bool = False  # "hold": wait for `release()`; "raw" stream: so after the first chunk


@dataclass
class Call:
    kind: str
    variant: int | None
    text: str
    outcome: str
    authorization: str | None
    body: dict[str, Any] = field(repr=False, default_factory=dict)
    at: float = field(default_factory=time.monotonic)


def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _norm(text: str) -> str:
    return " ".join(_words(re.sub(r"\b(a|an|the)\b", " ", text.lower())))


def paraphrases(question: str, n: int) -> list[str]:
    """N rewordings that keep every other word of the question and change the rest, so their
    word overlap with the question and with each other is about 0.5: inside the filter's
    window (a content word in common, overlap below max_overlap 0.8)."""
    ws = _words(question) or ["question"]

    def reword(i: int) -> str:
        suffix = _SUFFIXES[i % len(_SUFFIXES)] + "z" * (i // len(_SUFFIXES))
        return " ".join(w if j % 2 == 0 else w + suffix for j, w in enumerate(ws))

    return [f"[v{i + 1}] {reword(i)}?" for i in range(n)]


def _last_user(messages: list[dict[str, Any]]) -> str:
    for m in reversed(messages):
        if m.get("role") == "user":
            c = m.get("content")
            if isinstance(c, list):
                return "\n".join(str(p.get("text", "")) for p in c if isinstance(p, dict))
            return str(c or "")
    return ""


class FakeUpstream:
    """The fake upstream's behaviour and its record of calls (thread-safe).

    Args:
        answer: the default answer text, or a function of the variant index.
        answers: answers for chosen variant indices (0 is the original).
        delay_s: seconds every call takes.
    """

    def __init__(
        self,
        answer: str | Callable[[int], str] = "Paris",
        *,
        answers: dict[int, str] | None = None,
        delay_s: float = 0.0,
    ) -> None:
        self.answer = answer
        self.answers = dict(answers or {})
        self.delay_s = delay_s
        self.faults: list[Fault] = []
        self.calls: list[Call] = []
        self.requests: list[tuple[str, str]] = []  # (method, path) of every HTTP request, any route
        self.finish_reason = "stop"
        self.stream_s = 0.0  # a streamed reply's words spread over this many seconds (0: all at once)
        self.lines_at_once = False  # a streamed paraphrase reply sends all its lines in one event
        self.light = False  # keep only kinds in `calls` (long benchmark runs)
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)  # notified at each call recorded
        self._gate: asyncio.Event | None = None  # what held calls wait on (made on the server's loop)
        self._gate_loop: asyncio.AbstractEventLoop | None = None

    # ---- scripting -------------------------------------------------------------------

    def reset(
        self,
        *,
        answer: str | Callable[[int], str] = "Paris",
        answers: dict[int, str] | None = None,
        delay_s: float = 0.0,
    ) -> None:
        self.release()  # a call the last test held answers now, and nothing is held any more
        with self._lock:
            self.answer, self.answers, self.delay_s = answer, dict(answers or {}), delay_s
            self.finish_reason = "stop"
            self.stream_s = 0.0
            self.lines_at_once = False
            self.faults.clear()
            self.calls.clear()
            self.requests.clear()

    def fail(
        self,
        status: int = 500,
        *,
        when: str = "any",
        times: int | None = 1,
        variant: int | None = None,
        message: str = "injected failure",
        contains: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        with self._lock:
            self.faults.append(
                Fault(
                    "status",
                    when,
                    status=status,
                    times=times,
                    variant=variant,
                    message=message,
                    contains=contains,
                    headers=dict(headers or {}),
                )
            )

    def hang(
        self,
        delay_s: float,
        *,
        when: str = "any",
        times: int | None = 1,
        variant: int | None = None,
        contains: str | None = None,
    ) -> None:
        with self._lock:
            self.faults.append(Fault("hang", when, delay_s=delay_s, times=times, variant=variant, contains=contains))

    def hold(
        self, *, when: str = "any", times: int | None = None, variant: int | None = None, contains: str | None = None
    ) -> None:
        """Matching calls are received (and recorded) but answered only once `release()` is called."""
        with self._lock:
            self.faults.append(Fault("hold", when, times=times, variant=variant, contains=contains, held=True))

    def release(self) -> None:
        """Every held call goes on (and a held stream sends the rest); later calls are held no more."""
        with self._lock:
            for fault in self.faults:
                fault.held = False  # a call that took it but is not waiting yet will not wait
            self.faults = [f for f in self.faults if f.kind != "hold"]
            gate, loop, self._gate = self._gate, self._gate_loop, None
        if gate is not None and loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(gate.set)

    def wait_for_calls(
        self, n: int = 1, *, kind: str | None = None, contains: str | None = None, timeout_s: float = 30.0
    ) -> list[Call]:
        """The calls (of `kind`, whose text holds `contains`) once there are at least `n`;
        AssertionError after `timeout_s` (a bound on a hang, not a measure)."""

        def matching() -> list[Call]:
            return [
                c for c in self.calls if (kind is None or c.kind == kind) and (contains is None or contains in c.text)
            ]

        with self._arrived:
            if not self._arrived.wait_for(lambda: len(matching()) >= n, timeout_s):
                raise AssertionError(f"the fake upstream got {len(matching())} of {n} {kind or ''} calls")
            return matching()

    def whole_reply_first(self, ask: Callable[[], T]) -> T:
        """`ask()`, one request whose paraphrase reply streams all its lines in one event (each line
        ended): the proxy takes every line at once, before it can ask for any paraphrase's answer, so
        adaptive k always sees the whole reply, however slowly either side runs. (Holding the answers
        until the fake had *sent* the reply was not enough: the proxy could still be reading the
        reply's events when the first answer came back.)"""
        self.lines_at_once = True
        try:
            return ask()
        finally:
            self.lines_at_once = False

    async def _held(self, fault: Fault) -> None:
        """Wait until the test calls `release()` (at once if it has since `fault` was taken)."""
        with self._lock:
            if not fault.held:
                return
            if self._gate is None:
                self._gate, self._gate_loop = asyncio.Event(), asyncio.get_running_loop()
            gate = self._gate
        await gate.wait()

    def malformed(
        self, *, when: str = "any", times: int | None = 1, variant: int | None = None, contains: str | None = None
    ) -> None:
        with self._lock:
            self.faults.append(Fault("malformed", when, times=times, variant=variant, contains=contains))

    def raw(
        self,
        chunks: bytes | list[bytes],
        *,
        status: int = 200,
        when: str = "any",
        times: int | None = 1,
        gap_s: float = 0.0,
        headers: dict[str, str] | None = None,
        stream: bool = False,
        contains: str | None = None,
        held: bool = False,
    ) -> None:
        """Answer matching calls with these exact bytes: one body, or (`stream`) a text/event-stream of
        `chunks` (each sent as it is, `gap_s` apart; add the `data: ` framing yourself). `held`: a
        stream sends its first chunk, then waits for `release()` before the rest."""
        parts = [chunks] if isinstance(chunks, bytes) else list(chunks)
        with self._lock:
            self.faults.append(
                Fault(
                    "raw",
                    when,
                    status=status,
                    times=times,
                    chunks=parts,
                    gap_s=gap_s,
                    headers=dict(headers or {}),
                    stream=stream,
                    contains=contains,
                    held=held,
                )
            )

    def not_sse(self, *, when: str = "any", times: int | None = 1) -> None:
        with self._lock:
            self.faults.append(Fault("not_sse", when, times=times))

    def calls_of(self, kind: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.kind == kind]

    # ---- behaviour ---------------------------------------------------------------------

    def _take_fault(self, kind: str, variant: int | None, text: str) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.contains is not None and fault.contains not in text:
                    continue
                if fault.times is not None and fault.times <= 0:
                    continue
                if fault.when != kind and (fault.when != "any" or kind in ("completion", "response")):
                    continue  # "any" is any chat call; /completions and /responses take faults named for them
                if fault.variant is not None and fault.variant != variant:
                    continue
                if fault.times is not None:
                    fault.times -= 1
                return fault
        return None

    def _answer_for(self, variant: int) -> str:
        if variant in self.answers:
            return self.answers[variant]
        return self.answer(variant) if callable(self.answer) else self.answer

    def reply(self, body: dict[str, Any]) -> tuple[str, int | None, str]:
        """(kind, variant, text) of the normal reply to `body`."""
        text = _last_user(body.get("messages") or [])
        if PARAPHRASE_MARKER in text:
            m = re.search(r"in (\d+) different ways", text)
            n = int(m.group(1)) if m else 3
            tagged = re.findall(r"<question>\n(.*?)\n</question>", text, re.DOTALL)
            q = tagged[-1].strip() if tagged else text.rsplit("Question:", 1)[-1].strip()
            return "paraphrase", None, "\n".join(f"{i + 1}. {p}" for i, p in enumerate(paraphrases(q, n)))
        if JUDGE_MARKER in text:
            m = re.search(r"<answer_1>\n(.*?)\n</answer_1>.*?<answer_2>\n(.*?)\n</answer_2>", text, re.DOTALL)
            if m:  # answer equivalence: equal after normalisation
                return "judge", None, "YES" if _norm(m.group(1)) == _norm(m.group(2)) else "NO"
            return "judge", None, "YES"
        m = _VARIANT.match(text.strip())
        variant = int(m.group(1)) if m else 0
        return "answer", variant, self._answer_for(variant)

    # ---- ASGI ----------------------------------------------------------------------------

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        path = scope["path"]
        with self._lock:
            self.requests.append((scope["method"], path))
        if path == "/_stats":  # for the benchmark: calls by kind since the last reset
            with self._lock:
                counts: dict[str, int] = {}
                for call in self.calls:
                    counts[call.kind] = counts.get(call.kind, 0) + 1
                if scope["method"] == "POST":
                    self.calls.clear()
            await _json(send, 200, {"calls": sum(counts.values()), "by_kind": counts})
            return
        if scope["method"] == "GET" and path.rstrip("/").endswith("/models"):
            with self._lock:
                self.calls.append(Call("models", None, "", "ok", None))
            await _json(
                send,
                200,
                {"object": "list", "data": [{"id": "fake", "object": "model", "created": 0, "owned_by": "fake"}]},
            )
            return
        route = path.rstrip("/").rsplit("/", 1)[-1]
        if scope["method"] != "POST" or route not in ("completions", "responses"):
            await _json(send, 404, {"error": {"message": f"no route {path}", "type": "invalid_request_error"}})
            return
        raw = b""
        while True:
            message = await receive()
            raw += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        try:
            body = json.loads(raw)
        except ValueError:
            await _json(send, 400, {"error": {"message": "bad json", "type": "invalid_request_error"}})
            return
        if not path.rstrip("/").endswith("/chat/completions"):
            await self._other_route(send, route, body, headers.get("authorization"))
            return
        kind, variant, text = self.reply(body)
        fault = self._take_fault(kind, variant, _last_user(body.get("messages") or []))
        outcome = "ok" if fault is None else fault.kind if fault.kind != "status" else str(fault.status)
        call = Call(
            kind,
            variant,
            "" if self.light else _last_user(body.get("messages") or [])[:200],
            outcome,
            headers.get("authorization"),
            {} if self.light else body,
        )
        with self._lock:
            self.calls.append(call)
            self._arrived.notify_all()
        await self._answer(send, body, text, fault)

    async def _answer(self, send: Any, body: dict[str, Any], text: str, fault: Fault | None) -> None:
        """A chat call's answer: after `delay_s`, as `fault` scripts it or the normal reply `text`."""
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if fault is not None:
            if fault.kind == "status":
                await _json(
                    send,
                    fault.status,
                    {"error": {"message": fault.message, "type": "server_error", "code": str(fault.status)}},
                    fault.headers,
                )
                return
            if fault.kind == "raw":
                await _scripted(send, fault, self._held)
                return
            if fault.kind == "malformed":
                await _raw(send, 200, b'{"id": "x", "choices": [ {"message": ', "application/json")
                return
            if fault.kind == "not_sse":
                await _json(send, 200, {"id": "x", "object": "chat.completion", "choices": []})
                return
            if fault.kind == "hang":
                await asyncio.sleep(fault.delay_s)
            if fault.kind == "hold":
                await self._held(fault)
        await self._respond(send, body, text)

    async def _respond(self, send: Any, body: dict[str, Any], text: str) -> None:
        model = body.get("model", "fake")
        n = int(body.get("n") or 1)
        fmt = (body.get("response_format") or {}).get("type")
        if fmt in ("json_schema", "json_object"):
            text = json.dumps({"answer": text})
        prompt_tokens = sum(len(str(m.get("content") or "").split()) for m in body.get("messages") or [])
        completion_tokens = max(1, len(text.split()))
        tools = body.get("tools")
        if tools:
            name = tools[0].get("function", {}).get("name", "tool")
            message: dict[str, Any] = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "call_fake_1", "type": "function", "function": {"name": name, "arguments": '{"q": "x"}'}}
                ],
            }
            finish = "tool_calls"
        else:
            message, finish = {"role": "assistant", "content": text}, (self.finish_reason if kind_of(body) else "stop")
        logprobs = None
        if body.get("logprobs"):  # one token per word, spaces leading, so the tokens join back to the text
            top = int(body.get("top_logprobs") or 0)
            logprobs = {
                "content": [
                    {
                        "token": w,
                        "logprob": -0.5,
                        "bytes": list(w.encode()),
                        "top_logprobs": [{"token": w, "logprob": -0.5, "bytes": list(w.encode())}][:top],
                    }
                    for w in re.findall(r"\s*\S+|\s+$", text)
                ],
                "refusal": None,
            }
        if body.get("stream"):
            pieces = (
                [text + "\n"]
                if self.lines_at_once and PARAPHRASE_MARKER in _last_user(body.get("messages") or [])
                else None
            )
            await self._stream(send, model, text, n, pieces)
            return
        await _json(
            send,
            200,
            {
                "id": f"chatcmpl-fake{time.monotonic_ns()}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "system_fingerprint": "fp_fake",
                "choices": [
                    {"index": i, "message": message, "finish_reason": finish, "logprobs": logprobs} for i in range(n)
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens * n,
                    "total_tokens": prompt_tokens + completion_tokens * n,
                },
            },
        )

    async def _other_route(self, send: Any, route: str, body: dict[str, Any], authorization: str | None) -> None:
        """/completions (the prompt echoed back after "echo:") and /responses."""
        kind = "completion" if route == "completions" else "response"
        fault = self._take_fault(kind, None, str(body.get("prompt") or body.get("input")))
        with self._lock:
            self.calls.append(
                Call(kind, None, str(body.get("prompt") or body.get("input"))[:200], "ok", authorization, body)
            )
        if fault is not None and fault.kind == "raw":  # scripted with when="completion" / "response"
            await _scripted(send, fault, self._held)
            return
        model = body.get("model", "fake")
        if kind == "completion":
            text = f"echo: {body.get('prompt')}"
            if body.get("stream"):
                await _sse(
                    send,
                    [
                        {
                            "id": "cmpl-fake",
                            "object": "text_completion",
                            "created": int(time.time()),
                            "model": model,
                            "choices": [{"index": 0, "text": w, "finish_reason": None}],
                        }
                        for w in re.findall(r"\S+\s*", text)
                    ],
                )
                return
            await _json(
                send,
                200,
                {
                    "id": "cmpl-fake",
                    "object": "text_completion",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [{"index": 0, "text": text, "finish_reason": "stop", "logprobs": None}],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3},
                },
            )
            return
        tools = body.get("tools") or []
        if tools:
            output: list[dict[str, Any]] = [
                {
                    "type": "function_call",
                    "id": "fc_fake",
                    "call_id": "call_fake",
                    "name": tools[0].get("name", "tool"),
                    "arguments": "{}",
                    "status": "completed",
                }
            ]
        else:
            output = [
                {
                    "type": "message",
                    "id": "msg_fake",
                    "status": "completed",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": self._answer_for(0), "annotations": []}],
                }
            ]
        await _json(
            send,
            200,
            {
                "id": "resp_fake",
                "object": "response",
                "created_at": int(time.time()),
                "model": model,
                "status": "completed",
                "output": output,
                "parallel_tool_calls": True,
                "tool_choice": "auto",
                "tools": tools,
                "error": None,
                "incomplete_details": None,
                "instructions": None,
                "metadata": {},
                "temperature": None,
                "top_p": None,
                "usage": {
                    "input_tokens": 1,
                    "output_tokens": 1,
                    "total_tokens": 2,
                    "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens_details": {"reasoning_tokens": 0},
                },
            },
        )

    async def _stream(self, send: Any, model: str, text: str, n: int, pieces: list[str] | None = None) -> None:
        """`text` as an event stream of `n` choices, a word an event (or these `pieces`, an event each)."""
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")],
            }
        )
        base = {
            "id": f"chatcmpl-fake{time.monotonic_ns()}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
        }

        async def emit(choices: list[dict[str, Any]]) -> None:
            data = json.dumps({**base, "choices": choices}).encode()
            await send({"type": "http.response.body", "body": b"data: " + data + b"\n\n", "more_body": True})

        words = pieces or re.findall(r"\S+\s*", text)
        start = time.monotonic()
        for i in range(n):
            await emit([{"index": i, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
            for j, word in enumerate(words, 1):
                if self.stream_s:  # to a deadline, so the stream takes stream_s however late each wake-up is
                    await asyncio.sleep(max(0.0, start + self.stream_s * j / len(words) - time.monotonic()))
                await emit([{"index": i, "delta": {"content": word}, "finish_reason": None}])
            await emit([{"index": i, "delta": {}, "finish_reason": "stop"}])
        await send({"type": "http.response.body", "body": b"data: [DONE]\n\n", "more_body": False})


def kind_of(body: dict[str, Any]) -> bool:
    """Whether `body` asks for an answer (not a paraphrase or a judgement)."""
    text = _last_user(body.get("messages") or [])
    return PARAPHRASE_MARKER not in text and JUDGE_MARKER not in text


async def _sse(send: Any, items: list[dict[str, Any]]) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
    for item in items:
        await send(
            {"type": "http.response.body", "body": b"data: " + json.dumps(item).encode() + b"\n\n", "more_body": True}
        )
    await send({"type": "http.response.body", "body": b"data: [DONE]\n\n", "more_body": False})


async def _scripted(send: Any, fault: Fault, held: Callable[[Fault], Awaitable[None]]) -> None:
    """A "raw" fault's bytes: one body, or an event stream of its chunks `gap_s` apart (and, when
    the fault is `held`, the rest only once `held()` returns)."""
    if not fault.stream:
        await _raw(send, fault.status, b"".join(fault.chunks), "application/json", fault.headers)
        return
    headers = [(b"content-type", b"text/event-stream"), *[(k.encode(), v.encode()) for k, v in fault.headers.items()]]
    await send({"type": "http.response.start", "status": fault.status, "headers": headers})
    for i, part in enumerate(fault.chunks):
        if i == 1:
            await held(fault)
        if i and fault.gap_s:
            await asyncio.sleep(fault.gap_s)
        await send({"type": "http.response.body", "body": part, "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _json(send: Any, status: int, data: dict[str, Any], headers: dict[str, str] | None = None) -> None:
    await _raw(send, status, json.dumps(data).encode(), "application/json", headers)


async def _raw(send: Any, status: int, body: bytes, ctype: str, headers: dict[str, str] | None = None) -> None:
    extra = [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", ctype.encode()), (b"content-length", str(len(body)).encode()), *extra],
        }
    )
    await send({"type": "http.response.body", "body": body})


# ---- running servers on loopback ----------------------------------------------------------


class ThreadedServer:
    """Runs an ASGI app with uvicorn on a free 127.0.0.1 port in a background thread."""

    def __init__(self, app: Any, *, graceful_s: float = 1.0, **config: Any) -> None:
        import uvicorn

        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        cfg = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=graceful_s, **config)
        self.server = uvicorn.Server(cfg)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ThreadedServer:
        if self.server.started:
            return self
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()

    def __enter__(self) -> ThreadedServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_fake() -> Iterator[FakeUpstream]:
    """A module fixture's body: a FakeUpstream on loopback with its base URL in `.url`."""
    upstream = FakeUpstream()
    server = ThreadedServer(upstream, lifespan="off").start()
    upstream.url = f"{server.base}/v1"  # type: ignore[attr-defined]
    yield upstream
    server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description="fake OpenAI-compatible upstream")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9100)
    parser.add_argument("--delay-ms", type=float, default=50.0)
    parser.add_argument("--answer", default="Paris")
    parser.add_argument(
        "--fail-status", type=int, default=None, help="answer every chat call with this HTTP status (a broken server)"
    )
    args = parser.parse_args()

    import uvicorn

    fake = FakeUpstream(args.answer, delay_s=args.delay_ms / 1000)
    fake.light = True
    if args.fail_status is not None:
        fake.fail(args.fail_status, times=None, message=f"this fake upstream answers {args.fail_status} to every call")
    uvicorn.run(
        fake, host=args.host, port=args.port, log_level="warning", access_log=False, lifespan="on", backlog=4096
    )


if __name__ == "__main__":
    main()
