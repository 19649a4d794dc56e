"""A connection that cannot be made is named as such (issue 46, item 1): "cannot connect to <URL>
(connection refused)", with the URL and the cause and no object repr, at once and not retried as if a
server had answered; `selfpara ask` exits with 1, as docs/cli.md gives an upstream failure. Against a
real closed loopback port, on both transports: litellm (`openai/...` with a base URL and transport
litellm, Ollama's names) and the http backend (`hosted_vllm/...`, `openai/...` over http)."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx
import pytest
from typer.testing import CliRunner

from selfpara.cli import app
from selfpara.config import build_config
from selfpara.errors import UpstreamError
from selfpara.models.client import ModelClient
from selfpara.models.unreachable import UpstreamUnreachable, connect_failure, unreachable
from selfpara.result import Usage
from selfpara.server import ServerSettings
from tests.helpers.proxy import assert_openai_error, chat, post, start

TRANSPORTS = [
    ("openai/m", "litellm"),  # litellm, through its OpenAI client
    ("ollama/m", "auto"),  # litellm's own client
    ("openai/m", "http"),
    ("hosted_vllm/m", "auto"),  # the http backend for a vLLM name
]


@pytest.fixture()
def closed_base() -> Iterator[str]:
    """The base URL of a loopback port nothing listens on (bound, then closed: connecting is refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    yield f"http://127.0.0.1:{port}/v1"


@pytest.mark.parametrize("model, transport", TRANSPORTS)
async def test_a_refused_connection_is_named_with_its_url_and_not_retried(
    closed_base: str, model: str, transport: str
) -> None:
    client = ModelClient(api_base=closed_base, api_key="sk-test-0123456789", transport=transport, retries=3)  # type: ignore[arg-type]
    usage = Usage()
    with pytest.raises(UpstreamUnreachable) as caught:
        await client.complete(model, [{"role": "user", "content": "hi"}], usage=usage)
    assert str(caught.value) == f"{model}: cannot connect to {closed_base} (connection refused)"
    assert usage.calls == 1 and usage.failed_calls == 1  # retries=3, yet one attempt: nothing answered
    await client.aclose()


@pytest.mark.parametrize("model, transport", [("openai/m", "litellm"), ("hosted_vllm/m", "auto")])
def test_ask_reports_the_refused_url_and_exits_1(closed_base: str, model: str, transport: str) -> None:
    result = CliRunner().invoke(
        app,
        [
            "ask",
            "What is the capital of France?",
            "--model",
            model,
            "--api-base",
            closed_base,
            "--transport",
            transport,
        ],
        env={"OPENAI_API_KEY": "sk-test-0123456789", "COLUMNS": "300"},
    )
    assert result.exit_code == 1, result.output
    assert f"cannot connect to {closed_base} (connection refused)" in result.output
    assert "object at 0x" not in result.output and "upstream error 500" not in result.output


def test_the_proxy_logs_the_url_and_tells_its_client_only_a_generic_reason(
    closed_base: str, caplog: pytest.LogCaptureFixture
) -> None:
    upstream = build_config(model="hosted_vllm/m", api_base=closed_base, k=2, cache="off", retries=3)
    with start(ServerSettings(upstream=upstream, api_key=None)) as proxy, caplog.at_level("INFO", logger="selfpara"):
        r = post(proxy, {**chat(), "model": "hosted_vllm/m"}, key=None)
    error = assert_openai_error(r, 502, "upstream_failed")
    assert closed_base not in r.text and "connection refused" not in error["message"]
    assert f"cannot connect to {closed_base} (connection refused)" in caplog.text


def test_what_counts_as_no_connection() -> None:
    refused = ConnectionRefusedError(111, "Connection refused")
    assert connect_failure(refused) == "connection refused"
    assert connect_failure(socket.gaierror(-2, "Name or service not known")) == "host not found"
    wrapped = UpstreamError("litellm.APIConnectionError: OllamaException - [Connect call failed ('127.0.0.1', 1)]")
    assert connect_failure(wrapped) is None  # no connection error among its classes: its text is not read
    assert connect_failure(ConnectionResetError(104, "Connection reset by peer")) is None  # it had connected
    assert connect_failure(TimeoutError()) is None
    several = OSError("Multiple exceptions: [Errno 111] Connect call failed ('::1', 9, 0, 0), [Errno 111] ...")
    assert connect_failure(several) == "connection refused"  # asyncio, for localhost's two addresses


async def test_an_ollama_model_with_no_base_names_the_server_it_tried(
    closed_base: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # it named https://api.openai.com: litellm's exceptions carry a placeholder request there
    server = closed_base.removesuffix("/v1")
    monkeypatch.setenv("OLLAMA_API_BASE", server)
    client = ModelClient(retries=0)
    with pytest.raises(UpstreamUnreachable) as caught:
        await client.complete("ollama/m", [{"role": "user", "content": "hi"}], usage=Usage())
    assert str(caught.value) == f"ollama/m: cannot connect to {server} (connection refused)"
    await client.aclose()


def test_litellms_placeholder_url_is_not_named_for_another_provider() -> None:
    placeholder = httpx.ConnectError("Connection refused", request=httpx.Request("POST", "https://api.openai.com/v1"))
    assert (
        str(unreachable("anthropic/m", placeholder, None))
        == "anthropic/m: cannot connect to the upstream (connection refused)"
    )
    assert "https://api.openai.com" in str(unreachable("openai/m", placeholder, None))


async def test_only_a_base_on_this_machine_is_probed(monkeypatch: pytest.MonkeyPatch) -> None:
    # a remote base may be reachable only through an HTTP proxy, which a bare connect would not use
    from selfpara.models.litellm_backend import LiteLLMBackend

    dialled: list[str] = []

    async def refuse(host: str, port: int) -> None:
        dialled.append(host)
        raise ConnectionRefusedError(111, "Connection refused")

    monkeypatch.setattr("asyncio.open_connection", refuse)
    backend = LiteLLMBackend()
    await backend.prepare("openai/m", {"api_base": "https://llm.example.com/v1"})
    assert dialled == []
    with pytest.raises(UpstreamUnreachable):
        await backend.prepare("openai/m", {"api_base": "http://localhost:9/v1"})
    assert dialled == ["localhost"]
