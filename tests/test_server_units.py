"""Fast unit tests of the proxy's pieces: settings, routing, SSE text splitting, error
mapping, log redaction and the `selfpara serve` command line (no server started)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from typer.testing import CliRunner

from selfpara.cli import app
from selfpara.config import build_config
from selfpara.errors import ConfigError, InputError, UpstreamError, UpstreamTimeout
from selfpara.server.errors import from_selfpara
from selfpara.server.logs import JsonFormatter
from selfpara.server.settings import ServerSettings, load_settings
from selfpara.server.streaming import split_text

# ---- settings ---------------------------------------------------------------------------------


def test_load_settings_from_toml_with_flag_overrides(tmp_path: Path) -> None:
    path = tmp_path / "proxy.toml"
    path.write_text(
        'max_k = 8\napi_key_env = "PROXY_KEY_VAR"\n'
        '[upstream]\nmodel = "openai/llama"\napi_base = "http://gpu:8000/v1"\nk = 4\n'
    )
    env = {"PROXY_KEY_VAR": "s3cret-proxy-key-0001", "UP_KEY": "sk-upstream-0123456789"}
    settings = load_settings(
        path,
        upstream={"k": 6, "model": None},
        server={"max_concurrent_requests": 9},
        upstream_key_env="UP_KEY",
        environ=env,
    )
    assert settings.upstream.model == "openai/llama" and settings.upstream.k == 6
    assert settings.max_k == 8 and settings.max_concurrent_requests == 9
    assert settings.api_key is not None and settings.api_key.get_secret_value() == "s3cret-proxy-key-0001"
    assert (
        settings.upstream.api_key is not None
        and settings.upstream.api_key.get_secret_value() == "sk-upstream-0123456789"
    )
    assert "s3cret" not in repr(settings) and "sk-upstream" not in repr(settings)
    assert settings.resolved_transport({}) == "http"


def test_load_settings_from_json(tmp_path: Path) -> None:
    path = tmp_path / "proxy.json"
    path.write_text(json.dumps({"server": {"max_k": 3}, "upstream": {"model": "openai/x", "k": 2}}))
    settings = load_settings(path, environ={})
    assert settings.max_k == 3 and settings.upstream.k == 2


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ('[upstream]\napi_key = "sk-abc"\n', "keys do not belong in files"),
        ('api_key = "abc"\n', "keys do not belong in files"),
        ("max_k = 0\n", "max_k"),
        ("frobnicate = 1\n", "frobnicate"),
        ("[upstream]\nk = 50\n", "k"),
        ("[upstream]\nk = 12\n", "exceeds max_k"),
        ("this is not toml", "cannot parse"),
    ],
)
def test_bad_config_files(tmp_path: Path, content: str, match: str) -> None:
    path = tmp_path / "proxy.toml"
    path.write_text(content)
    with pytest.raises(ConfigError, match=match):
        load_settings(path, environ={})


def test_missing_key_variable_is_an_error() -> None:
    with pytest.raises(ConfigError, match="NOPE is not set"):
        load_settings(api_key_env="NOPE", environ={})
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_settings("/nonexistent/proxy.toml", environ={})


def test_model_routing_and_helper_models() -> None:
    settings = ServerSettings(upstream=build_config(model="openai/llama"))
    assert settings.model_names() == ["openai/llama", "llama", "selfpara/openai/llama", "selfpara/llama"]
    assert settings.serves("llama") and settings.serves("selfpara/llama") and not settings.serves("gpt-4o")
    assert ServerSettings(upstream=build_config(model="openai/llama"), any_model=True).serves("gpt-4o")
    # only models the operator chose: another model of the provider would be paid with the server's key
    assert settings.helper_model("llama") == "openai/llama" and settings.helper_model("openai/judge") is None
    assert settings.helper_model("anthropic/claude") is None and settings.helper_model("local/smollm2") is None
    listed = ServerSettings(upstream=build_config(model="openai/llama"), allowed_helper_models=["anthropic/c"])
    assert listed.helper_model("anthropic/c") == "anthropic/c" and listed.helper_model("openai/judge") is None
    assert listed.helper_model("selfpara/llama") == "openai/llama"  # the upstream's aliases always resolve
    embedded = ServerSettings(upstream=build_config(model="local/smollm2"))
    assert embedded.model_names()[:2] == ["local/smollm2", "smollm2"]
    assert ServerSettings().model_names()[:2] == ["local/qwen2.5-coder-1.5b", "qwen2.5-coder-1.5b"]  # the default
    assert embedded.helper_model("smollm2") == "local/smollm2"
    assert embedded.helper_model("local/qwen2.5-coder-1.5b") is None


def test_default_client_sends_the_upstream_key_only_to_its_provider() -> None:
    """A judge or paraphraser of another provider (allowed by the operator) must not get the
    upstream's base URL and key: the proxy's client comes from client_from_config."""
    from selfpara.server.state import default_client

    settings = ServerSettings(
        upstream=build_config(model="openai/llama", api_base="http://gpu:8000/v1", api_key="sk-upstream-0123456789"),
        allowed_helper_models=["*"],
    )
    client = default_client(settings)
    assert client.concurrency == settings.upstream_concurrency and client.backoff_s == settings.backoff_s
    own = client._call_params("openai/other")
    assert own["api_base"] == "http://gpu:8000/v1" and own["api_key"] == "sk-upstream-0123456789"
    foreign = client._call_params("anthropic/claude-x")
    assert "api_base" not in foreign and "api_key" not in foreign


def test_bad_server_settings_name_the_field() -> None:
    with pytest.raises(ConfigError, match=r"invalid server settings: max_k: .*less than or equal"):
        load_settings(server={"max_k": 999}, environ={})
    with pytest.raises(ConfigError, match=r"invalid server settings: server: upstream k=9 exceeds max_k=3"):
        load_settings(upstream={"k": 9}, server={"max_k": 3}, environ={})


def test_transport_resolution() -> None:
    def resolved(model: str, env: dict[str, str], **kw: object) -> str:
        return ServerSettings(upstream=build_config(model=model, **kw)).resolved_transport(env)

    assert resolved("openai/llama", {}, api_base="http://h/v1") == "http"
    assert resolved("openai/llama", {"OPENAI_BASE_URL": "http://h/v1"}) == "http"
    assert resolved("openai/gpt-4o-mini", {}) == "litellm"  # api.openai.com: litellm maps its parameters
    assert resolved("anthropic/claude-3-haiku", {}) == "litellm"
    assert resolved("local/smollm2", {}) == "embedded"
    forced = ServerSettings(upstream=build_config(model="openai/x", api_base="http://h"), upstream_transport="litellm")
    assert forced.resolved_transport({}) == "litellm"
    assert forced.upstream.transport == "litellm"  # --upstream-transport is the upstream's WrapConfig.transport
    assert (
        ServerSettings(upstream=build_config(model="openai/x", transport="litellm")).resolved_transport({}) == "litellm"
    )
    with pytest.raises(ValueError, match="openai/ or hosted_vllm/"):
        ServerSettings(upstream=build_config(model="anthropic/x"), upstream_transport="http")


# ---- pieces -------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "Paris", "  leading and trailing  ", "a\nb\n\nc " * 30, "x" * 500, "   "])
def test_split_text_round_trips(text: str) -> None:
    pieces = split_text(text, 16)
    assert "".join(pieces) == text
    assert all(pieces)


def test_streamed_logprobs_follow_the_tokens_or_ride_on_the_first_chunk() -> None:
    from selfpara.server.streaming import answer_events

    def content_chunks(text: str, tokens: list[dict[str, object]], secrets: list[str | None]) -> list[dict]:
        events = [
            json.loads(e[6:])
            for e in answer_events("id", 0, "m", text, chunk_chars=4, logprobs=tokens, secrets=secrets)
            if e.startswith(b"data: {")
        ]
        return [e["choices"][0] for e in events if e["choices"] and e["choices"][0]["delta"].get("content")]

    tokens = [{"token": t, "logprob": -1.0} for t in ["Par", "is", " is", " big"]]
    chunks = content_chunks("Paris is big", tokens, [])
    assert [c["delta"]["content"] for c in chunks] == ["Paris", " is big"]
    assert [[t["token"] for t in c["logprobs"]["content"]] for c in chunks] == [["Par", "is"], [" is", " big"]]
    # tokens that do not spell the text (or a scrubbed secret in it): all on the first chunk
    secret = [*tokens[:3], {"token": " big-secret-1", "logprob": -1.0}]
    for text, given, secrets in (("Paris is huge", tokens, []), ("Paris is big-secret-1", secret, ["big-secret-1"])):
        chunks = content_chunks(text, given, secrets)
        assert len(chunks[0]["logprobs"]["content"]) == 4
        assert all(c["logprobs"] is None for c in chunks[1:])


def test_error_mapping() -> None:
    assert from_selfpara(InputError("empty")).status == 400
    assert from_selfpara(ConfigError("k: bad")).status == 400
    assert from_selfpara(UpstreamTimeout("slow")).status == 504
    assert from_selfpara(UpstreamError("x", status=504)).status == 504
    assert from_selfpara(UpstreamError("x", status=400)).status == 400
    for status, code in [
        (401, "upstream_auth_failed"),
        (404, "upstream_model_not_found"),
        (429, "upstream_rate_limited"),
        (502, "upstream_failed"),
    ]:
        err = from_selfpara(UpstreamError("x", status=status))
        assert (err.status, err.code) == (502, code)
    err = from_selfpara(UpstreamError("bad key sk-live-abcdef123456 and hunter2"), ["hunter2"])
    assert "abcdef123456" not in err.message and "hunter2" not in err.message


def test_json_log_lines_carry_the_request_id_and_no_keys() -> None:
    formatter = JsonFormatter(["hunter2-secret"])
    record = logging.LogRecord(
        "selfpara.server", logging.INFO, __file__, 1, "upstream said %s", ("hunter2-secret",), None
    )
    record.request_id = "abc123"
    line = json.loads(formatter.format(record))
    assert line["request_id"] == "abc123" and line["level"] == "info"
    assert "hunter2" not in line["message"]


# ---- the command line -------------------------------------------------------------------------


def test_serve_check_prints_settings_without_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_PROXY_KEY", "proxy-secret-value")
    monkeypatch.setenv("MY_UP_KEY", "sk-upstream-secret-value")
    result = CliRunner().invoke(
        app,
        [
            "serve",
            "--model",
            "openai/llama",
            "--api-base",
            "http://gpu:8000/v1",
            "--k",
            "3",
            "--max-k",
            "6",
            "--api-key-env",
            "MY_PROXY_KEY",
            "--upstream-key-env",
            "MY_UP_KEY",
            "--any-model",
            "--allowed-host",
            "proxy.example.com",
            "--allowed-host",
            "*.internal",
            "--check",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["allowed_hosts"] == ["proxy.example.com", "*.internal"]
    assert data["upstream"]["model"] == "openai/llama" and data["upstream"]["k"] == 3
    assert data["max_k"] == 6 and data["any_model"] is True and data["auth"] is True
    assert data["upstream_key"] == "set"
    assert "secret-value" not in result.output


def test_serve_reports_bad_settings_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text('[upstream]\napi_key = "sk-nope"\n')
    result = CliRunner().invoke(app, ["serve", "--config", str(path), "--check"])
    assert result.exit_code == 1
    assert "keys do not belong in files" in result.output and "Traceback" not in result.output
    result = CliRunner().invoke(app, ["serve", "--k", "0", "--check"])
    assert result.exit_code == 2 and "Invalid value for '--k' / '-k'" in result.output  # a flag's: usage error


def test_json_log_lines_carry_the_request_lines_fields_as_keys() -> None:
    formatter = JsonFormatter(["hunter2-secret"])
    record = logging.LogRecord("selfpara.server", logging.INFO, __file__, 1, "request_id=r1 status=502", (), None)
    record.fields = {"status": 502, "latency_ms": 13, "detail": "upstream said hunter2-secret"}
    line = json.loads(formatter.format(record))
    assert line["status"] == 502 and line["latency_ms"] == 13 and "hunter2" not in line["detail"]
