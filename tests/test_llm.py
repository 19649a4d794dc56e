import asyncio

import pytest

from selfpara.errors import UpstreamError, UpstreamTimeout
from selfpara.models.client import ModelClient
from selfpara.paraphraser import client_from_config
from selfpara.result import Completion, Usage
from selfpara.testing import FakeBackend
from selfpara.util.redaction import redact


def flaky(failures):
    state = {"n": 0}

    def respond(model, messages, params):
        state["n"] += 1
        if state["n"] <= failures:
            return UpstreamError("rate limited", status=429, retryable=True)
        return Completion(text="ok", prompt_tokens=3, completion_tokens=1, cost=0.5)

    return respond


async def test_retries_transient_failures_then_answers():
    client = ModelClient(backend=FakeBackend(flaky(2)), retries=3, backoff_s=0.001)
    usage = Usage()
    out = await client.complete("openai/x", [{"role": "user", "content": "hi"}], usage=usage)
    assert out.text == "ok" and usage.calls == 3 and usage.failed_calls == 0
    assert (usage.prompt_tokens, usage.completion_tokens, usage.cost) == (3, 1, 0.5)


async def test_gives_up_after_retries():
    client = ModelClient(backend=FakeBackend(flaky(10)), retries=2, backoff_s=0.001)
    usage = Usage()
    with pytest.raises(UpstreamError) as info:
        await client.complete("openai/x", [{"role": "user", "content": "hi"}], usage=usage)
    assert info.value.status == 429 and usage.calls == 3 and usage.failed_calls == 1


async def test_permanent_errors_are_not_retried():
    fake = FakeBackend(lambda m, msgs, p: UpstreamError("bad key", status=401))
    client = ModelClient(backend=fake, retries=5, backoff_s=0.001)
    with pytest.raises(UpstreamError):
        await client.complete("openai/x", [{"role": "user", "content": "hi"}])
    assert len(fake.calls) == 1


async def test_timeout_is_retried_then_reported():
    class Silent(FakeBackend):
        """Never answers: only the timeout ends a call."""

        async def complete(self, model, messages, params):
            self.calls.append((model, messages, params))
            await asyncio.Event().wait()

    silent = Silent()
    client = ModelClient(backend=silent, timeout_s=0.05, retries=1, backoff_s=0.001)
    with pytest.raises(UpstreamTimeout) as info:
        await client.complete("openai/x", [{"role": "user", "content": "hi"}])
    assert info.value.status == 504 and len(silent.calls) == 2  # the first try and its retry


async def test_concurrency_limit():
    live, peak = 0, 0

    class Counting(FakeBackend):
        async def complete(self, model, messages, params):
            nonlocal live, peak
            live += 1
            peak = max(peak, live)
            await asyncio.sleep(0)  # let the other callers in: all that the limit lets through get here
            live -= 1
            return Completion(text="x")

    client = ModelClient(backend=Counting(), concurrency=3)
    await asyncio.gather(*(client.complete("m/x", [{"role": "user", "content": "q"}]) for _ in range(10)))
    assert peak == 3


async def test_unexpected_backend_exception_becomes_upstream_error():
    client = ModelClient(backend=FakeBackend(lambda m, msgs, p: KeyError("oops")), retries=0)
    with pytest.raises(UpstreamError, match="KeyError"):
        await client.complete("m/x", [{"role": "user", "content": "q"}])


def test_redact_removes_keys():
    assert "sk-secret123" not in redact("bad key sk-secret123 given", [])
    assert redact("token=abcdef123456", ["abcdef123456"]) == "token=***"


async def test_litellm_mock_response_through_real_backend():
    client = ModelClient(environ={"OPENAI_API_KEY": "sk-mock"})  # the key is checked before any call, mocked or not
    usage = Usage()
    out = await client.complete(
        "openai/gpt-4o-mini", [{"role": "user", "content": "hi"}], usage=usage, mock_response="Hello there"
    )
    assert out.text == "Hello there" and usage.calls == 1 and usage.total_tokens > 0


async def test_litellm_errors_are_classified_and_key_free():
    client = ModelClient(api_key="sk-verysecretkey", retries=0)
    with pytest.raises(UpstreamError) as info:
        await client.complete("nosuchprovider-model", [{"role": "user", "content": "hi"}])
    assert info.value.status == 404 and "verysecret" not in str(info.value)


async def test_unreachable_upstream_is_a_clear_error():
    client = ModelClient(
        api_base="http://127.0.0.1:9", api_key="sk-verysecretkey", retries=1, backoff_s=0.001, timeout_s=5
    )
    with pytest.raises(UpstreamError) as info:
        await client.complete("openai/x", [{"role": "user", "content": "hi"}])
    assert info.value.status in (502, 504) and "verysecret" not in str(info.value)


async def test_base_url_and_key_go_only_to_the_configured_provider():
    fake = FakeBackend(lambda m, msgs, p: "ok")
    client = ModelClient(backend=fake, api_base="http://vllm:8000/v1", api_key="sk-upstream", provider="openai")
    await client.complete("openai/llama", [{"role": "user", "content": "q"}])
    await client.complete("anthropic/claude", [{"role": "user", "content": "q"}])
    first, second = fake.calls[0][2], fake.calls[1][2]
    assert first["api_base"] == "http://vllm:8000/v1" and first["api_key"] == "sk-upstream"
    assert "api_base" not in second and "api_key" not in second


def test_client_from_config_reads_every_client_setting():
    from selfpara.config import build_config

    cfg = build_config(
        model="openai/m",
        api_base="http://up/v1",
        api_key="sk-secret123456",
        timeout_s=7,
        retries=1,
        concurrency=3,
        transport="litellm",
    )
    client = client_from_config(cfg)
    assert (client.api_base, client._api_key, client.timeout_s, client.retries, client.concurrency) == (
        "http://up/v1",
        "sk-secret123456",
        7,
        1,
        3,
    )
    assert client.provider == "openai" and client.transport == "litellm"
    shared = client_from_config(cfg, concurrency=64, provider=None)
    assert shared.concurrency == 64 and shared.provider is None and shared.retries == 1
    embedded = client_from_config(build_config())
    assert embedded.timeout_s == 600.0 and embedded.provider == "local"
