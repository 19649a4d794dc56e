"""The lean OpenAI-API backend (selfpara.models.http_backend) through ModelClient, against a real
fake OpenAI-compatible server on loopback (tests/fake_upstream.py): answers, retries,
error statuses, timeouts, key safety, session cleanup, and how `transport` is chosen."""

from __future__ import annotations

import asyncio
import gc
import logging
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

from selfpara.errors import ConfigError, UpstreamError, UpstreamTimeout
from selfpara.models.client import ModelClient
from selfpara.models.http_backend import HttpBackend
from selfpara.models.litellm_backend import LiteLLMBackend
from selfpara.paraphraser import SelfParaphraser
from selfpara.result import Usage
from tests.fake_upstream import FakeUpstream, ThreadedServer

KEY = "sk-upstream-secret-0123456789abcdef"
HI = [{"role": "user", "content": "What is the capital of France?"}]


@pytest.fixture(scope="module")
def upstream() -> Iterator[tuple[FakeUpstream, str]]:
    fake = FakeUpstream()
    server = ThreadedServer(fake, lifespan="off").start()
    yield fake, f"{server.base}/v1"
    server.stop()


@pytest.fixture()
def fake(upstream: tuple[FakeUpstream, str]) -> FakeUpstream:
    upstream[0].reset()
    return upstream[0]


@pytest.fixture()
def base(upstream: tuple[FakeUpstream, str]) -> str:
    return upstream[1]


def client_for(base: str, **kw: Any) -> ModelClient:
    options: dict[str, Any] = {
        "api_base": base,
        "api_key": KEY,
        "retries": 2,
        "backoff_s": 0.001,
        "timeout_s": 3.0,
        "environ": {},
        **kw,
    }
    return ModelClient(**options)


def call(client: ModelClient, usage: Usage | None = None, model: str = "openai/fake") -> Any:
    async def go() -> Any:
        try:
            return await client.complete(model, HI, usage=usage, max_tokens=16)
        finally:
            await client.aclose()

    return asyncio.run(go())


def test_plain_call(fake: FakeUpstream, base: str) -> None:
    client = client_for(base)
    assert isinstance(client.backend_for("openai/fake"), HttpBackend)
    usage = Usage()
    out = call(client, usage)
    assert out.text == "Paris" and out.finish_reason == "stop" and out.cost == 0.0
    assert usage.calls == 1 and usage.prompt_tokens > 0 and usage.completion_tokens == 1
    (seen,) = fake.calls_of("answer")
    assert seen.authorization == f"Bearer {KEY}"
    assert seen.body["model"] == "fake" and seen.body["max_tokens"] == 16
    assert not {"api_base", "api_key", "timeout"} & set(seen.body)


@pytest.mark.parametrize("transport", ["http", "litellm"])
def test_both_transports_read_one_body_alike(fake: FakeUpstream, base: str, transport: str) -> None:
    """The litellm backend reads its response through the http transport's reader: the same text, token
    counts, finish reason and mean log-probability come out of one upstream body."""
    client = client_for(base, transport=transport)

    async def go() -> Any:
        try:
            return await client.complete("openai/fake", HI, max_tokens=16, logprobs=True)
        finally:
            await client.aclose()

    out = asyncio.run(go())
    assert out.text == "Paris" and out.finish_reason == "stop"
    assert out.prompt_tokens > 0 and out.completion_tokens == 1
    assert out.logprob == pytest.approx(-0.5) and out.token_logprobs and out.token_logprobs[0]["logprob"] == -0.5


@pytest.mark.parametrize("status", [429, 500])
def test_transient_statuses_are_retried(fake: FakeUpstream, base: str, status: int) -> None:
    fake.fail(status, times=2)
    usage = Usage()
    assert call(client_for(base), usage).text == "Paris"
    assert usage.calls == 3 and usage.failed_calls == 0
    assert [c.outcome for c in fake.calls_of("answer")] == [str(status), str(status), "ok"]


def test_rate_limit_after_retries_keeps_its_status_and_no_key(fake: FakeUpstream, base: str) -> None:
    fake.fail(429, times=None, message=f"slow down, {KEY}")
    with pytest.raises(UpstreamError) as info:
        call(client_for(base, retries=1))
    assert info.value.status == 429 and info.value.retryable
    assert KEY not in str(info.value) and len(fake.calls_of("answer")) == 2


def test_malformed_body_is_a_502(fake: FakeUpstream, base: str) -> None:
    fake.malformed(times=None)
    with pytest.raises(UpstreamError) as info:
        call(client_for(base, retries=1))
    assert info.value.status == 502 and "malformed" in str(info.value)
    assert len(fake.calls_of("answer")) == 2  # retried once


def test_timeout_is_a_504(fake: FakeUpstream, base: str) -> None:
    fake.hold()  # never answers: only the timeout ends the call
    with pytest.raises(UpstreamTimeout) as info:
        call(client_for(base, retries=0, timeout_s=0.3))
    assert info.value.status == 504


def test_bad_key_is_not_retried(fake: FakeUpstream, base: str) -> None:
    fake.fail(401, times=None, message=f"invalid key {KEY}")
    with pytest.raises(UpstreamError) as info:
        call(client_for(base, retries=3))
    assert info.value.status == 401 and not info.value.retryable
    assert KEY not in str(info.value) and len(fake.calls_of("answer")) == 1


def test_unknown_model_is_a_404(fake: FakeUpstream, base: str) -> None:
    fake.fail(404, times=None, message="no such model")
    with pytest.raises(UpstreamError) as info:
        call(client_for(base, retries=3))
    assert info.value.status == 404 and len(fake.calls_of("answer")) == 1


def test_unreachable_upstream_is_named_and_not_retried() -> None:
    """Issue 46: nothing answered, so the URL and cause are the message (the proxy shows clients a generic
    reason: tests/test_connect_errors.py), and retrying it as a server error only made the user wait."""
    client = client_for("http://127.0.0.1:9/v1", retries=1)
    with pytest.raises(UpstreamError) as info:
        call(client)
    assert info.value.status == 502 and not info.value.retryable
    assert str(info.value) == "openai/fake: cannot connect to http://127.0.0.1:9/v1 (connection refused)"


def test_sessions_close_with_their_loop(fake: FakeUpstream, base: str, caplog: pytest.LogCaptureFixture) -> None:
    """The sync API runs a loop per call: each loop's session must close with it, unasked."""
    client = client_for(base)
    gc.collect()  # what earlier tests left behind is theirs

    async def once(c: ModelClient) -> str:  # the client as an argument: `del client` below must drop the last reference
        return (await c.complete("openai/fake", HI)).text

    with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.ERROR, logger="asyncio"):
        warnings.simplefilter("always")
        assert [asyncio.run(once(client)) for _ in range(3)] == ["Paris"] * 3
        paraphraser = SelfParaphraser(
            model="openai/fake", api_base=base, api_key=KEY, k=2, paraphrase_check="off", equivalence="exact", retries=0
        )
        assert paraphraser.answer("What is the capital of France?").answer == "Paris"
        del client, paraphraser
        gc.collect()
    # aiohttp's complaints: "Unclosed client session", "Unclosed connector"
    unclosed = [str(w.message) for w in caught if "Unclosed c" in str(w.message)]
    unclosed += [r.getMessage() for r in caplog.records if "Unclosed c" in r.getMessage()]
    assert unclosed == []


def test_pipeline_uses_the_http_backend_by_default(base: str) -> None:
    paraphraser = SelfParaphraser(model="openai/fake", api_base=base, k=2)
    assert isinstance(paraphraser.client.backend_for("openai/fake"), HttpBackend)
    forced = SelfParaphraser(model="openai/fake", api_base=base, k=2, transport="litellm")
    assert isinstance(forced.client.backend_for("openai/fake"), LiteLLMBackend)


# ---- choosing the transport ----------------------------------------------------------------------


def test_auto_picks_http_only_when_a_base_url_is_known() -> None:
    assert isinstance(ModelClient(api_base="http://h/v1", environ={}).backend_for("openai/x"), HttpBackend)
    assert isinstance(ModelClient(api_base="http://h/v1", environ={}).backend_for("hosted_vllm/x"), HttpBackend)
    assert isinstance(ModelClient(environ={}).backend_for("openai/x"), LiteLLMBackend)
    env = {"OPENAI_BASE_URL": "http://env/v1"}
    assert isinstance(ModelClient(environ=env).backend_for("openai/x"), HttpBackend)
    assert isinstance(ModelClient(environ=env).backend_for("hosted_vllm/x"), LiteLLMBackend)
    assert isinstance(ModelClient(api_base="http://h/v1", environ={}).backend_for("anthropic/x"), LiteLLMBackend)
    # the base URL belongs to one provider: another provider's model does not get it
    scoped = ModelClient(api_base="http://h/v1", provider="openai", environ={})
    assert isinstance(scoped.backend_for("hosted_vllm/x"), LiteLLMBackend)


def test_transport_can_be_forced() -> None:
    assert isinstance(ModelClient(api_base="http://h/v1", transport="litellm").backend_for("openai/x"), LiteLLMBackend)
    forced = ModelClient(transport="http", environ={})
    assert isinstance(forced.backend_for("anthropic/x"), LiteLLMBackend)  # e.g. a judge of another provider
    with pytest.raises(ConfigError, match="base URL"):
        forced.backend_for("openai/x")
    with pytest.raises(ValueError, match="transport"):
        ModelClient(transport="carrier-pigeon")  # type: ignore[arg-type]
