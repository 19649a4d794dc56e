"""The proxy's call cache: per process by default, shared by replicas through one Redis, reported per request."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, cast

import httpx
import pytest
from typer.testing import CliRunner

from selfpara.cli import app as cli_app
from selfpara.config import build_config
from selfpara.server import ServerSettings, create_app
from tests.fake_upstream import FakeUpstream, ThreadedServer, serve_fake
from tests.helpers.proxy import METRICS_KEY

Q = "What is the capital of France?"
UPSTREAM_KEY = "sk-upstream-cache-test-0123456789"


@pytest.fixture(scope="module")
def upstream() -> Iterator[FakeUpstream]:
    yield from serve_fake()


@pytest.fixture(autouse=True)
def _reset(upstream: FakeUpstream) -> None:
    upstream.reset()


def settings(upstream: FakeUpstream, cache: str = "memory", **server: Any) -> ServerSettings:
    up = build_config(
        model="openai/fake", api_base=upstream.url, api_key=UPSTREAM_KEY, k=3, retries=0, timeout_s=5.0, cache=cache
    )
    return ServerSettings(upstream=up, backoff_s=0.01, metrics_key=METRICS_KEY, **server)


def ask(server: ThreadedServer, question: str = Q, **extra: Any) -> httpx.Response:
    body = {"model": "openai/fake", "messages": [{"role": "user", "content": question}], **extra}
    response = httpx.post(f"{server.base}/v1/chat/completions", json=body, timeout=30)
    assert response.status_code == 200, response.text
    return response


def hits_counted(server: ThreadedServer) -> float:
    """The proxy's selfpara_cache_hits_total (/metrics with the operator's key: these proxies have no proxy key)."""
    text = httpx.get(f"{server.base}/metrics", headers={"Authorization": f"Bearer {METRICS_KEY}"}, timeout=10).text
    return sum(float(line.split()[1]) for line in text.splitlines() if line.startswith("selfpara_cache_hits_total "))


def test_a_repeated_request_is_answered_without_upstream_calls(upstream: FakeUpstream) -> None:
    with ThreadedServer(create_app(settings(upstream))) as proxy:
        first = ask(proxy)
        made = len(upstream.calls)
        second = ask(proxy)
        hits = hits_counted(proxy)
    assert made > 0 and len(upstream.calls) == made
    assert hits == made  # the operator's count; the client sees the calls the answer took, cached or not
    assert second.headers["x-selfpara-calls"] == first.headers["x-selfpara-calls"] == str(made)
    assert second.json()["selfpara"]["usage"]["calls"] == made
    assert second.json()["choices"][0]["message"]["content"] == first.json()["choices"][0]["message"]["content"]


def test_two_replicas_on_one_redis_share_answers(upstream: FakeUpstream, redis_url: str) -> None:
    with (
        ThreadedServer(create_app(settings(upstream, redis_url))) as one,
        ThreadedServer(create_app(settings(upstream, redis_url))) as two,
    ):
        ask(one)
        made = len(upstream.calls)
        ask(two)
        after = len(upstream.calls)
        ready = httpx.get(f"{two.base}/ready", timeout=10).json()
        hits = hits_counted(two)
    assert made > 0 and after == made and hits == made  # hits on the other replica
    assert ready["checks"]["cache"] == f"{redis_url}: ok"


def test_with_redis_down_the_proxy_answers_and_flags_it(upstream: FakeUpstream) -> None:
    from tests.redis_server import free_port

    pytest.importorskip("redis")
    with ThreadedServer(create_app(settings(upstream, f"redis://127.0.0.1:{free_port()}/0"))) as proxy:
        response = ask(proxy)
        ready = httpx.get(f"{proxy.base}/ready", timeout=10)
    assert "cache_unavailable" in response.json()["selfpara"]["flags"]
    assert "cache_unavailable" in response.headers["x-selfpara-flags"]
    assert ready.status_code == 200 and "unavailable" in ready.json()["checks"]["cache"]


def test_answers_from_a_client_chosen_upstream_are_not_cached(upstream: FakeUpstream) -> None:
    listed = upstream.url.split("/")[2]  # type: ignore[attr-defined]  # 127.0.0.1:PORT
    with ThreadedServer(create_app(settings(upstream, client_api_bases=[listed]))) as proxy:
        for _ in range(2):
            ask(proxy, selfpara={"api_base": upstream.url, "api_key": "client-own-key"})
        client_chosen = len(upstream.calls)
        assert client_chosen > 0 and client_chosen % 2 == 0  # both requests went upstream in full
        ask(proxy)  # the server's own upstream: not served from the client's calls
        assert len(upstream.calls) > client_chosen


runner = CliRunner()
ENV = {"SELFPARA_MODEL": "openai/m", "SELFPARA_API_BASE": "http://up:1/v1", "SELFPARA_CONFIG": None, "SELFPARA_K": None}


NO_CACHE_VARS = {"SELFPARA_CALL_CACHE": None, "SELFPARA_CACHE": None}


def serve_check(env: dict[str, str | None], *args: str) -> dict[str, Any]:
    result = runner.invoke(cli_app, ["serve", "--check", *args], env={**ENV, **NO_CACHE_VARS, **env})
    assert result.exit_code == 0, result.output
    assert "hunter2pw" not in result.output
    return cast(dict[str, Any], json.loads(result.stdout)["upstream"])


def test_serve_takes_the_cache_from_selfpara_call_cache_and_never_shows_its_password() -> None:
    assert serve_check({"SELFPARA_CALL_CACHE": "redis://:hunter2pw@r:6379/1"})["cache"] == "redis://:***@r:6379/1"
    assert serve_check({})["cache"] == "memory"
    assert serve_check({"SELFPARA_CALL_CACHE": "off"}, "--cache", "memory")["cache"] == "memory"  # the flag wins


def test_serve_refuses_a_malformed_cache_url_at_startup() -> None:
    result = runner.invoke(cli_app, ["serve", "--check", "--cache", "redis://:hunter2pw@r:port/1"], env=ENV)
    assert result.exit_code == 2 and "'--cache'" in result.output  # a bad flag value: a usage error naming it
    assert "cache" in result.output and "port" in result.output and "hunter2pw" not in result.output


def test_a_loaded_proxy_keeps_its_redis_cache(upstream: FakeUpstream, redis_url: str) -> None:
    """Many requests at once through a small Redis pool: lookups wait for a connection instead of
    switching the cache off; the same load again makes no upstream call."""
    import asyncio

    questions = [f"What is the capital of country number {i}?" for i in range(60)]

    async def load(base: str) -> list[httpx.Response]:
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            return await asyncio.gather(
                *(
                    http.post(
                        "/v1/chat/completions",
                        json={"model": "openai/fake", "messages": [{"role": "user", "content": q}]},
                    )
                    for q in questions
                )
            )

    # the lookups wait for one of 4 connections, however loaded the machine (a minute, not 2 s): the
    # test is that they wait rather than switch the cache off, not how long a wait is allowed
    app = create_app(
        settings(upstream, redis_url, cache_max_connections=4, cache_pool_timeout_s=60.0, max_concurrent_requests=128)
    )
    with ThreadedServer(app) as proxy:
        first = asyncio.run(load(proxy.base))
        made = len(upstream.calls)
        second = asyncio.run(load(proxy.base))
        after = len(upstream.calls)
        ready = httpx.get(f"{proxy.base}/ready", timeout=10).json()  # (probes the upstream's /models)
        hits = hits_counted(proxy)
    assert all(r.status_code == 200 for r in first + second)
    flagged = [r for r in first + second if "cache_unavailable" in r.json()["selfpara"]["flags"]]
    assert flagged == [] and made >= len(questions)
    assert after == made and hits >= made  # the second load was answered from Redis alone
    assert ready["cache"]["state"] == "ok", ready


def test_ready_says_when_the_cache_is_degraded_and_why() -> None:
    from selfpara.models.cache import CallCache
    from selfpara.models.client import ModelClient
    from selfpara.testing import FakeBackend
    from tests.helpers.stores import BusyStore

    cache = CallCache(BusyStore())
    client = ModelClient(backend=FakeBackend(), retries=0, cache=cache)
    cfg = build_config(model="openai/fake", k=2, paraphrase_check="off", equivalence="exact")
    with ThreadedServer(create_app(ServerSettings(upstream=cfg, ready_cache_s=0), client=client)) as proxy:
        assert httpx.get(f"{proxy.base}/ready", timeout=10).json()["cache"]["state"] == "ok"
        ask(proxy)
        ready = httpx.get(f"{proxy.base}/ready", timeout=10)
    assert ready.status_code == 200  # never a reason to be unready
    body = ready.json()
    assert body["cache"]["state"] == "degraded" and "connections stayed busy" in body["cache"]["reason"]
    assert body["checks"]["cache"].startswith("busy: degraded (")
