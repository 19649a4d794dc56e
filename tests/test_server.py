"""The proxy, end to end: a real uvicorn server on loopback, the official `openai` client,
raw HTTP for the error cases, and a fake OpenAI-compatible upstream (tests/fake_upstream.py)
reached through litellm for fault injection. No network, no API key, no GPU."""

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

from selfpara.config import build_config
from selfpara.server import ServerSettings, create_app
from tests.fake_upstream import FakeUpstream, ThreadedServer
from tests.helpers.proxy import (  # fake, reset_fake: the module's fake upstream, reset before each test
    PROXY_KEY,
    UPSTREAM_KEY,
    Q,
    assert_openai_error,
    chat,
    fake,
    post,
    reset_fake,
    settings_for,
    wait_idle,
)
from tests.helpers.waiting import wait_until

FIXTURES = (fake, reset_fake)


# ---- fixtures --------------------------------------------------------------------------------


def start_proxy(settings: ServerSettings) -> ThreadedServer:
    return ThreadedServer(create_app(settings), graceful_s=5.0).start()


@pytest.fixture(scope="module")
def proxy(fake: FakeUpstream) -> Iterator[ThreadedServer]:
    server = start_proxy(settings_for(fake))
    yield server
    server.stop()


@pytest.fixture(scope="module", params=["http", "litellm"])
def xproxy(request: pytest.FixtureRequest, fake: FakeUpstream, proxy: ThreadedServer) -> Iterator[ThreadedServer]:
    """The proxy over each upstream transport, for the tests that talk to the upstream.
    `proxy` (the default settings: transport auto) already is the http one."""
    if request.param == "http":
        yield proxy
        return
    server = start_proxy(settings_for(fake, upstream_transport=request.param))
    yield server
    server.stop()


@pytest.fixture()
def xclient(xproxy: ThreadedServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{xproxy.base}/v1", api_key=PROXY_KEY, max_retries=0, timeout=30)


@pytest.fixture()
def client(proxy: ThreadedServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{proxy.base}/v1", api_key=PROXY_KEY, max_retries=0, timeout=30)


@pytest.fixture()
def aclient(proxy: ThreadedServer) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{proxy.base}/v1", api_key=PROXY_KEY, max_retries=0, timeout=30)


# ---- the wrapped path through the openai client ------------------------------------------------


def test_plain_completion(xclient: openai.OpenAI, fake: FakeUpstream) -> None:
    raw = xclient.chat.completions.with_raw_response.create(
        model="openai/fake", messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": Q}]
    )
    resp = raw.parse()
    assert resp.object == "chat.completion" and resp.id.startswith("chatcmpl-")
    assert resp.model == "openai/fake"
    assert resp.choices[0].message.role == "assistant"
    assert resp.choices[0].message.content == "Paris"
    assert resp.choices[0].finish_reason == "stop"

    report = resp.model_extra["selfpara"]
    assert report["passthrough"] is False
    assert report["k_requested"] == 3 and report["k_kept"] == 3
    assert report["vote_share"] == 1.0 and report["original_won"] is True
    assert [v["index"] for v in report["variants"]] == [0, 1, 2, 3]
    # the fake upstream is on loopback and judges its own answers: the result says so
    assert len(report["answers"]) == 4 and report["flags"] == ["judge_is_model_under_test"]
    assert set(report["timings"]) >= {"paraphrase_s", "answer_s", "total_s"}
    # usage is summed over every upstream call: 1 paraphrase + 3 judge + 4 answer calls
    calls = fake.calls
    assert report["usage"]["calls"] == len(calls) == 8
    assert resp.usage.prompt_tokens == report["usage"]["prompt_tokens"] > 0
    assert resp.usage.completion_tokens == report["usage"]["completion_tokens"] > 0
    assert resp.usage.total_tokens == resp.usage.prompt_tokens + resp.usage.completion_tokens
    # the system prompt rides along with every answer call
    for call in fake.calls_of("answer"):
        assert call.body["messages"][0] == {"role": "system", "content": "Be brief."}

    assert raw.headers["x-selfpara-vote-share"] == "1.0000"
    # four agreeing answers: (4 + 1) / (4 + 2), the fake reports no log-probabilities
    assert float(raw.headers["x-selfpara-confidence"]) == pytest.approx(report["confidence"], abs=1e-4)
    assert report["confidence"] == pytest.approx(5 / 6)
    assert raw.headers["x-selfpara-k"] == "3"
    assert raw.headers["x-selfpara-k-kept"] == "3"
    assert raw.headers["x-request-id"] == report["request_id"]
    # the server's upstream key went upstream; the xclient's xproxy key did not
    assert {c.authorization for c in calls} == {f"Bearer {UPSTREAM_KEY}"}
    assert UPSTREAM_KEY not in raw.http_response.text


def test_model_aliases_and_request_id(proxy: ThreadedServer) -> None:
    for name in ("fake", "selfpara/openai/fake", "selfpara/fake"):
        r = post(proxy, {**chat(), "model": name}, headers={"X-Request-Id": "my-trace-42"})
        assert r.status_code == 200, r.text
        assert r.json()["model"] == name
        assert r.headers["x-request-id"] == "my-trace-42"
    # the routes also answer without the /v1 prefix
    r = httpx.post(f"{proxy.base}/chat/completions", json=chat(), headers={"Authorization": f"Bearer {PROXY_KEY}"})
    assert r.status_code == 200


def test_majority_vote_over_disagreeing_answers(client: openai.OpenAI, fake: FakeUpstream) -> None:
    fake.reset(answers={0: "Lyon", 1: "Paris", 2: "Paris.", 3: "the Paris"})
    resp = client.chat.completions.create(model="openai/fake", messages=[{"role": "user", "content": Q}])
    report = resp.model_extra["selfpara"]
    assert len(report["clusters"]) == 2 and [c["votes"] for c in report["clusters"]] == [1.0, 3.0]
    # three paraphrases agree against the original; each passed the model's own paraphrase check, so the
    # paraphrase call does not carry the vote alone (selfpara.pipeline.independence): they overrule it
    assert resp.choices[0].message.content == "Paris" and report["original_won"] is False
    assert report["vote_share"] == 0.75 and report["original_kept_reason"] is None
    assert all(v["verified"] for v in report["variants"][1:])
    # with no check, the same three lines came from the paraphrase call alone: the original is kept
    fake.reset(answers={0: "Lyon", 1: "Paris", 2: "Paris.", 3: "the Paris"})
    resp = client.chat.completions.create(
        model="openai/fake",
        messages=[{"role": "user", "content": Q}],
        extra_body={"selfpara": {"paraphrase_check": "off"}},
    )
    report = resp.model_extra["selfpara"]
    assert resp.choices[0].message.content == "Lyon" and "paraphrase call" in report["original_kept_reason"]
    assert {"original_kept", "low_vote_share"} <= set(report["flags"])


def test_streaming(xclient: openai.OpenAI) -> None:
    stream = xclient.chat.completions.create(
        model="openai/fake",
        messages=[{"role": "user", "content": Q}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Paris"
    finals = [c for c in chunks if c.choices and c.choices[0].finish_reason]
    assert len(finals) == 1 and finals[0].choices[0].finish_reason == "stop"
    assert finals[0].model_extra["selfpara"]["k_kept"] == 3
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0
    assert all(c.object == "chat.completion.chunk" and c.model == "openai/fake" for c in chunks)


def test_streaming_sends_keepalives_while_the_pipeline_works(proxy: ThreadedServer, fake: FakeUpstream) -> None:
    long_answer = "The capital of France is Paris, a city on the Seine with a long history " * 3
    fake.reset(answer=long_answer.strip())
    fake.hold(when="answer")  # the answers come once two keep-alives have gone out
    lines: list[str] = []
    with httpx.stream(
        "POST",
        f"{proxy.base}/v1/chat/completions",
        json=chat(stream=True),
        headers={"Authorization": f"Bearer {PROXY_KEY}"},
        timeout=30,
    ) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        for line in r.iter_lines():
            lines += [line] if line else []
            if lines.count(": keep-alive") == 2:
                fake.release()
    keepalives = [i for i, line in enumerate(lines) if line == ": keep-alive"]
    data = [i for i, line in enumerate(lines) if line.startswith("data: ")]
    assert len(keepalives) >= 2 and max(keepalives) < min(data)
    assert lines[-1] == "data: [DONE]"
    events = [json.loads(lines[i][6:]) for i in data[:-1]]
    assert events[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    content = [e["choices"][0]["delta"].get("content", "") for e in events[1:-1]]
    assert len(content) > 1 and "".join(content) == long_answer.strip()
    assert events[-1]["choices"][0]["finish_reason"] == "stop" and "selfpara" in events[-1]


async def test_per_request_settings_do_not_leak(aclient: openai.AsyncOpenAI) -> None:
    async def ask(k: int | None) -> dict[str, Any]:
        extra = {"selfpara": {"k": k}} if k is not None else {}
        resp = await aclient.chat.completions.create(
            model="openai/fake", messages=[{"role": "user", "content": Q}], extra_body=extra
        )
        return resp.model_extra["selfpara"]

    reports = await asyncio.gather(ask(1), ask(5), ask(None), ask(2), ask(None))
    assert [r["k_requested"] for r in reports] == [1, 5, 3, 2, 3]
    assert [r["k_kept"] for r in reports] == [1, 5, 3, 2, 3]
    assert (await ask(None))["k_requested"] == 3


def test_settings_reach_the_pipeline(client: openai.OpenAI, fake: FakeUpstream) -> None:
    resp = client.chat.completions.create(
        model="openai/fake",
        messages=[{"role": "user", "content": Q}],
        temperature=0.3,
        max_tokens=40,
        extra_body={"selfpara": {"k": 2, "equivalence": "exact", "paraphrase_check": "off"}},
        top_p=0.9,
    )
    report = resp.model_extra["selfpara"]
    assert report["k_requested"] == 2 and report["paraphrase_check"] == "off"
    assert report["equivalence_functions"] == ["exact"]
    assert report["ignored_params"] == ["top_p"]
    assert not fake.calls_of("judge")
    for call in fake.calls_of("answer"):
        assert call.body["temperature"] == 0.3 and call.body["max_tokens"] == 40


def test_top_up_and_the_margin_are_per_request_settings(
    client: openai.OpenAI, proxy: ThreadedServer, fake: FakeUpstream
) -> None:
    fake.reset(answers={0: "Paris", 1: "Lyon", 2: "Lyon", 3: "Nice"})
    plain = {"selfpara": {"equivalence": "exact"}}
    answer = client.chat.completions.create(
        model="openai/fake", messages=[{"role": "user", "content": Q}], extra_body=plain
    )
    assert answer.choices[0].message.content == "Paris"  # 2 votes against 1 do not overrule at the default margin
    fake.reset(answers={0: "Paris", 1: "Lyon", 2: "Lyon", 3: "Nice"})
    margin = {"selfpara": {"equivalence": "exact", "overrule_margin": 1}}
    answer = client.chat.completions.create(
        model="openai/fake", messages=[{"role": "user", "content": Q}], extra_body=margin
    )
    # decisive at margin 1, and the model's check verified both Lyon wordings: overruled
    assert answer.choices[0].message.content == "Lyon"
    assert answer.model_extra["selfpara"]["original_kept_reason"] is None

    fake.reset()
    fake.fail(400, when="paraphrase", times=None)  # no paraphrase: every slot is topped up
    raw = client.chat.completions.with_raw_response.create(
        model="openai/fake",
        messages=[{"role": "user", "content": Q}],
        extra_body={"selfpara": {"equivalence": "exact", "top_up_temperature": 0.7}},
    )
    report = raw.parse().model_extra["selfpara"]
    assert report["k_kept"] == 0 and report["k_topped_up"] == 3 and raw.headers["x-selfpara-k-topped-up"] == "3"
    assert [v["top_up"] for v in report["variants"]] == [False, True, True, True]
    sampled = [c.body for c in fake.calls_of("answer") if c.body.get("temperature") == 0.7]
    assert sorted(b["seed"] for b in sampled) == [1, 2, 3] and len(fake.calls_of("answer")) == 4


def test_low_vote_share_policy_in_the_body_and_the_header(
    client: openai.OpenAI, proxy: ThreadedServer, fake: FakeUpstream
) -> None:
    fake.reset(answers={0: "Paris", 1: "Lyon", 2: "Nice", 3: "Lille"})
    raw = client.chat.completions.with_raw_response.create(
        model="openai/fake",
        messages=[{"role": "user", "content": Q}],
        extra_body={"selfpara": {"low_vote_share": "abstain", "low_vote_share_threshold": 0.5}},
    )
    resp = raw.parse()
    report = resp.model_extra["selfpara"]
    assert raw.headers["x-selfpara-low-vote-share"] == "true" and "low_vote_share" in raw.headers["x-selfpara-flags"]
    assert resp.choices[0].message.content == build_config().abstention_text
    assert report["withheld_answer"] == "Paris" and report["vote_share"] == 0.25 and report["abstained"] is True

    fake.reset(answers={0: "Paris", 1: "Lyon", 2: "Nice", 3: "Lille"})
    raw = client.chat.completions.with_raw_response.create(
        model="openai/fake",
        messages=[{"role": "user", "content": Q}],
        extra_body={"selfpara": {"low_vote_share": "off"}},
    )
    assert raw.headers["x-selfpara-low-vote-share"] == "false" and raw.parse().choices[0].message.content == "Paris"

    fake.reset()
    raw = client.chat.completions.with_raw_response.create(
        model="openai/fake", messages=[{"role": "user", "content": Q}]
    )
    assert raw.headers["x-selfpara-low-vote-share"] == "false"
    r = post(proxy, chat(selfpara={"low_vote_share": "panic"}))
    assert_openai_error(r, 400)


def test_adaptive_k_per_request_reports_the_calls_it_saved(client: openai.OpenAI, fake: FakeUpstream) -> None:
    settings = {"k": 3, "equivalence": "exact", "paraphrase_check": "off"}
    fixed = client.chat.completions.with_raw_response.create(
        model="openai/fake", messages=[{"role": "user", "content": Q}], extra_body={"selfpara": settings}
    )
    # the whole paraphrase reply is in before the vote settles (else the stream is closed early and
    # the lines it had not sent are neither listed nor counted)
    raw = fake.whole_reply_first(
        lambda: client.chat.completions.with_raw_response.create(
            model="openai/fake",
            messages=[{"role": "user", "content": Q}],
            extra_body={"selfpara": {**settings, "adaptive": True}},
        )
    )
    report = raw.parse().model_extra["selfpara"]
    # unanimous answers at k=3, margin 2: the original and one paraphrase settle it
    assert report["k_kept"] == 1 and len(report["skipped_paraphrases"]) == 2 and report["calls_saved"] == 2
    assert raw.headers["x-selfpara-calls-saved"] == "2" and raw.headers["x-selfpara-k-kept"] == "1"
    assert int(raw.headers["x-selfpara-calls"]) + 2 == int(fixed.headers["x-selfpara-calls"])
    assert fixed.headers["x-selfpara-calls-saved"] == "0"


# ---- passthrough ---------------------------------------------------------------------------------


def _passthrough_report(resp: Any) -> dict[str, Any]:
    return resp.model_extra["selfpara"]


def test_passthrough_when_disabled(xclient: openai.OpenAI, fake: FakeUpstream) -> None:
    resp = xclient.chat.completions.create(
        model="openai/fake", messages=[{"role": "user", "content": Q}], extra_body={"selfpara": {"enabled": False}}
    )
    assert resp.choices[0].message.content == "Paris"
    report = _passthrough_report(resp)
    assert report["passthrough"] is True and report["reason"] == "disabled"
    assert [c.kind for c in fake.calls] == ["answer"]
    assert fake.calls[0].body["model"] == "fake"  # the provider prefix is stripped


def test_passthrough_tools(xclient: openai.OpenAI, fake: FakeUpstream) -> None:
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object", "properties": {}}}}]
    resp = xclient.chat.completions.create(model="openai/fake", messages=[{"role": "user", "content": Q}], tools=tools)
    assert resp.choices[0].finish_reason == "tool_calls"
    assert resp.choices[0].message.tool_calls[0].function.name == "lookup"
    assert _passthrough_report(resp) == {
        "passthrough": True,
        "reason": "tools",
        "request_id": _passthrough_report(resp)["request_id"],
    }
    assert len(fake.calls) == 1 and fake.calls[0].body["tools"] == tools


def test_passthrough_n_and_json_schema_and_empty_question(xclient: openai.OpenAI, fake: FakeUpstream) -> None:
    resp = xclient.chat.completions.create(model="openai/fake", messages=[{"role": "user", "content": Q}], n=2)
    assert len(resp.choices) == 2 and _passthrough_report(resp)["reason"] == "n>1"

    schema = {"type": "json_schema", "json_schema": {"name": "a", "schema": {"type": "object"}}}
    resp = xclient.chat.completions.create(
        model="openai/fake", messages=[{"role": "user", "content": Q}], response_format=schema
    )  # type: ignore[arg-type]
    assert json.loads(resp.choices[0].message.content) == {"answer": "Paris"}
    assert _passthrough_report(resp)["reason"] == "json_schema"

    resp = xclient.chat.completions.create(model="openai/fake", messages=[{"role": "user", "content": "   "}])
    assert _passthrough_report(resp)["reason"] == "empty_question"
    assert [c.kind for c in fake.calls] == ["answer"] * 3


def test_passthrough_streaming(xclient: openai.OpenAI, fake: FakeUpstream) -> None:
    stream = xclient.chat.completions.create(
        model="selfpara/fake",
        messages=[{"role": "user", "content": Q}],
        stream=True,
        extra_body={"selfpara": {"enabled": False}},
    )
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Paris"
    assert chunks[0].model_extra["selfpara"]["passthrough"] is True
    assert all(c.model == "selfpara/fake" for c in chunks)
    assert fake.calls[0].body["stream"] is True


def test_models_health_ready(client: openai.OpenAI, proxy: ThreadedServer, fake: FakeUpstream) -> None:
    ids = [m.id for m in client.models.list()]
    assert ids == ["openai/fake", "fake", "selfpara/openai/fake", "selfpara/fake"]
    assert httpx.get(f"{proxy.base}/health").json() == {"status": "ok"}
    r = httpx.get(f"{proxy.base}/ready", headers={"Authorization": f"Bearer {PROXY_KEY}"})
    assert r.status_code == 200 and r.json()["checks"]["upstream"] == "reachable"
    assert UPSTREAM_KEY not in r.text


def test_ready_reports_an_unreachable_upstream(fake: FakeUpstream) -> None:
    dead = ThreadedServer(FakeUpstream(), lifespan="off")
    dead_url = f"{dead.base}/v1"
    dead.sock.close()  # nothing listens there
    with start_proxy(settings_for(fake, {"api_base": dead_url})) as server:
        r = httpx.get(f"{server.base}/ready", headers={"Authorization": f"Bearer {PROXY_KEY}"})
        assert r.status_code == 503 and r.json()["status"] == "not_ready"
        assert r.json()["checks"]["upstream"].startswith("unreachable")


# ---- errors: raw HTTP ------------------------------------------------------------------------------


def test_auth_errors(proxy: ThreadedServer) -> None:
    assert_openai_error(post(proxy, chat(), key=None), 401, "invalid_api_key")
    assert_openai_error(post(proxy, chat(), key="wrong-key"), 401, "invalid_api_key")
    assert_openai_error(post(proxy, chat(), key=None, headers={"Authorization": PROXY_KEY}), 401)
    r = httpx.get(f"{proxy.base}/v1/models")
    assert_openai_error(r, 401)
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=f"{proxy.base}/v1", api_key="nope", max_retries=0).chat.completions.create(
            model="openai/fake", messages=[{"role": "user", "content": Q}]
        )


@pytest.mark.parametrize(
    ("body", "param"),
    [
        (b"{not json", None),
        (b"[1, 2]", None),
        ({"model": "openai/fake"}, "messages"),
        ({"model": "openai/fake", "messages": []}, "messages"),
        ({"model": "openai/fake", "messages": [{"role": "wizard", "content": "x"}]}, "messages.0.role"),
        (chat(selfpara={"k": 0}), "selfpara.k"),
        (chat(selfpara={"k": "many"}), "selfpara.k"),
        (chat(selfpara={"equivalence": "vibes"}), "selfpara.equivalence"),
        (chat(selfpara={"equivalence": "nli"}), "selfpara"),  # nli needs nli_model: a cross-field check
        (chat(selfpara={"colour": "blue"}), "selfpara.colour"),
        (chat(selfpara={"k": 6}), "selfpara.k"),
        (chat(max_tokens=100_000), "max_tokens"),
        (chat(temperature=5), "temperature"),
        ({"model": "openai/fake", "messages": [{"role": "user", "content": "hi"}] * 21}, "messages"),
        (chat(selfpara={"api_base": "http://evil.example/v1"}), "selfpara.api_base"),
        (chat(selfpara={"judge_model": "anthropic/claude-3-haiku"}), "selfpara.judge_model"),
    ],
)
def test_bad_requests(proxy: ThreadedServer, fake: FakeUpstream, body: Any, param: str | None) -> None:
    error = assert_openai_error(post(proxy, body), 400)
    assert error["type"] == "invalid_request_error"
    assert error["param"] == param
    assert fake.calls == []  # rejected before any upstream call


def test_unknown_model_and_route(proxy: ThreadedServer, client: openai.OpenAI) -> None:
    assert_openai_error(post(proxy, {**chat(), "model": "gpt-4o"}), 404, "model_not_found")
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="nope", messages=[{"role": "user", "content": Q}])
    r = httpx.get(f"{proxy.base}/v1/nothing-here")
    assert r.status_code == 404 and "error" in r.json()


def test_body_too_large(proxy: ThreadedServer) -> None:
    big = chat("x " * 20_000)
    assert_openai_error(post(proxy, big), 413, "request_too_large")

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit holds while reading
        payload = json.dumps(big).encode()
        for i in range(0, len(payload), 4096):
            yield payload[i : i + 4096]

    r = httpx.post(
        f"{proxy.base}/v1/chat/completions",
        content=chunks(),
        headers={"Authorization": f"Bearer {PROXY_KEY}", "Content-Type": "application/json"},
        timeout=30,
    )
    assert_openai_error(r, 413)


def test_proxy_concurrency_limit_gives_429(fake: FakeUpstream) -> None:
    fake.hold()  # the first request stays in flight until released
    with start_proxy(settings_for(fake, max_concurrent_requests=1)) as server:
        first: dict[str, httpx.Response] = {}
        thread = threading.Thread(target=lambda: first.setdefault("r", post(server, chat())))
        thread.start()
        fake.wait_for_calls(1)
        second = post(server, chat())
        error = assert_openai_error(second, 429, "proxy_overloaded")
        assert error["type"] == "rate_limit_error" and second.headers["retry-after"] == "1"
        fake.release()
        thread.join()
        assert first["r"].status_code == 200
        assert post(server, chat()).status_code == 200  # the slot came back


def test_all_answers_failing_gives_502(xproxy: ThreadedServer, fake: FakeUpstream) -> None:
    fake.fail(500, when="answer", times=None)
    error = assert_openai_error(post(xproxy, chat()), 502, "upstream_failed")
    assert error["type"] == "upstream_error"
    # each of the 4 answers was tried 1 + retries (2) times
    assert len(fake.calls_of("answer")) == 4 * 3


@pytest.mark.parametrize("transport", ["litellm", "http"])
def test_upstream_timeout_gives_504(fake: FakeUpstream, transport: str) -> None:
    fake.hold()  # the upstream never answers: only the call timeout ends the request
    with start_proxy(settings_for(fake, {"timeout_s": 0.3, "retries": 1}, upstream_transport=transport)) as server:
        error = assert_openai_error(post(server, chat()), 504, "upstream_timeout")
        assert "did not answer in time" in error["message"]


def test_upstream_key_rejection_is_502_and_never_echoed(
    xproxy: ThreadedServer, fake: FakeUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    fake.fail(401, times=None, message=f"Incorrect API key provided: {UPSTREAM_KEY}")
    with caplog.at_level(logging.DEBUG):
        r = post(xproxy, chat())
    assert_openai_error(r, 502, "upstream_auth_failed")
    assert UPSTREAM_KEY not in caplog.text
    assert "request_id=" in caplog.text
    # no retries for a bad key: 1 paraphrase + 1 original answer call
    assert len(fake.calls) == 2


def test_streaming_errors(proxy: ThreadedServer, fake: FakeUpstream, client: openai.OpenAI) -> None:
    # a failure before the first keep-alive is due still gets its real status
    fake.fail(401, times=None)
    with start_proxy(settings_for(fake, keepalive_s=60.0)) as patient:
        r = post(patient, chat(stream=True))
    assert_openai_error(r, 502, "upstream_auth_failed")
    # a later failure arrives inside the stream; the openai client raises on it
    fake.reset()
    fake.fail(500, when="answer", times=None)
    fake.hold(when="paraphrase")  # the request cannot fail before its stream has started
    stream = client.chat.completions.create(model="openai/fake", messages=[{"role": "user", "content": Q}], stream=True)
    fake.release()
    with pytest.raises(openai.APIError):
        for _ in stream:
            pass


# ---- upstream fault injection --------------------------------------------------------------------


def test_retries_transient_failures(xclient: openai.OpenAI, fake: FakeUpstream) -> None:
    fake.fail(429, when="answer", variant=0, times=1)
    fake.fail(503, when="paraphrase", times=1)
    fake.malformed(when="answer", variant=2, times=1)
    resp = xclient.chat.completions.create(model="openai/fake", messages=[{"role": "user", "content": Q}])
    report = resp.model_extra["selfpara"]
    assert resp.choices[0].message.content == "Paris"
    assert report["flags"] == ["judge_is_model_under_test"] and report["k_kept"] == 3
    assert [c.outcome for c in fake.calls_of("paraphrase")] == ["503", "ok"]
    assert [c.outcome for c in fake.calls if c.variant == 0] == ["429", "ok"]
    assert [c.outcome for c in fake.calls if c.variant == 2] == ["malformed", "ok"]
    assert report["usage"]["calls"] == len(fake.calls)


def test_partial_failure_degrades(xclient: openai.OpenAI, fake: FakeUpstream) -> None:
    fake.fail(400, when="answer", variant=2, times=None)  # not retryable
    fake.fail(500, when="answer", variant=0, times=None)  # retryable, fails every retry
    raw = xclient.chat.completions.with_raw_response.create(
        model="openai/fake", messages=[{"role": "user", "content": Q}]
    )
    resp = raw.parse()
    report = resp.model_extra["selfpara"]
    assert resp.choices[0].message.content == "Paris"
    assert set(report["flags"]) == {"partial_failure", "original_failed", "judge_is_model_under_test"}
    assert report["failed_variants"] == [0, 2]
    failed = {a["variant"]: a["error"] for a in report["answers"] if a["error"]}
    assert set(failed) == {0, 2}
    assert report["vote_share"] == 1.0  # over the two answers that returned
    assert raw.headers["x-selfpara-flags"] == "judge_is_model_under_test,partial_failure,original_failed"
    assert len([c for c in fake.calls if c.variant == 2]) == 1


def test_paraphrase_failure_falls_back_to_the_raw_answer(xclient: openai.OpenAI, fake: FakeUpstream) -> None:
    fake.fail(400, when="paraphrase", times=None)
    resp = xclient.chat.completions.create(model="openai/fake", messages=[{"role": "user", "content": Q}])
    report = resp.model_extra["selfpara"]
    assert resp.choices[0].message.content == "Paris"
    assert report["flags"] == ["judge_is_model_under_test", "paraphrase_failed"] and report["k_kept"] == 0


async def test_keeps_serving_while_one_request_hangs(proxy: ThreadedServer, fake: FakeUpstream) -> None:
    fake.hold(when="answer", contains="Zanzibar")
    async with httpx.AsyncClient(
        base_url=proxy.base, headers={"Authorization": f"Bearer {PROXY_KEY}"}, timeout=30
    ) as http:
        slow = asyncio.create_task(http.post("/v1/chat/completions", json=chat("What is the capital of Zanzibar?")))
        await asyncio.to_thread(fake.wait_for_calls, kind="answer", contains="Zanzibar")
        fast = await asyncio.gather(*[http.post("/v1/chat/completions", json=chat()) for _ in range(3)])
        assert all(r.status_code == 200 for r in fast)
        assert not slow.done()  # still held: the others were served meanwhile
        fake.release()
        assert (await slow).status_code == 200


def refuses_connections(server: ThreadedServer) -> bool:
    try:
        socket.create_connection(("127.0.0.1", server.port), timeout=5).close()
    except ConnectionRefusedError:
        return True
    return False


def test_graceful_shutdown_finishes_requests_in_flight(fake: FakeUpstream) -> None:
    fake.hold()  # the request is in flight when the shutdown starts
    server = start_proxy(settings_for(fake))
    result: dict[str, httpx.Response] = {}
    thread = threading.Thread(target=lambda: result.setdefault("r", post(server, chat())))
    thread.start()
    fake.wait_for_calls(1)
    stopping = threading.Thread(target=server.stop)  # like SIGTERM: stop accepting, let the request finish
    stopping.start()
    wait_until(lambda: refuses_connections(server), "the server stopped accepting connections")
    fake.release()
    thread.join()
    stopping.join()
    assert result["r"].status_code == 200 and result["r"].json()["choices"][0]["message"]["content"] == "Paris"


# ---- security ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["litellm", "http"])
def test_client_api_base_never_gets_the_server_key(fake: FakeUpstream, transport: str) -> None:
    other = FakeUpstream(answer="Berlin")
    with (
        ThreadedServer(other, lifespan="off") as other_server,
        start_proxy(
            settings_for(fake, client_api_bases=[f"127.0.0.1:{other_server.port}"], upstream_transport=transport)
        ) as server,
    ):
        base = f"{other_server.base}/v1"
        r = post(server, chat(selfpara={"api_base": base, "api_key": "client-own-key"}))
        assert r.status_code == 200, r.text
        assert r.json()["choices"][0]["message"]["content"] == "Berlin"
        assert {c.authorization for c in other.calls} == {"Bearer client-own-key"}
        r = post(server, chat(selfpara={"api_base": base, "enabled": False}))
        assert r.status_code == 200
        assert UPSTREAM_KEY not in {c.authorization for c in other.calls}
        assert "Bearer " + UPSTREAM_KEY not in {c.authorization for c in other.calls}
        assert fake.calls == []


def test_no_auth_when_no_key_is_configured(fake: FakeUpstream) -> None:
    with start_proxy(settings_for(fake, api_key=None)) as server:
        assert post(server, chat(), key=None).status_code == 200


def test_stream_disconnect_releases_the_slot_and_stops_the_pipeline(fake: FakeUpstream) -> None:
    fake.hold()  # every upstream call waits: the pipeline is still paraphrasing when the client leaves
    with start_proxy(settings_for(fake, max_concurrent_requests=1)) as server:
        with httpx.stream(
            "POST",
            f"{server.base}/v1/chat/completions",
            json=chat("Who wrote Hamlet?", stream=True),
            headers={"Authorization": f"Bearer {PROXY_KEY}"},
            timeout=30,
        ) as r:
            for line in r.iter_lines():
                if line == ": keep-alive":
                    break  # hang up while the pipeline is still paraphrasing
        wait_idle(server, "the hung-up stream's slot is free")
        assert [c.variant for c in fake.calls_of("answer")] == [0]  # only the original, sent at once
        fake.release()  # the held calls answer: a pipeline still running would go on to its answer rounds
        assert post(server, chat()).status_code == 200  # a whole request later
        assert [c.variant for c in fake.calls_of("answer") if "Hamlet" in c.text] == [0]


@pytest.mark.model
def test_embedded_model_end_to_end() -> None:
    settings = ServerSettings(
        upstream=build_config(model="local/smollm2", k=1, max_tokens=12, timeout_s=300), keepalive_s=1.0
    )
    with start_proxy(settings) as server:

        def ready() -> bool:
            r = httpx.get(f"{server.base}/ready")
            assert r.status_code == 200 or r.json()["checks"]["embedded_model"] in ("loading", "loaded"), r.text
            return r.status_code == 200

        wait_until(ready, "the embedded model loaded", timeout_s=300)
        client = openai.OpenAI(base_url=f"{server.base}/v1", api_key="unused", max_retries=0, timeout=300)
        assert [m.id for m in client.models.list()][:2] == ["local/smollm2", "smollm2"]
        resp = client.chat.completions.create(
            model="local/smollm2",
            messages=[{"role": "user", "content": "What is the capital of France?"}],
            max_tokens=12,
        )
        report = resp.model_extra["selfpara"]
        assert isinstance(resp.choices[0].message.content, str)
        assert report["model"] == "local/smollm2" and report["k_requested"] == 1
        assert len(report["answers"]) == 1 + report["k_kept"]
        assert 0 < report["vote_share"] <= 1
        assert resp.usage.total_tokens == report["usage"]["prompt_tokens"] + report["usage"]["completion_tokens"] > 0
        chunks = list(
            client.chat.completions.create(  # passthrough, streamed, through the text-only backend
                model="selfpara/smollm2",
                messages=[{"role": "user", "content": "Say hi."}],
                max_tokens=8,
                stream=True,
                extra_body={"selfpara": {"enabled": False}},
            )
        )
        assert chunks[0].model_extra["selfpara"]["passthrough"] is True
        assert chunks[-1].choices[0].finish_reason in ("stop", "length")


def test_in_process_backend_through_create_app_client() -> None:
    """create_app(settings, client=...) with selfpara.testing.FakeBackend: no upstream server at all."""
    from selfpara.models.client import ModelClient
    from selfpara.testing import FakeBackend

    backend = FakeBackend()
    settings = ServerSettings(upstream=build_config(model="openai/fake", k=2, paraphrase_check="off"))
    with ThreadedServer(create_app(settings, client=ModelClient(backend=backend, retries=0))) as server:
        client = openai.OpenAI(base_url=f"{server.base}/v1", api_key="x", max_retries=0)
        resp = client.chat.completions.create(model="fake", messages=[{"role": "user", "content": Q}])
        assert resp.choices[0].message.content == "Paris"
        assert resp.model_extra["selfpara"]["k_requested"] == 2
        assert httpx.get(f"{server.base}/ready").json()["checks"]["upstream"] == "in-process backend"
        resp = client.chat.completions.create(model="fake", messages=[{"role": "user", "content": Q}], n=2)
        assert [c.message.content for c in resp.choices] == ["Paris", "Paris"]
        assert resp.usage.total_tokens > 0
        chunks = list(
            client.chat.completions.create(
                model="fake",
                messages=[{"role": "user", "content": Q}],
                stream=True,
                extra_body={"selfpara": {"enabled": False}},
            )
        )
        assert chunks[0].model_extra["selfpara"]["reason"] == "disabled"
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Paris"
        tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
        r = post(server, chat(tools=tools), key=None)
        assert_openai_error(r, 400, "unsupported")
        # A text-only backend cannot see an image: a clear 400, not the image silently dropped.
        image = [{"type": "text", "text": Q}, {"type": "image_url", "image_url": {"url": "data:,"}}]
        calls = len(backend.calls)
        r = post(server, chat(messages=[{"role": "user", "content": image}]), key=None)
        assert_openai_error(r, 400)
        assert "image_url" in r.json()["error"]["message"]
        assert len(backend.calls) == calls  # refused before any model call
