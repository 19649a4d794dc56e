"""A missing key is found before anything is sent, named, and never retried: per provider, from
selfpara's own lookup (OpenAI) or litellm's, with a key or base URL given counting as present."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from selfpara import SelfParaphraser
from selfpara.cli import app
from selfpara.errors import ConfigError, MissingCredential
from selfpara.models.client import ModelClient
from selfpara.models.credentials import missing_credential
from selfpara.result import Usage
from selfpara.testing import FakeBackend

OPENAI_ENV = {"OPENAI_API_KEY": None, "OPENAI_API_BASE": None, "OPENAI_BASE_URL": None}


@pytest.mark.parametrize(
    "model, given, environ, missing",
    [
        ("openai/gpt-4o-mini", {}, {}, ("OPENAI_API_KEY",)),
        ("openai/gpt-4o-mini", {}, {"OPENAI_API_KEY": ""}, ("OPENAI_API_KEY",)),  # empty is unset
        ("openai/gpt-4o-mini", {}, {"OPENAI_API_KEY": "sk-1"}, ()),
        ("openai/gpt-4o-mini", {"api_key": "sk-1"}, {}, ()),
        ("openai/llama", {"api_base": "http://127.0.0.1:8080/v1"}, {}, ()),  # a local server may need no key
        ("openai/llama", {}, {"OPENAI_API_BASE": "http://127.0.0.1:8080/v1"}, ()),
        ("hosted_vllm/meta-llama/Llama-3.1-8B-Instruct", {}, {}, ()),
        ("ollama/llama3.1", {}, {}, ()),  # litellm names OLLAMA_API_BASE, which defaults to localhost
        ("vertex_ai/gemini-pro", {}, {}, ()),  # credentials from gcloud, not one variable
        ("bedrock/anthropic.claude-v2", {}, {}, ()),
        ("local/smollm2", {}, {}, ()),
    ],
)
def test_what_missing_means_per_provider(model: str, given: dict, environ: dict, missing: tuple) -> None:
    assert missing_credential(model, environ=environ, **given) == missing


def test_other_providers_are_looked_up_as_litellm_does(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    assert missing_credential("anthropic/claude-3-5-sonnet", environ={}) == ("ANTHROPIC_API_KEY",)
    assert missing_credential("groq/llama3-8b", environ={}) == ("GROQ_API_KEY",)
    assert missing_credential("anthropic/claude-3-5-sonnet", environ={"ANTHROPIC_API_KEY": "k"}) == ()
    assert missing_credential("nosuchprovider/model", environ={}) == ()  # its call says it is unknown


async def test_the_client_raises_before_any_attempt_and_never_retries() -> None:
    client = ModelClient(environ={}, retries=5)
    usage = Usage()
    with pytest.raises(MissingCredential) as caught:
        await client.complete("openai/gpt-4o-mini", [{"role": "user", "content": "hi"}], usage=usage)
    assert caught.value.variables == ("OPENAI_API_KEY",) and "OPENAI_API_KEY" in str(caught.value)
    assert isinstance(caught.value, ConfigError) and usage.calls == 0 and usage.failed_calls == 0
    with pytest.raises(MissingCredential):
        await client.raw("openai/gpt-4o-mini", {"messages": []})


async def test_a_given_backend_or_key_needs_no_variable() -> None:
    fake = FakeBackend()
    reply = await ModelClient(backend=fake, environ={}).complete(
        "openai/gpt-4o-mini", [{"role": "user", "content": "hi"}]
    )
    assert reply.text is not None and fake.calls
    keyed = ModelClient(api_key="sk-given", environ={}, backend=None)
    keyed.require_credentials("openai/gpt-4o-mini")  # nothing raised: the key was given


async def test_the_library_says_so_before_the_request_starts() -> None:
    client = ModelClient(environ={"OPENAI_API_KEY": "sk-1"})
    sp = SelfParaphraser(model="openai/gpt-4o-mini", judge_model="hosted_vllm/judge", client=client)
    sp.client = ModelClient(environ={})
    with pytest.raises(MissingCredential, match="OPENAI_API_KEY"):
        await sp.aanswer("What is the capital of France?")


def test_the_cli_exits_2_naming_the_variable_and_logs_nothing_before() -> None:
    result = CliRunner().invoke(app, ["ask", "Capital of France?", "--model", "openai/gpt-4o-mini"], env=OPENAI_ENV)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert lines[0].startswith("error: openai/gpt-4o-mini needs an API key") and "set OPENAI_API_KEY" in lines[0]
    assert len(lines) == 1  # no warning or log line before it


def test_the_cli_without_verbose_writes_warnings_as_notes(capsys: pytest.CaptureFixture[str]) -> None:
    import logging

    from selfpara.cli.common import setup_logging

    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        setup_logging(verbose=False)
        logging.getLogger("selfpara.pipeline.paraphrase.lines").warning("paraphrase call failed: %s", "boom")
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    assert capsys.readouterr().err == "warning: paraphrase call failed: boom\n"  # no time, level or logger name


def test_the_proxy_answers_502_for_its_own_missing_key() -> None:
    from selfpara.server.errors import from_selfpara

    err = from_selfpara(MissingCredential("openai/gpt-4o-mini", ("OPENAI_API_KEY",)), request_id="r1")
    assert err.status == 502 and err.code == "upstream_auth_failed" and "no key for its upstream" in err.message


async def test_the_bench_replays_saved_calls_without_a_key_and_stops_at_the_first_new_one(tmp_path) -> None:
    from evaluation.cache import caching_client, open_cache

    cache = open_cache(tmp_path / "calls.sqlite")
    asked = [{"role": "user", "content": "Capital of France?"}]
    saved, _ = caching_client(ModelClient(backend=FakeBackend(), environ={}), cache)
    first = await saved.complete("openai/gpt-4o-mini", asked)  # made once, with a model that needs no key
    keyless, backend = caching_client(ModelClient(environ={}), cache)
    assert (await keyless.complete("openai/gpt-4o-mini", asked)).text == first.text and backend.hits == 1
    with pytest.raises(MissingCredential, match="OPENAI_API_KEY"):
        await keyless.complete("openai/gpt-4o-mini", [{"role": "user", "content": "Capital of Spain?"}])
    assert backend.calls == 0
