"""Scale-out, end to end with real servers on loopback: the proxy over two deployments of
one model (two fake upstreams, one answering every call with a 500) through the pool, its
deployments reached over the http transport, through litellm, or one each way, and its
Prometheus /metrics read back with prometheus_client's own parser. No network, no key, no GPU."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from selfpara.config import build_config
from selfpara.server import ServerSettings, create_app
from tests.fake_upstream import FakeUpstream, ThreadedServer

PROXY_KEY = "proxy-key-for-scaleout-tests"
METRICS_KEY = "metrics-key-for-scaleout-tests"
GOOD_KEY = "sk-good-deployment-0123456789"
BAD_KEY = "sk-bad-deployment-9876543210"
Q = "What is the capital of France?"


@pytest.fixture(scope="module")
def upstreams() -> Iterator[tuple[FakeUpstream, FakeUpstream]]:
    good, bad = FakeUpstream(), FakeUpstream()
    servers = [ThreadedServer(f, lifespan="off").start() for f in (good, bad)]
    good.url, bad.url = (f"{s.base}/v1" for s in servers)  # type: ignore[attr-defined]
    yield good, bad
    for s in servers:
        s.stop()


@pytest.fixture(autouse=True)
def _reset(upstreams: tuple[FakeUpstream, FakeUpstream]) -> None:
    good, bad = upstreams
    good.reset()
    bad.reset()
    bad.fail(500, times=None, message="deployment b is broken")


def router_file(
    tmp_path: Path,
    upstreams: tuple[FakeUpstream, FakeUpstream],
    *,
    via_litellm: FakeUpstream | None = None,
    **router_settings: Any,
) -> str:
    """Both fakes as deployments of `fake`, the broken one first; `via_litellm`'s with a
    litellm_params key the http transport does not read, so that litellm reaches it."""
    good, bad = upstreams
    config = {
        "model_list": [
            {
                "model_name": "fake",
                "litellm_params": {
                    "model": "openai/fake",
                    "api_base": f.url,  # type: ignore[attr-defined]
                    "api_key": key,
                    **({"max_retries": 0} if f is via_litellm else {}),
                },
            }
            for f, key in ((bad, BAD_KEY), (good, GOOD_KEY))
        ],
        "router_settings": router_settings,
    }
    path = tmp_path / "router.json"
    path.write_text(json.dumps(config))
    return str(path)


def proxy_settings(router_config: str | None, transport: str = "auto", **server: Any) -> ServerSettings:
    # Every request asks the same question and the tests count upstream calls: no call cache.
    upstream = build_config(
        model="openai/fake",
        k=3,
        timeout_s=5.0,
        retries=2,
        transport=transport,
        equivalence="exact,numeric",
        cache="off",
        renamings=False,  # the tests count the model's paraphrase calls too
    )
    return ServerSettings(
        upstream=upstream,
        router_config=router_config,
        api_key=PROXY_KEY,
        metrics_key=METRICS_KEY,
        backoff_s=0.01,
        keepalive_s=0.2,
        **server,
    )


def headers(key: str | None = PROXY_KEY) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"} if key else {}


async def ask_many(base: str, n: int, concurrency: int, **extra: Any) -> list[httpx.Response]:
    body = {"model": "openai/fake", "messages": [{"role": "user", "content": Q}], **extra}
    limit = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=base, headers=headers(), timeout=30) as http:

        async def one() -> httpx.Response:
            async with limit:
                return await http.post("/v1/chat/completions", json=body)

        return list(await asyncio.gather(*(one() for _ in range(n))))


def metrics_of(base: str) -> dict[str, list[Any]]:
    """The proxy's /metrics, all of it (the operator's key), parsed by prometheus_client: samples by family name."""
    response = httpx.get(f"{base}/metrics", headers=headers(METRICS_KEY), timeout=10)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    return {family.name: family.samples for family in text_string_to_metric_families(response.text)}


def value(samples: list[Any], name: str, **labels: str) -> float:
    return sum(s.value for s in samples if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()))


@pytest.mark.parametrize("transport", ["auto", "litellm"])
def test_a_failing_deployment_costs_no_client_an_error_and_is_cooled_down(
    tmp_path: Path,
    upstreams: tuple[FakeUpstream, FakeUpstream],
    transport: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    good, bad = upstreams
    config = router_file(tmp_path, upstreams, allowed_fails=1, cooldown_time=30)
    with caplog.at_level(logging.INFO), ThreadedServer(create_app(proxy_settings(config, transport))) as server:
        responses = asyncio.run(ask_many(server.base, 30, 4))
        passthrough = asyncio.run(ask_many(server.base, 6, 3, selfpara={"enabled": False}))
        metrics = metrics_of(server.base)
    assert [r.status_code for r in responses + passthrough] == [200] * 36
    assert {r.json()["choices"][0]["message"]["content"] for r in responses} == {"Paris"}
    good_calls = len(good.calls)
    # 36 requests made ~190 upstream calls; without a cooldown the broken one would get about half.
    # After its first failures it gets almost none; calls already in flight then (more on a loaded
    # machine) may still reach it, hence a share rather than a count.
    assert good_calls >= 36 * 4 and len(bad.calls) <= good_calls // 10, (good_calls, len(bad.calls))
    # each deployment got its own key
    assert {c.authorization for c in good.calls} == {f"Bearer {GOOD_KEY}"}
    assert {c.authorization for c in bad.calls} <= {f"Bearer {BAD_KEY}"}
    assert GOOD_KEY not in caplog.text and BAD_KEY not in caplog.text

    requests = metrics["selfpara_requests"]
    assert value(requests, "selfpara_requests_total", endpoint="chat/completions", status="200") == 36
    calls = metrics["selfpara_upstream_calls"]
    assert value(calls, "selfpara_upstream_calls_total", kind="paraphrase") >= 30
    assert value(calls, "selfpara_upstream_calls_total", kind="answer") >= 30 * 4
    assert value(calls, "selfpara_upstream_calls_total", kind="passthrough") == 6 + value(
        metrics["selfpara_upstream_errors"], "selfpara_upstream_errors_total", kind="passthrough"
    )
    stages = metrics["selfpara_stage_duration_seconds"]
    for stage in ("paraphrase", "filter", "answer", "cluster", "total"):
        assert value(stages, "selfpara_stage_duration_seconds_count", stage=stage) == 30
    assert value(metrics["selfpara_wrapped_answers"], "selfpara_wrapped_answers_total") == 30
    deployments = metrics["selfpara_deployment_cooldowns"]  # the pool reports each deployment, however reached
    assert value(deployments, "selfpara_deployment_cooldowns_total", deployment=bad.url) >= 1  # type: ignore[attr-defined]
    assert value(deployments, "selfpara_deployment_cooldowns_total", deployment=good.url) == 0  # type: ignore[attr-defined]
    calls_of_good = value(metrics["selfpara_deployment_calls"], "selfpara_deployment_calls_total", deployment=good.url)  # type: ignore[attr-defined]
    assert calls_of_good == good_calls


@pytest.mark.parametrize("broken_via", ["http", "litellm"])
def test_a_group_of_http_and_litellm_deployments_balances_and_fails_over_both_ways(
    tmp_path: Path, upstreams: tuple[FakeUpstream, FakeUpstream], broken_via: str
) -> None:
    good, bad = upstreams
    bad.reset()  # both answer at first
    via_litellm = bad if broken_via == "litellm" else good
    config = router_file(tmp_path, upstreams, via_litellm=via_litellm, allowed_fails=0, cooldown_time=30)
    settings = proxy_settings(config)
    assert settings.resolved_transport() == "http+litellm"
    with ThreadedServer(create_app(settings)) as server:
        both = asyncio.run(ask_many(server.base, 10, 2))
        assert len(good.calls) >= 10 and len(bad.calls) >= 10  # simple-shuffle: each takes about half
        bad.fail(500, times=None, message="deployment b is broken")
        before = len(bad.calls)
        after = asyncio.run(ask_many(server.base, 10, 2, selfpara={"k": 2}))
        passthrough = asyncio.run(ask_many(server.base, 6, 2, selfpara={"enabled": False}))
        metrics = metrics_of(server.base)
    assert [r.status_code for r in both + after + passthrough] == [200] * 26
    assert {r.json()["choices"][0]["message"]["content"] for r in both + after} == {"Paris"}
    # its first failure cooled it down for the rest: about half the calls would have gone there
    assert 1 <= len(bad.calls) - before <= 6, len(bad.calls) - before  # at most the calls in flight then
    assert {c.authorization for c in good.calls} == {f"Bearer {GOOD_KEY}"}  # each its own key, either way
    assert {c.authorization for c in bad.calls} == {f"Bearer {BAD_KEY}"}
    cooldowns = metrics["selfpara_deployment_cooldowns"]
    assert value(cooldowns, "selfpara_deployment_cooldowns_total", deployment=bad.url) == 1  # type: ignore[attr-defined]


def test_streams_fail_over_too(tmp_path: Path, upstreams: tuple[FakeUpstream, FakeUpstream]) -> None:
    good, bad = upstreams
    config = router_file(tmp_path, upstreams, routing_strategy="least-busy", allowed_fails=0, cooldown_time=30)
    body = {"model": "fake", "messages": [{"role": "user", "content": Q}], "stream": True}
    with ThreadedServer(create_app(proxy_settings(config))) as server:
        for passthrough in (False, True):
            before = len(bad.calls)
            chunk = {**body, "selfpara": {"enabled": not passthrough}}
            with httpx.stream("POST", f"{server.base}/v1/chat/completions", json=chunk, headers=headers()) as r:
                text = r.read().decode()
            said = "".join(  # the deltas joined: a piece that could begin a key waits for the next event
                (c.get("delta") or {}).get("content") or ""
                for line in text.splitlines()
                if line.startswith("data: {")
                for c in json.loads(line[len("data: ") :]).get("choices") or []
            )
            assert r.status_code == 200 and "Paris" in said and 'data: {"error"' not in text
    # least-busy took it first and its failure cooled it down: the passthrough stream went elsewhere.
    # (A wrapped request answers paraphrases while the paraphrase reply still streams, so more than
    # one of its calls may reach the broken deployment before its first failure comes back.)
    assert bad.calls and len(bad.calls) == before


def test_ready_while_one_deployment_answers(tmp_path: Path, upstreams: tuple[FakeUpstream, FakeUpstream]) -> None:
    good, _ = upstreams
    entries = [
        {"model_name": "fake", "litellm_params": {"model": "openai/fake", "api_base": base}}
        for base in ("http://127.0.0.1:9/v1", good.url)  # type: ignore[attr-defined]
    ]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(entries))
    with ThreadedServer(create_app(proxy_settings(str(path), ready_cache_s=0))) as server:
        r = httpx.get(f"{server.base}/ready", headers=headers())
        assert r.status_code == 200, r.text
        checks = r.json()["checks"]
        assert checks["deployment http://127.0.0.1:9/v1"].startswith("unreachable")
        assert checks[f"deployment {good.url}"] == "reachable"  # type: ignore[attr-defined]
    path.write_text(json.dumps(entries[:1]))
    with ThreadedServer(create_app(proxy_settings(str(path), ready_cache_s=0))) as server:
        assert httpx.get(f"{server.base}/ready", headers=headers()).status_code == 503


def test_metrics_need_the_key_count_per_app_and_can_be_off(upstreams: tuple[FakeUpstream, FakeUpstream]) -> None:
    good, _ = upstreams
    upstream = build_config(model="openai/fake", api_base=good.url, k=2, equivalence="exact")  # type: ignore[attr-defined]
    one = ThreadedServer(
        create_app(ServerSettings(upstream=upstream, api_key=PROXY_KEY, metrics_key=METRICS_KEY))
    ).start()
    two = ThreadedServer(create_app(ServerSettings(upstream=upstream))).start()
    off = ThreadedServer(create_app(ServerSettings(upstream=upstream, metrics=False))).start()
    try:
        assert httpx.get(f"{one.base}/metrics").status_code == 401
        asyncio.run(ask_many(one.base, 3, 3))
        asyncio.run(ask_many(one.base, 1, 1))  # the same question again: answered from the call cache
        good.reset()
        adaptive = {"k": 3, "adaptive": True, "equivalence": "exact", "paraphrase_check": "off"}
        body = {"model": "fake", "messages": [{"role": "user", "content": "Capital of Italy?"}], "selfpara": adaptive}
        url = f"{one.base}/v1/chat/completions"
        r = good.whole_reply_first(lambda: httpx.post(url, json=body, headers=headers(), timeout=30))
        saved = r.json()["selfpara"]["calls_saved"]
        assert saved >= 1
        r = httpx.post(f"{one.base}/v1/chat/completions", json={"model": "nope", "messages": []}, headers=headers())
        assert r.status_code in (400, 404)
        ones = metrics_of(one.base)
        ok = value(ones["selfpara_requests"], "selfpara_requests_total", endpoint="chat/completions", status="200")
        assert ok == 5
        assert value(ones["selfpara_calls_saved"], "selfpara_calls_saved_total") == saved
        # a remote model: doubt first is off (auto), so every wrapped answer was voted
        assert value(ones["selfpara_votes"], "selfpara_votes_total", outcome="voted") == 5
        hits = value(ones["selfpara_cache_hits"], "selfpara_cache_hits_total")
        assert hits >= 3  # at least the last request's paraphrase and answer calls (k=2)
        upstream = value(ones["selfpara_upstream_calls"], "selfpara_upstream_calls_total")
        assert upstream >= len(good.calls) and upstream + hits >= 4 * 4
        assert value(ones["selfpara_requests"], "selfpara_requests_total", endpoint="metrics", status="401") == 1
        assert value(ones["selfpara_errors"], "selfpara_errors_total") == 1
        twos = httpx.get(f"{two.base}/metrics")  # no proxy key: open, and its own counts
        assert twos.status_code == 200
        families = {f.name: f.samples for f in text_string_to_metric_families(twos.text)}
        assert value(families["selfpara_requests"], "selfpara_requests_total", endpoint="chat/completions") == 0
        assert httpx.get(f"{off.base}/metrics").status_code == 404
    finally:
        for s in (one, two, off):
            s.stop()
