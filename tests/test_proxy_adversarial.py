"""The proxy as an attacker or a careless client meets it: each probe replayed
against the real server (uvicorn on loopback) and the scriptable fake upstream, checking
the status, the body, the upstream calls spent, what lands in the log, and that the
server is healthy afterwards. Also the API surface real clients need: the official
`openai` client's `responses.create`, `models.retrieve` and `completions.create`."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from selfpara.server.logs import TextFormatter
from tests.fake_upstream import FakeUpstream, ThreadedServer
from tests.helpers.proxy import (  # fake, reset_fake: the module's fake upstream, reset before each test
    AUTH,
    PROXY_KEY,
    UPSTREAM_KEY,
    BackgroundStream,
    Q,
    assert_openai_error,
    chat,
    fake,
    healthy,
    post,
    reset_fake,
    settings_for,
    sse_lines,
    start,
    wait_idle,
)

FIXTURES = (fake, reset_fake)
SECRET_DSN = "postgres://admin:hunter2-db-pass@10.9.8.7:5432/prod"


@pytest.fixture(scope="module")
def proxy(fake: FakeUpstream) -> Iterator[ThreadedServer]:
    server = start(settings_for(fake))
    yield server
    server.stop()


@pytest.fixture()
def client(proxy: ThreadedServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{proxy.base}/v1", api_key=PROXY_KEY, max_retries=0, timeout=30)


# ---- 1. the upstream key in a streamed answer -------------------------------------------------


def assert_key_masked(text: str) -> None:
    assert UPSTREAM_KEY not in text and "Bearer ***" in text.replace("\\u0020", " ")


def test_upstream_key_echoed_in_an_answer_never_reaches_a_response(fake: FakeUpstream) -> None:
    """Answered before the first keep-alive is due (no keep-alive for a minute): the whole answer at once."""
    fake.reset(answer=f"Authorization: Bearer {UPSTREAM_KEY}")
    with start(settings_for(fake, keepalive_s=60.0)) as server:
        for body in (chat(stream=True), chat()):
            r = post(server, body)
            assert r.status_code == 200 and ": keep-alive" not in r.text
            assert_key_masked(r.text)
        healthy(server, fake)


def test_upstream_key_echoed_in_an_answer_never_reaches_a_stream_after_its_keepalive(
    proxy: ThreadedServer, fake: FakeUpstream
) -> None:
    fake.reset(answer=f"Authorization: Bearer {UPSTREAM_KEY}")
    fake.hold(when="answer")  # answered only once the stream has begun
    stream = BackgroundStream(proxy, chat(stream=True))
    assert stream.wait_started() == ": keep-alive"
    fake.release()
    lines = stream.join()
    assert stream.status == 200 and lines[-1] == "data: [DONE]"
    assert_key_masked("\n".join(lines))
    healthy(proxy, fake)


# ---- 2. upstream error text ----------------------------------------------------------------------


def test_upstream_error_text_stays_in_the_log(
    proxy: ThreadedServer, fake: FakeUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    leak = f"cannot reach {SECRET_DSN} from /srv/internal/app.py via http://10.9.8.7:9000/v1"
    fake.fail(500, when="answer", times=None, message=leak)
    with caplog.at_level(logging.INFO, logger="selfpara"):
        r = post(proxy, chat())
    error = assert_openai_error(r, 502, "upstream_failed")
    assert "10.9.8.7" not in r.text and "/srv/internal" not in r.text and "hunter2" not in r.text
    assert r.headers["x-request-id"] in error["message"]
    # the operator sees the details, minus the password
    assert "/srv/internal/app.py" in caplog.text and "hunter2" not in caplog.text
    assert "postgres://admin:***@" in caplog.text

    # a partial failure: answers[i].error and rejected[].detail carry generic reasons only
    fake.reset()
    fake.fail(500, when="answer", variant=2, times=None, message=leak)
    fake.fail(400, when="judge", times=1, message=leak)
    r = post(proxy, chat(selfpara={"paraphrase_check": "llm"}))
    assert r.status_code == 200
    report = r.json()["selfpara"]
    assert "10.9.8.7" not in r.text and "hunter2" not in r.text and "/srv" not in r.text
    assert len(report["failed_variants"]) == 1
    assert {a["error"] for a in report["answers"] if a["error"]} == {"the upstream failed (after retries)"}
    checked = [x for x in report["rejected"] if x["reason"] == "check_failed"]
    assert checked and checked[0]["detail"] == "the upstream rejected the request"
    healthy(proxy, fake)


def test_passthrough_error_text_is_generic(proxy: ThreadedServer, fake: FakeUpstream) -> None:
    fake.fail(400, times=None, message=f"bad request, see {SECRET_DSN}")
    r = post(proxy, chat(selfpara={"enabled": False}))
    error = assert_openai_error(r, 400, "upstream_rejected_request")
    assert "hunter2" not in r.text and "10.9.8.7" not in r.text
    assert error["message"].startswith("the upstream rejected the request")


# ---- 3, 4, 9. malformed input is a 400 before any upstream call ---------------------------------


@pytest.mark.parametrize(
    "raw, where",
    [
        ('{"model": "openai/fake", "messages": [{"role": "user", "content": "caf\\ud800?"}]}', "surrogate"),
        ('{"model": "openai/fake", "stream": true, "messages": [{"role": "user", "content": "\\udfff"}]}', "surrogate"),
        ("[" * 9000 + "]" * 9000, "nested"),
        ('{"model": "openai/fake", "messages": [' + "[" * 5000 + "]" * 5000 + "]}", "nested"),
    ],
)
def test_unencodable_or_deep_json_is_a_400(
    proxy: ThreadedServer, fake: FakeUpstream, raw: str, where: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO):
        r = post(proxy, raw.encode(), headers={"Content-Type": "application/json"})
    error = assert_openai_error(r, 400)
    assert ("Unicode" in error["message"]) if where == "surrogate" else ("nested too deeply" in error["message"])
    assert fake.calls == []
    assert "Traceback" not in caplog.text
    healthy(proxy, fake)


@pytest.mark.parametrize(
    "body, param",
    [
        (chat(messages=[{"role": "user", "content": [{"type": "text", "text": None}]}]), "messages.0.content"),
        (chat(messages=[{"role": "user", "content": [{"type": "text", "text": 42}]}]), "messages.0.content"),
        (chat(selfpara={"k": True}), "selfpara.k"),
        (chat(selfpara={"k": "3"}), "selfpara.k"),
        (chat(selfpara={"enabled": "false"}), "selfpara.enabled"),
        (chat(stream="yes"), "stream"),
        (chat(max_tokens="100"), "max_tokens"),
        (chat(n=True), "n"),
    ],
)
def test_values_of_the_wrong_type_are_refused_not_coerced(
    proxy: ThreadedServer, fake: FakeUpstream, body: dict[str, Any], param: str
) -> None:
    error = assert_openai_error(post(proxy, body), 400)
    assert error["param"].startswith(param), error
    assert fake.calls == []


# ---- 5. shutdown past the grace period --------------------------------------------------------------


def test_shutdown_past_the_grace_period_answers_cleanly(fake: FakeUpstream) -> None:
    fake.hold(when="answer")  # no answer ever comes: both requests are in flight at shutdown
    server = start(settings_for(fake, keepalive_s=0.2), graceful_s=0.5)
    results: dict[str, httpx.Response] = {}
    plain = threading.Thread(target=lambda: results.setdefault("plain", post(server, chat("Who wrote Hamlet?"))))
    plain.start()
    stream = BackgroundStream(server, chat(stream=True))
    fake.wait_for_calls(kind="answer", contains="Hamlet")  # the plain request is in its pipeline
    assert stream.wait_started() == ": keep-alive"  # the stream has sent its headers and a keep-alive
    server.stop()
    plain.join(timeout=30)
    assert_openai_error(results["plain"], 503, "shutting_down")
    lines = stream.join()
    assert stream.status == 200
    assert lines[-1] == "data: [DONE]"
    assert json.loads(lines[-2][len("data: ") :])["error"]["code"] == "shutting_down"


# ---- 6. a passthrough stream whose upstream does not stream ------------------------------------------


def test_passthrough_stream_of_a_non_sse_body_is_an_error(proxy: ThreadedServer, fake: FakeUpstream) -> None:
    fake.not_sse(times=None)
    r = post(proxy, chat(stream=True, selfpara={"enabled": False}))
    assert_openai_error(r, 502, "upstream_failed")
    assert len(fake.calls) == 1  # not retried: the upstream answered, just not with a stream
    healthy(proxy, fake)


# ---- 7. log forging ------------------------------------------------------------------------------------


def test_a_newline_in_a_model_name_cannot_forge_a_log_line(
    proxy: ThreadedServer, fake: FakeUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    forged = "openai/fake\nrequest_id=FORGED status=200 model=admin"
    with caplog.at_level(logging.INFO, logger="selfpara.server"):
        r = post(proxy, {"model": forged, "messages": [{"role": "user", "content": Q}]})
    assert_openai_error(r, 404, "model_not_found")
    lines = [rec.getMessage() for rec in caplog.records if rec.name == "selfpara.server"]
    assert any("\\nrequest_id=FORGED" in line for line in lines)
    assert not any(line.startswith("request_id=FORGED") for text in lines for line in text.splitlines())
    # the text log format escapes any record's control characters too
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "model=%s", (forged,), None)
    assert "\n" not in TextFormatter().format(record)


# ---- 8. a stream dropped before its first keep-alive --------------------------------------------------


def raw_request(server: ThreadedServer, body: dict[str, Any], fake: FakeUpstream) -> None:
    """Send a request on a raw socket and hang up once the upstream has its first call, before reading any answer."""
    payload = json.dumps(body).encode()
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + f"Authorization: Bearer {PROXY_KEY}\r\nContent-Length: {len(payload)}\r\n\r\n".encode()
            + payload
        )
        fake.wait_for_calls(1)


@pytest.mark.parametrize("stream", [True, False])
def test_a_dropped_client_stops_its_pipeline(fake: FakeUpstream, stream: bool) -> None:
    fake.hold()  # every upstream call waits: the pipeline is mid-way when the client leaves
    # no keep-alive is due for 10 minutes: only noticing the hang-up itself frees the slot
    with start(settings_for(fake, keepalive_s=600.0, max_concurrent_requests=1)) as server:
        raw_request(server, chat("Who wrote Hamlet?", stream=stream), fake)
        wait_idle(server, "the dropped request's slot is free")
        spent = len(fake.calls)
        assert spent <= 5  # the paraphrase call, its checks and the original's answer
        fake.release()  # the held calls answer: a pipeline still running would go on to its answer rounds
        assert post(server, chat()).status_code == 200  # a whole request later
        assert len([c for c in fake.calls if "Hamlet" in json.dumps(c.body)]) == spent
        healthy(server, fake)


# ---- risks: deadline, content type, /ready, slow clients ----------------------------------------------


def test_whole_request_deadline(fake: FakeUpstream) -> None:
    fake.hold(when="answer")  # no answer comes before the upstream's own 10 s timeout: only the deadline ends it
    with start(settings_for(fake, {"timeout_s": 10.0}, request_timeout_s=1.0, keepalive_s=0.05)) as server:
        error = assert_openai_error(post(server, chat()), 504, "request_timeout")
        assert "request_timeout_s" in error["message"]
        r = post(server, chat(stream=True))
        lines = sse_lines(r)
        assert r.status_code == 200 and lines[-1] == "data: [DONE]"
        assert json.loads(lines[-2][len("data: ") :])["error"]["code"] == "request_timeout"
        healthy(server, fake)


@pytest.mark.parametrize("ctype", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", None])
def test_only_json_bodies_start_a_pipeline(fake: FakeUpstream, ctype: str | None) -> None:
    with start(settings_for(fake, api_key=None)) as server:
        headers = {"Content-Type": ctype} if ctype else {}
        r = httpx.post(f"{server.base}/v1/chat/completions", content=json.dumps(chat()), headers=headers)
        assert_openai_error(r, 415, "unsupported_media_type")
        assert fake.calls == []
        r = httpx.post(
            f"{server.base}/v1/chat/completions",
            json=chat(),
            headers={"Content-Type": "application/json; charset=utf-8"},
        )
        assert r.status_code == 200


def test_ready_needs_the_key_and_probes_at_most_once_per_period(proxy: ThreadedServer, fake: FakeUpstream) -> None:
    assert_openai_error(httpx.get(f"{proxy.base}/ready"), 401, "invalid_api_key")
    assert httpx.get(f"{proxy.base}/health").status_code == 200  # liveness stays open
    proxy.server.config.app.state.proxy.ready_cache = None
    for _ in range(5):
        r = httpx.get(f"{proxy.base}/ready", headers=AUTH)
        assert r.status_code == 200 and r.json()["checks"]["upstream"] == "reachable"
    assert len(fake.calls_of("models")) == 1


def test_ready_caches_bad_news_too(fake: FakeUpstream) -> None:
    dead = ThreadedServer(FakeUpstream(), lifespan="off")
    dead.sock.close()
    settings = settings_for(fake, {"api_base": f"{dead.base}/v1"}, ready_cache_s=30.0)
    with start(settings) as server:
        first = httpx.get(f"{server.base}/ready", headers=AUTH)
        assert first.status_code == 503
        state = server.server.config.app.state.proxy
        probed_at = state.ready_cache[0]
        for _ in range(5):
            assert httpx.get(f"{server.base}/ready", headers=AUTH).json() == first.json()
        assert state.ready_cache[0] == probed_at  # answered from the cache, no new probe


def test_slow_headers_and_bodies_are_cut_off(fake: FakeUpstream) -> None:
    with start(settings_for(fake, header_timeout_s=0.5, body_timeout_s=0.5)) as server:
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # ... and never the rest
            sock.settimeout(30)  # uvicorn alone never closes a half-sent head: only the header timeout does
            assert sock.recv(1024) == b""  # closed by the server
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            sock.sendall(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + f"Authorization: Bearer {PROXY_KEY}\r\nContent-Length: 500\r\n\r\n".encode()
                + b'{"mo'
            )
            sock.settimeout(5)
            answer = b""
            while b"request_body_timeout" not in answer and (part := sock.recv(4096)):
                answer += part
            assert answer.startswith(b"HTTP/1.1 408") and b"request_body_timeout" in answer
        assert fake.calls == []
        healthy(server, fake)


# ---- fidelity: the APIs clients call -------------------------------------------------------------------


def test_models_retrieve(client: openai.OpenAI) -> None:
    card = client.models.retrieve("fake")
    assert card.id == "fake" and card.object == "model"
    assert client.models.retrieve("selfpara/openai/fake").id == "selfpara/openai/fake"
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("gpt-nothing")


def test_responses_create_wrapped(client: openai.OpenAI, fake: FakeUpstream) -> None:
    resp = client.responses.create(
        model="openai/fake", input=Q, instructions="Answer briefly.", extra_body={"selfpara": {"k": 2}}
    )
    assert resp.output_text == "Paris" and resp.status == "completed"
    report = resp.model_extra["selfpara"]
    assert report["k_requested"] == 2 and report["passthrough"] is False
    original = next(c for c in fake.calls_of("answer") if c.variant == 0)
    assert original.body["messages"][0] == {"role": "system", "content": "Answer briefly."}
    assert resp.usage.total_tokens == resp.usage.input_tokens + resp.usage.output_tokens > 0
    assert "notes" not in report

    fake.reset(answers={0: "Paris", 1: "Lyon", 2: "Nice", 3: "Lille"})
    block = {"low_vote_share": "abstain", "low_vote_share_threshold": 0.5}
    report = client.responses.create(model="fake", input=Q, extra_body={"selfpara": block}).model_extra["selfpara"]
    assert report["abstained"] is True and "low_vote_share" in report["flags"]

    fake.reset()
    resp = client.responses.create(
        model="fake",
        input=[
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello."},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": Q}]},
        ],
    )
    assert resp.output_text == "Paris"
    assert [m["role"] for m in fake.calls_of("answer")[0].body["messages"]] == ["user", "assistant", "user"]


def test_responses_stream(client: openai.OpenAI) -> None:
    events = list(client.responses.create(model="fake", input=Q, stream=True))
    kinds = [e.type for e in events]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert "".join(e.delta for e in events if e.type == "response.output_text.delta") == "Paris"
    assert events[-1].response.output_text == "Paris"


def test_responses_tools_pass_through_or_are_refused(client: openai.OpenAI, fake: FakeUpstream) -> None:
    tools = [{"type": "function", "name": "lookup", "parameters": {"type": "object", "properties": {}}}]
    resp = client.responses.with_raw_response.create(model="fake", input=Q, tools=tools)
    assert resp.headers["x-selfpara-passthrough"] == "tools"
    assert resp.parse().output[0].type == "function_call"
    assert [c.kind for c in fake.calls] == ["response"] and fake.calls[0].body["model"] == "fake"

    from selfpara.config import build_config
    from selfpara.models.client import ModelClient
    from selfpara.server import ServerSettings, create_app
    from selfpara.testing import FakeBackend

    settings = ServerSettings(upstream=build_config(model="openai/fake", k=2, paraphrase_check="off"))
    with ThreadedServer(create_app(settings, client=ModelClient(backend=FakeBackend(), retries=0))) as server:
        text_only = openai.OpenAI(base_url=f"{server.base}/v1", api_key="x", max_retries=0)
        with pytest.raises(openai.BadRequestError) as info:
            text_only.responses.create(model="fake", input=Q, tools=tools)
        assert info.value.code == "unsupported_responses_input"
        with pytest.raises(openai.BadRequestError):
            text_only.completions.create(model="fake", prompt="x")
        assert text_only.responses.create(model="fake", input=Q).output_text == "Paris"


def test_completions_pass_through(client: openai.OpenAI, fake: FakeUpstream) -> None:
    raw = client.completions.with_raw_response.create(model="fake", prompt="Hello there", max_tokens=5)
    resp = raw.parse()
    assert resp.choices[0].text == "echo: Hello there" and resp.model == "fake"
    assert raw.headers["x-selfpara-passthrough"] == "completions"
    assert fake.calls[0].kind == "completion" and fake.calls[0].body["model"] == "fake"
    chunks = list(client.completions.create(model="fake", prompt="Hi you", stream=True))
    assert "".join(c.choices[0].text for c in chunks) == "echo: Hi you"


def test_finish_reason_logprobs_and_fingerprint(client: openai.OpenAI, fake: FakeUpstream) -> None:
    fake.finish_reason = "length"
    resp = client.chat.completions.create(model="fake", messages=[{"role": "user", "content": Q}])
    assert resp.choices[0].finish_reason == "length"
    assert resp.system_fingerprint.startswith("fp_selfpara_")
    chunks = list(client.chat.completions.create(model="fake", messages=[{"role": "user", "content": Q}], stream=True))
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == ["length"]
    assert client.responses.create(model="fake", input=Q).status == "incomplete"
    # passthrough: the upstream's own logprobs and fingerprint
    fake.finish_reason = "stop"
    resp = client.chat.completions.create(
        model="fake",
        messages=[{"role": "user", "content": Q}],
        logprobs=True,
        extra_body={"selfpara": {"enabled": False}},
    )
    assert resp.system_fingerprint == "fp_fake"
    assert [t.token for t in resp.choices[0].logprobs.content] == ["Paris"]


def test_wrapped_answer_carries_the_chosen_answers_logprobs(client: openai.OpenAI, fake: FakeUpstream) -> None:
    long_answer = "The capital of France is Paris, on the Seine, and it has been for a very long time"  # > 1 chunk
    fake.reset(answer=long_answer)
    messages = [{"role": "user", "content": Q}]
    plain = client.chat.completions.create(model="fake", messages=messages)
    assert plain.choices[0].logprobs is None
    answer_calls = [c for c in fake.calls if c.kind == "answer"]
    assert answer_calls and not any("logprobs" in c.body for c in answer_calls)  # not asked: not requested upstream
    fake.reset(answer=long_answer)
    resp = client.chat.completions.create(model="fake", messages=messages, logprobs=True, top_logprobs=1)
    tokens = resp.choices[0].logprobs.content
    assert "".join(t.token for t in tokens) == resp.choices[0].message.content == long_answer
    assert all(t.logprob == -0.5 and len(t.top_logprobs) == 1 for t in tokens)
    assert "notes" not in resp.model_extra["selfpara"]
    answer_calls = [c for c in fake.calls if c.kind == "answer"]
    assert answer_calls and all(c.body["logprobs"] is True and c.body["top_logprobs"] == 1 for c in answer_calls)
    # streamed: each content chunk carries the log-probabilities of its own tokens
    chunks = list(client.chat.completions.create(model="fake", messages=messages, logprobs=True, stream=True))
    content = [c.choices[0] for c in chunks if c.choices and c.choices[0].delta.content]
    assert len(content) > 1
    for choice in content:
        assert "".join(t.token for t in choice.logprobs.content) == choice.delta.content
    # the same fingerprint with or without logprobs: they do not change the answer
    assert resp.system_fingerprint == plain.system_fingerprint


def test_logprobs_a_backend_cannot_give_are_noted() -> None:
    from selfpara.config import build_config
    from selfpara.models.client import ModelClient
    from selfpara.server import ServerSettings, create_app
    from selfpara.testing import FakeBackend

    settings = ServerSettings(upstream=build_config(model="openai/fake", k=2, paraphrase_check="off"))
    with ThreadedServer(create_app(settings, client=ModelClient(backend=FakeBackend(), retries=0))) as server:
        text_only = openai.OpenAI(base_url=f"{server.base}/v1", api_key="x", max_retries=0)
        resp = text_only.chat.completions.create(model="fake", messages=[{"role": "user", "content": Q}], logprobs=True)
        assert resp.choices[0].logprobs is None
        assert any("logprobs" in note for note in resp.model_extra["selfpara"]["notes"])


def test_passthrough_retries_through_the_model_client(proxy: ThreadedServer, fake: FakeUpstream) -> None:
    fake.fail(503, times=1)
    r = post(proxy, chat(selfpara={"enabled": False}))
    assert r.status_code == 200 and [c.outcome for c in fake.calls] == ["503", "ok"]


# ---- ModelClient.raw ------------------------------------------------------------------------------------


def test_model_client_raw_api(fake: FakeUpstream) -> None:
    from selfpara.errors import UpstreamError
    from selfpara.models.client import ModelClient
    from selfpara.testing import FakeBackend

    client = ModelClient(
        api_base=fake.url,
        api_key=UPSTREAM_KEY,
        retries=1,
        backoff_s=0.01,  # type: ignore[attr-defined]
        timeout_s=5,
        transport="http",
    )

    async def run() -> None:
        assert client.can_pass_through("openai/fake", "responses")
        data = await client.raw("openai/fake", {"messages": [{"role": "user", "content": Q}], "n": 2})
        assert [c["message"]["content"] for c in data["choices"]] == ["Paris", "Paris"]
        events = await client.raw_stream("openai/fake", {"prompt": "a b"}, endpoint="completions")
        assert "".join([e["choices"][0]["text"] async for e in events]) == "echo: a b"
        fake.fail(500, times=None, message=f"key {UPSTREAM_KEY} refused")
        with pytest.raises(UpstreamError) as info:
            await client.raw("openai/fake", {"messages": [{"role": "user", "content": Q}]})
        assert UPSTREAM_KEY not in str(info.value) and info.value.status == 502
        assert len(fake.calls_of("answer")) == 1 + 2  # the first call; then one try and one retry
        await client.aclose()

    asyncio.run(run())
    text_only = ModelClient(backend=FakeBackend())
    assert not text_only.can_pass_through("openai/fake")
