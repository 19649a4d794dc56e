"""Odd upstreams, replayed against the real proxy (uvicorn on loopback) and the scriptable fake
upstream: data that JSON cannot carry, malformed stream events, answers past the
byte cap, a stream that trickles past the deadline, Retry-After, 403 and 413. Each is a
clean 4xx/5xx (never 500 internal_error), logged with its status and counted in /metrics,
over both upstream transports where the transport matters."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import httpx
import pytest

from tests.fake_upstream import FakeUpstream, ThreadedServer
from tests.helpers.proxy import (  # fake, reset_fake: the module's fake upstream, reset before each test
    Q,
    assert_openai_error,
    chat,
    completion_body,
    fake,
    healthy,
    metric,
    post,
    request_lines,
    reset_fake,
    settings_for,
    sse,
    sse_lines,
    start,
    wait_idle,
)

OFF = {"selfpara": {"enabled": False}}
FIXTURES = (fake, reset_fake)


@pytest.fixture(scope="module", params=["http", "litellm"])
def xproxy(request: pytest.FixtureRequest, fake: FakeUpstream) -> Iterator[ThreadedServer]:
    """The proxy over each upstream transport."""
    server = start(settings_for(fake, upstream_transport=request.param))
    yield server
    server.stop()


def errors_of(kind: str, server: ThreadedServer) -> float:
    return metric(server, "selfpara_errors_total", kind=kind)


# ---- data JSON cannot carry ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [completion_body("hi", "NaN"), completion_body("hi", "Infinity"), completion_body("caf\\ud800")],
    ids=["nan-logprob", "infinity-logprob", "lone-surrogate"],
)
def test_unrelayable_passthrough_body_is_a_counted_502(
    xproxy: ThreadedServer, fake: FakeUpstream, body: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    before = errors_of("upstream_invalid_response", xproxy)
    fake.raw(body, times=None)
    with caplog.at_level(logging.INFO, logger="selfpara.server"):
        r = post(xproxy, chat(logprobs=True, **OFF))
    error = assert_openai_error(r, 502, "upstream_invalid_response")
    assert "cannot be relayed as JSON" in error["message"]
    lines = request_lines(caplog, r.headers["x-request-id"])
    assert len(lines) == 1 and " status=502 " in lines[0] and "upstream_invalid_response" in lines[0], lines
    assert errors_of("upstream_invalid_response", xproxy) == before + 1
    assert "Traceback" not in caplog.text and "internal_error" not in caplog.text
    if "litellm" not in xproxy.server.config.app.state.proxy.settings.resolved_transport():
        # the http transport refuses NaN as it reads the body: a failed attempt of its own kind
        assert metric(xproxy, "selfpara_upstream_errors_total", kind="passthrough", reason="invalid_response") >= 1
    healthy(xproxy, fake)


@pytest.mark.parametrize("answer", ["caf\ud800", "\udfff"])
def test_a_lone_surrogate_in_wrapped_answers_is_a_502_not_a_500(
    xproxy: ThreadedServer, fake: FakeUpstream, answer: str, caplog: pytest.LogCaptureFixture
) -> None:
    fake.reset(answer=answer)
    with caplog.at_level(logging.INFO, logger="selfpara.server"):
        plain = post(xproxy, chat())
        streamed = post(xproxy, chat(stream=True))
    assert_openai_error(plain, 502)
    assert plain.json()["error"]["code"] != "internal_error"
    if streamed.status_code == 200:  # failed after the first keep-alive: an error event
        assert json.loads(sse_lines(streamed)[-2][len("data: ") :])["error"]["code"] != "internal_error"
    else:
        assert streamed.status_code == 502
    assert "Traceback" not in caplog.text
    healthy(xproxy, fake)


def test_infinity_in_wrapped_logprobs_is_not_relayed(xproxy: ThreadedServer, fake: FakeUpstream) -> None:
    fake.raw(completion_body("Paris", "-Infinity"), when="answer", times=None)
    r = post(xproxy, chat(logprobs=True))
    assert r.status_code == 502 and r.json()["error"]["code"] != "internal_error", r.text
    healthy(xproxy, fake)


def test_unrelayable_passthrough_stream_event_ends_the_stream_with_an_error(
    xproxy: ThreadedServer, fake: FakeUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    role = '{"id":"c","object":"chat.completion.chunk","created":1,"model":"fake","choices":[{"index":0,"delta":'
    fake.raw(sse(role + '{"content":"ok"}}]}', role + '{"content":"caf\\ud800"}}]}', "[DONE]"), stream=True, times=None)
    with caplog.at_level(logging.INFO, logger="selfpara.server"):
        r = post(xproxy, chat(stream=True, **OFF))
    lines = sse_lines(r)
    assert r.status_code == 200 and lines[-1] == "data: [DONE]", r.text
    error = json.loads(lines[-2][len("data: ") :])["error"]
    assert error["code"] == "upstream_invalid_response"
    logged = request_lines(caplog, r.headers["x-request-id"])
    assert len(logged) == 1 and " status=502 " in logged[0], logged
    healthy(xproxy, fake)


# ---- malformed paraphrase stream chunks with adaptive k ------------------------------------------


@pytest.mark.parametrize(
    "event",
    [
        "[1, 2]",
        '{"choices": ["x"]}',
        '{"choices": [{"index": 0, "delta": {"content": "1. a"}}], "usage": {"prompt_tokens": "many"}}',
        '{"choices": [{"index": 0, "delta": "text"}]}',
        '{"choices": [{"index": 0, "delta": {"content": 5}}]}',
    ],
)
def test_malformed_paraphrase_stream_events_with_adaptive_k(
    xproxy: ThreadedServer, fake: FakeUpstream, event: str, caplog: pytest.LogCaptureFixture
) -> None:
    fake.raw(sse(event, "[DONE]"), when="paraphrase", stream=True, times=None)
    with caplog.at_level(logging.INFO):
        r = post(xproxy, chat(selfpara={"adaptive": True, "k": 3}))
    assert "Traceback" not in caplog.text and "unexpected error" not in caplog.text
    assert r.status_code in (200, 502), r.text
    if r.status_code == 200:  # the paraphrase call failed: the original's answer, flagged
        report = r.json()["selfpara"]
        assert r.json()["choices"][0]["message"]["content"] == "Paris"
        assert "paraphrase_failed" in report["flags"] or report["k_kept"] == 0, report
    else:
        assert r.json()["error"]["code"] != "internal_error"
    assert fake.calls_of("paraphrase")  # the stream was asked for
    healthy(xproxy, fake)


# ---- the byte cap on upstream responses -----------------------------------------------------------


@pytest.mark.parametrize("transport", ["http", "litellm"])
def test_an_answer_past_the_byte_cap_is_a_502(fake: FakeUpstream, transport: str) -> None:
    with start(settings_for(fake, upstream_transport=transport, max_upstream_response_bytes=64_000)) as server:
        fake.reset(answer="word " * 20_000)  # 100 kB, over the 64 kB cap
        assert_openai_error(post(server, chat(**OFF)), 502, "upstream_response_too_large")
        wrapped = post(server, chat())
        assert wrapped.status_code == 502 and wrapped.json()["error"]["code"] != "internal_error"
        fake.reset(answer="word " * 1000)  # 5 kB: under the cap
        assert post(server, chat(**OFF)).status_code == 200
        assert metric(server, "selfpara_upstream_errors_total", kind="answer", reason="too_large") >= 1
        healthy(server, fake)


def test_a_5_mb_answer_is_refused_by_default(proxy_default: ThreadedServer, fake: FakeUpstream) -> None:
    """The probe: a 5 MB answer became a 30 MB wrapped response and stalled the proxy."""
    fake.reset(answer="word " * 1_000_000)
    assert_openai_error(post(proxy_default, chat(**OFF)), 502, "upstream_response_too_large")
    assert post(proxy_default, chat()).status_code == 502  # answered, within the client's 30 s
    assert httpx.get(f"{proxy_default.base}/health", timeout=5).status_code == 200


@pytest.fixture(scope="module")
def proxy_default(fake: FakeUpstream) -> Iterator[ThreadedServer]:
    with start(settings_for(fake)) as server:
        yield server


def test_a_stream_past_the_byte_cap_is_cut_off(fake: FakeUpstream) -> None:
    role = '{"id":"c","object":"chat.completion.chunk","created":1,"model":"fake","choices":[{"index":0,"delta":'
    piece = role + '{"content":"' + "x" * 1000 + '"}}]}'
    fake.raw(sse(*[piece] * 100, "[DONE]"), stream=True, times=None)  # 100 kB in all
    with start(settings_for(fake, max_upstream_response_bytes=20_000)) as server:
        lines = sse_lines(post(server, chat(stream=True, **OFF)))
        assert lines[-1] == "data: [DONE]"
        assert json.loads(lines[-2][len("data: ") :])["error"]["code"] == "upstream_response_too_large"
        assert 10 < len(lines) < 30  # relayed up to the cap, not all 100 events
        healthy(server, fake)


# ---- one deadline, passthrough streams included -----------------------------------------------------


def test_a_trickling_passthrough_stream_ends_by_the_deadline(
    fake: FakeUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    role = '{"id":"c","object":"chat.completion.chunk","created":1,"model":"fake","choices":[{"index":0,"delta":'
    # one event, then the rest held: without the deadline the stream would never end
    fake.raw(sse(*[role + '{"content":"w "}}]}'] * 40, "[DONE]"), stream=True, held=True, times=None)
    with start(settings_for(fake, request_timeout_s=1.0)) as server:
        with caplog.at_level(logging.INFO, logger="selfpara.server"):
            r = post(server, chat(stream=True, **OFF))
        lines = sse_lines(r)
        assert lines[-1] == "data: [DONE]"
        assert json.loads(lines[-2][len("data: ") :])["error"]["code"] == "request_timeout"
        logged = request_lines(caplog, r.headers["x-request-id"])
        assert len(logged) == 1 and " status=504 " in logged[0], logged
        wait_idle(server, "the cut stream's slot is free")  # released as the response closes
        assert metric(server, "selfpara_errors_total", kind="request_timeout") == 1
        healthy(server, fake)


# ---- Retry-After, 403 and 413 on both transports ---------------------------------------------------


@pytest.mark.parametrize("status, code", [(429, "upstream_rate_limited"), (503, "upstream_failed")])
def test_the_upstreams_retry_after_is_passed_on(fake: FakeUpstream, status: int, code: str) -> None:
    for transport in ("http", "litellm"):
        fake.reset()
        fake.fail(status, times=None, headers={"Retry-After": "7"})
        with start(settings_for(fake, {"retries": 0}, upstream_transport=transport)) as server:
            r = post(server, chat(**OFF))
            assert_openai_error(r, 502, code)
            assert r.headers.get("retry-after") == "7", (transport, r.headers)
            fake.reset()
            fake.fail(status, times=None)  # none given: none passed on
            assert "retry-after" not in post(server, chat(**OFF)).headers


def test_the_openai_client_does_not_retry_an_upstream_failure_the_proxy_retried(fake: FakeUpstream) -> None:
    openai = pytest.importorskip("openai")
    from tests.helpers.proxy import PROXY_KEY

    fake.fail(500, times=None)
    with start(settings_for(fake, {"retries": 1})) as server:
        client = openai.OpenAI(base_url=f"{server.base}/v1", api_key=PROXY_KEY)  # its default: 2 retries
        with pytest.raises(openai.InternalServerError) as raised:
            client.chat.completions.create(model="openai/fake", messages=[{"role": "user", "content": Q}], **OFF_SDK)
        assert raised.value.status_code == 502 and raised.value.response.headers["x-should-retry"] == "false"
        assert len(fake.calls) == 2  # the proxy's one try and one retry; none more from the client
        fake.reset()
        fake.fail(429, times=None, headers={"Retry-After": "7"})  # the upstream asks to retry later: the client may
        assert "x-should-retry" not in post(server, chat(**OFF)).headers


OFF_SDK = {"extra_body": OFF}


@pytest.mark.parametrize(
    "status, expected, code", [(403, 502, "upstream_auth_failed"), (413, 400, "upstream_rejected_request")]
)
def test_403_and_413_map_alike_on_both_transports(
    xproxy: ThreadedServer, fake: FakeUpstream, status: int, expected: int, code: str
) -> None:
    fake.fail(status, times=None)
    assert_openai_error(post(xproxy, chat(**OFF)), expected, code)
    assert len(fake.calls) == 1  # neither is retried


def test_the_retry_after_header_is_read_as_seconds_or_a_date() -> None:
    from email.utils import formatdate

    from selfpara.models.upstream_data import MAX_RETRY_AFTER_S, retry_after_seconds

    assert retry_after_seconds("12") == 12
    assert retry_after_seconds("99999999") == MAX_RETRY_AFTER_S
    assert retry_after_seconds(None) is None and retry_after_seconds("soon") is None
    now = 1_700_000_000.0
    assert retry_after_seconds(formatdate(now + 30, usegmt=True), clock=lambda: now) == 30
    assert (
        retry_after_seconds(formatdate(now + 29.5, usegmt=True), clock=lambda: now) == 29
    )  # whole seconds on the wire
    assert retry_after_seconds(formatdate(now - 60, usegmt=True), clock=lambda: now) == 0  # a date past


def test_the_ask_of_a_json_object_still_works(xproxy: ThreadedServer, fake: FakeUpstream) -> None:
    """The guards leave ordinary answers alone: a JSON-mode passthrough and a wrapped answer."""
    r = post(xproxy, chat(response_format={"type": "json_object"}))
    assert r.status_code == 200 and json.loads(r.json()["choices"][0]["message"]["content"]) == {"answer": "Paris"}
    assert post(xproxy, chat(Q)).json()["choices"][0]["message"]["content"] == "Paris"
