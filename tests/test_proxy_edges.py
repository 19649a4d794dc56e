"""The proxy's edges: the Host check against DNS rebinding, Responses input validated
like chat input, structured output refused where the upstream only returns text, clients that
hang up mid-stream logged and counted, a Responses stream cut by shutdown ending with a
Responses error event, /v1/completions refusing settings it cannot apply. Real uvicorn on
loopback and the scriptable fake upstream."""

from __future__ import annotations

import json
import logging
import socket
from typing import Any

import httpx
import openai
import pytest

from selfpara.config import build_config
from selfpara.models.client import ModelClient
from selfpara.server import ServerSettings, create_app
from selfpara.testing import FakeBackend
from tests.fake_upstream import FakeUpstream, ThreadedServer
from tests.helpers.proxy import (  # fake, reset_fake: the module's fake upstream, reset before each test
    AUTH,
    PROXY_KEY,
    BackgroundStream,
    Q,
    assert_openai_error,
    chat,
    fake,
    metric,
    post,
    request_lines,
    reset_fake,
    settings_for,
    sse,
    start,
    wait_idle,
)

FIXTURES = (fake, reset_fake)


def get(server: ThreadedServer, path: str, host: str) -> httpx.Response:
    return httpx.get(f"{server.base}{path}", headers={**AUTH, "Host": host}, timeout=10)


# ---- the Host check -------------------------------------------------------------------------------


def test_a_loopback_proxy_serves_loopback_names_only(fake: FakeUpstream, caplog: pytest.LogCaptureFixture) -> None:
    with start(settings_for(fake, api_key=None)) as server:
        port = server.port
        with caplog.at_level(logging.WARNING, logger="selfpara.server"):
            for path in ("/metrics", "/ready", "/health", "/v1/models"):
                assert_openai_error(get(server, path, f"rebound.attacker.example:{port}"), 400, "invalid_host")
            r = httpx.post(
                f"{server.base}/v1/chat/completions", json=chat(), headers={"Host": "attacker.example"}, timeout=10
            )
            assert_openai_error(r, 400, "invalid_host")
        assert fake.calls == []  # refused before any route ran
        assert "attacker.example" in caplog.text
        for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}", "LOCALHOST", "app.localhost"):
            assert get(server, "/metrics", host).status_code == 200, host
        assert post(server, chat(), key=None).status_code == 200  # httpx sends Host: 127.0.0.1:PORT


def test_allowed_hosts_lists_the_names_served(fake: FakeUpstream) -> None:
    with start(settings_for(fake, allowed_hosts=["proxy.example", "*.corp.example"])) as server:
        assert get(server, "/health", "proxy.example").status_code == 200
        assert get(server, "/health", "a.b.corp.example:443").status_code == 200
        assert_openai_error(get(server, "/health", f"localhost:{server.port}"), 400, "invalid_host")
        assert_openai_error(get(server, "/health", "corp.example.evil"), 400, "invalid_host")
    with start(settings_for(fake, allowed_hosts=["*"])) as server:
        assert get(server, "/health", "anything.example").status_code == 200


def test_the_host_rule() -> None:
    from selfpara.server.hosts import host_name, host_ok

    assert host_name("Example.COM:8080") == "example.com" and host_name("[::1]:80") == "::1"
    assert host_ok("evil.example", "10.1.2.3", None)  # not on loopback: any name by default
    assert not host_ok("evil.example", "127.0.0.1", None)
    assert host_ok("127.0.0.2:9", "127.0.0.1", None) and host_ok("::1", "::1", None)
    assert not host_ok(None, "10.1.2.3", None)  # a request without a Host header
    assert not host_ok("localhost", "127.0.0.1", ["proxy.example"])


# ---- Responses input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body, param",
    [
        ({"input": "hi", "text": {"format": "json"}}, "text.format"),
        ({"input": "hi", "text": {"format": {"schema": {}}}}, "text.format"),
        ({"input": []}, "input"),
        ({"input": [{}]}, "input.0"),
        ({"input": [{"role": "user", "content": None}]}, "input.0"),
    ],
)
def test_responses_input_is_validated_like_chat_input(
    fake: FakeUpstream, body: dict[str, Any], param: str, caplog: pytest.LogCaptureFixture
) -> None:
    with start(settings_for(fake)) as server, caplog.at_level(logging.INFO):
        r = httpx.post(f"{server.base}/v1/responses", json={"model": "openai/fake", **body}, headers=AUTH, timeout=10)
        error = assert_openai_error(r, 400)
        assert error["param"] == param, error
        assert fake.calls == [] and "Traceback" not in caplog.text


# ---- structured output from a text-only upstream -------------------------------------------------------


def text_only_server(model: str = "openai/fake") -> ThreadedServer:
    settings = ServerSettings(upstream=build_config(model=model, k=2, paraphrase_check="off"), any_model=True)
    return ThreadedServer(create_app(settings, client=ModelClient(backend=FakeBackend(), retries=0)))


@pytest.mark.parametrize(
    "fmt",
    [
        {"type": "json_object"},
        {"type": "json_schema", "json_schema": {"name": "a", "schema": {"type": "object"}}},
    ],
)
@pytest.mark.parametrize("model", ["openai/fake", "local/smollm2"])  # a backend without passthrough, as llama.cpp's
def test_a_json_response_format_is_refused_where_the_upstream_returns_text_only(
    fmt: dict[str, Any], model: str
) -> None:
    with text_only_server(model) as server:
        for stream in (False, True):
            body = {**chat(response_format=fmt), "stream": stream}
            r = httpx.post(f"{server.base}/v1/chat/completions", json=body, timeout=10)
            error = assert_openai_error(r, 400, "unsupported")
            assert error["param"] == "response_format" and fmt["type"] in error["message"]
        plain = {**chat(response_format={"type": "text"}), "selfpara": {"enabled": False}}
        assert httpx.post(f"{server.base}/v1/chat/completions", json=plain, timeout=10).status_code == 200


# ---- clients that hang up mid-stream ---------------------------------------------------------------


def read_one_line_then_hang_up(server: ThreadedServer, body: dict[str, Any]) -> str:
    """Open a stream, read its first non-empty line, close the connection; the request id."""
    headers = {"Authorization": f"Bearer {PROXY_KEY}"}
    with httpx.stream("POST", f"{server.base}/v1/chat/completions", json=body, headers=headers, timeout=10) as r:
        assert r.status_code == 200
        for line in r.iter_lines():
            if line:
                break
        return r.headers["x-request-id"]


@pytest.mark.parametrize("mode", ["passthrough", "wrapped"])
def test_a_client_hanging_up_mid_stream_is_logged_and_counted(
    fake: FakeUpstream, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    if mode == "passthrough":  # the upstream sends one event, then holds the rest
        role = '{"id":"c","object":"chat.completion.chunk","created":1,"model":"fake","choices":[{"index":0,"delta":'
        fake.raw(sse(*[role + '{"content":"w "}}]}'] * 30, "[DONE]"), stream=True, held=True, times=None)
        body = chat(stream=True, selfpara={"enabled": False})
    else:  # every upstream call is held: the client hangs up after the first keep-alive
        fake.hold()
        body = chat(stream=True)
    with start(settings_for(fake)) as server, caplog.at_level(logging.INFO, logger="selfpara.server"):
        rid = read_one_line_then_hang_up(server, body)
        wait_idle(server, "the hung-up stream's slot is free")  # freed just after its line is logged
        lines = request_lines(caplog, rid)
        assert len(lines) == 1 and " status=499 " in lines[0] and "client_disconnected" in lines[0], lines
        assert metric(server, "selfpara_errors_total", kind="client_disconnected") == 1
        assert "unexpected error" not in caplog.text


# ---- shutdown during a Responses stream ----------------------------------------------------------------


def test_shutdown_during_a_responses_stream_sends_a_responses_error_event(fake: FakeUpstream) -> None:
    fake.hold(when="answer")  # the answers never come: the stream is still open at shutdown
    server = start(settings_for(fake, keepalive_s=0.2), graceful_s=0.5)
    stream = BackgroundStream(server, {"model": "openai/fake", "input": Q, "stream": True}, "/v1/responses")
    assert stream.wait_started() == ": keep-alive"  # the headers and a keep-alive are out
    server.stop()
    lines = stream.join()
    assert lines[-2] == "event: error", lines[-3:]
    data = json.loads(lines[-1][len("data: ") :])
    assert data["type"] == "error" and data["code"] == "shutting_down"


def test_the_openai_client_raises_on_a_responses_error_event(fake: FakeUpstream) -> None:
    """A Responses stream's failure, in the form the `openai` client raises on."""
    fake.fail(500, when="answer", times=None)
    with start(settings_for(fake, keepalive_s=0.05)) as server:
        fake.hold(when="paraphrase")  # the request cannot fail before its stream has started
        client = openai.OpenAI(base_url=f"{server.base}/v1", api_key=PROXY_KEY, max_retries=0)
        stream = client.responses.create(model="openai/fake", input=Q, stream=True)  # the 200 is out
        fake.release()
        with pytest.raises(openai.APIError):
            list(stream)


# ---- /v1/completions and settings it cannot apply ----------------------------------------------------------


@pytest.mark.parametrize("options", [{"api_base": "http://127.0.0.1:9/v1"}, {"k": 3}, "yes"])
def test_completions_refuse_selfpara_settings_they_cannot_apply(fake: FakeUpstream, options: Any) -> None:
    with start(settings_for(fake, client_api_bases=["*"])) as server:
        body = {"model": "openai/fake", "prompt": "Hello", "selfpara": options}
        r = httpx.post(f"{server.base}/v1/completions", json=body, headers=AUTH, timeout=10)
        assert assert_openai_error(r, 400)["param"] == "selfpara"
        assert fake.calls == []
        body["selfpara"] = {"enabled": False}
        assert httpx.post(f"{server.base}/v1/completions", json=body, headers=AUTH, timeout=10).status_code == 200


# ---- a body framed two ways (issue 45, item 11) ----------------------------------------------------------------


def test_a_body_with_both_transfer_encoding_and_content_length_is_refused_and_the_connection_closed(
    fake: FakeUpstream,
) -> None:
    """The probe: such a body was answered 200 and the connection kept open; behind a front proxy that goes by
    Content-Length, the rest of the chunked body would be read as the next request (request smuggling)."""
    body = json.dumps(chat()).encode()
    chunked = f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n"
    head = (
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {PROXY_KEY}\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"
    )
    with start(settings_for(fake)) as server, socket.create_connection(("127.0.0.1", server.port)) as s:
        s.settimeout(30)  # a bound on a hang: the server closes the connection after its answer
        s.sendall(head.encode() + chunked)
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 400 ") and b"ambiguous_body_length" in answer
    assert fake.calls == []
