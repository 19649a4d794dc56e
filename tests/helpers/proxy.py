"""The proxy's test helpers: the keys, a module's fake upstream (a fixture, reset before each
test), settings over it, a proxy on loopback and the requests, answers, logs and metrics the
proxy tests read. Import the fixtures by name: `from tests.helpers.proxy import fake, reset_fake`."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from selfpara.config import build_config
from selfpara.server.settings import ServerSettings
from tests.fake_upstream import FakeUpstream, ThreadedServer, serve_fake
from tests.helpers.waiting import wait_until

UPSTREAM_KEY = "sk-upstream-secret-0123456789abcdef"
PROXY_KEY = "proxy-key-for-tests"
AUTH = {"Authorization": f"Bearer {PROXY_KEY}"}
METRICS_KEY = "metrics-key-of-the-operator"
"""The operator's /metrics key: only it reads the series that count cache hits and upstream calls."""
Q = "What is the capital of France?"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeUpstream]:
    """The module's fake upstream (one server for the module)."""
    yield from serve_fake()


@pytest.fixture(autouse=True)
def reset_fake(fake: FakeUpstream) -> None:
    """The fake upstream forgets the calls and scripts of the test before (autouse where imported)."""
    fake.reset()


def settings_for(fake: FakeUpstream, upstream: dict[str, Any] | None = None, **server: Any) -> ServerSettings:
    up = {
        "model": "openai/fake",
        "api_base": fake.url,
        "api_key": UPSTREAM_KEY,
        "k": 3,  # type: ignore[attr-defined]
        "timeout_s": 3.0,
        "retries": 2,
        # These proxies live for a whole module and the tests script and count upstream calls of
        # repeated questions: no call cache here (tests/test_cache_proxy.py tests it).
        "cache": "off",
        # The tests script the model's paraphrases; the renamings have their own (test_renamings.py).
        "renamings": False,
        **(upstream or {}),
    }
    srv = {
        "api_key": PROXY_KEY,
        "metrics_key": METRICS_KEY,
        "backoff_s": 0.01,
        "keepalive_s": 0.2,
        "max_k": 5,
        "max_max_tokens": 512,
        "max_messages": 20,
        "max_body_bytes": 20_000,
        "max_concurrent_requests": 32,
        **server,
    }
    return ServerSettings(upstream=build_config(**up), **srv)


def start(settings: Any, **config: Any) -> ThreadedServer:
    from selfpara.server import create_app
    from selfpara.server.protocol import uvicorn_options

    return ThreadedServer(
        create_app(settings), graceful_s=config.pop("graceful_s", 5.0), **{**uvicorn_options(settings), **config}
    ).start()


def wait_idle(server: ThreadedServer, what: str = "the proxy has no request in flight") -> None:
    """Return once the proxy's concurrency gate is empty (its slots are freed on the server's thread,
    just after a request's log line: there is no event to wait on)."""
    gate = server.server.config.app.state.proxy.gate
    wait_until(lambda: gate.active == 0, what)


def healthy(server: ThreadedServer, fake: FakeUpstream) -> None:
    """The server still answers a plain request correctly and has no request left in flight."""
    wait_idle(server)
    fake.reset()
    r = post(server, chat())
    assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == "Paris"


class BackgroundStream:
    """A streamed POST read on its own thread: `started` is set at its first non-empty line.

    `join()` waits for the stream to end and returns its non-empty lines.
    """

    def __init__(self, server: ThreadedServer, body: dict[str, Any], path: str = "/v1/chat/completions") -> None:
        self.url = f"{server.base}{path}"
        self.body = body
        self.status: int | None = None
        self.lines: list[str] = []
        self.started = threading.Event()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            with httpx.stream("POST", self.url, json=self.body, headers=AUTH, timeout=30) as r:
                self.status = r.status_code
                for line in r.iter_lines():
                    if line:
                        self.lines.append(line)
                        self.started.set()
        finally:
            self.started.set()  # a stream that failed or ended empty wakes its waiter too

    def wait_started(self) -> str:
        """The first line, once it has arrived (AssertionError if the stream ended without one)."""
        assert self.started.wait(30) and self.lines, f"the stream sent no line (status {self.status})"
        return self.lines[0]

    def join(self) -> list[str]:
        self.thread.join(timeout=30)
        assert not self.thread.is_alive(), "the stream did not end"
        return self.lines


def sse_lines(response: httpx.Response) -> list[str]:
    return [line for line in response.text.splitlines() if line]


def post(server: ThreadedServer, body: Any, *, key: str | None = PROXY_KEY, **kwargs: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    headers["Content-Type"] = "application/json"
    headers.update(kwargs.pop("headers", {}))
    if not isinstance(body, (bytes, str)):
        body = json.dumps(body)
    return httpx.post(f"{server.base}/v1/chat/completions", content=body, headers=headers, timeout=30, **kwargs)


def chat(question: str = Q, **extra: Any) -> dict[str, Any]:
    return {"model": "openai/fake", "messages": [{"role": "user", "content": question}], **extra}


def assert_openai_error(response: httpx.Response, status: int, code: str | None = None) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["message"]
    if code is not None:
        assert error["code"] == code
    assert UPSTREAM_KEY not in response.text and PROXY_KEY not in response.text
    assert response.headers.get("x-request-id")
    return error


def metric(server: ThreadedServer, name: str, *, key: str = METRICS_KEY, **labels: str) -> float:
    """One sample of the proxy's /metrics read with `key` (0 when absent)."""
    text = httpx.get(f"{server.base}/metrics", headers={"Authorization": f"Bearer {key}"}, timeout=10).text
    want = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    for line in text.splitlines():
        m = re.match(r"^(\w+)(?:\{(.*)\})? (\S+)$", line)
        if m and m.group(1) == name and ",".join(sorted((m.group(2) or "").split(","))) == want:
            return float(m.group(3))
    return 0.0


def request_lines(caplog: pytest.LogCaptureFixture, rid: str) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "selfpara.server" and r.getMessage().startswith(f"request_id={rid} status=")
    ]


def sse(*events: str) -> list[bytes]:
    return [f"data: {e}\n\n".encode() for e in events]


CHUNK = '{"id":"c","object":"chat.completion.chunk","created":1,"model":"fake","choices":[{"index":0,"delta":'
"""The start of a stream event: add a delta object and `}]}`."""


def completion_body(content: str, logprob: str = "-0.5") -> bytes:
    """An upstream chat completion written by hand, so that it can hold what json.dumps would not write."""
    return (
        '{"id":"chatcmpl-x","object":"chat.completion","created":1,"model":"fake","choices":[{"index":0,'
        f'"message":{{"role":"assistant","content":"{content}"}},"finish_reason":"stop","logprobs":{{"content":'
        f'[{{"token":"hi","logprob":{logprob},"bytes":[104],"top_logprobs":[]}}]}}}}],'
        '"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}'
    ).encode()
