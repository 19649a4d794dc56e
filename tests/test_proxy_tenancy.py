"""The proxy among many users (issue 34's probes, replayed against the real proxy, the fake upstream
and a real redis-server on loopback): no tenant is served another's cached answers, no client
learns from a response whether someone asked the question before, no client makes the proxy call
an address the operator did not list (Redis, the proxy itself, loopback, link-local) or spend the
operator's key on a model the operator did not list."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from selfpara.server import ServerSettings
from selfpara.server.upstreams import ClientBase, parse_client_bases
from tests.fake_upstream import FakeUpstream, serve_fake
from tests.helpers.proxy import (  # fake, reset_fake: the module's fake upstream, reset before each test
    AUTH,
    PROXY_KEY,
    UPSTREAM_KEY,
    assert_openai_error,
    chat,
    fake,
    metric,
    post,
    reset_fake,
    settings_for,
    start,
)

FIXTURES = (fake, reset_fake)
OTHER_KEY = "sk-another-tenant-9876543210fedcba"


@pytest.fixture(scope="module")
def second_upstream() -> Iterator[FakeUpstream]:
    yield from serve_fake()


@pytest.fixture()
def other(second_upstream: FakeUpstream) -> FakeUpstream:
    """A second upstream, answering Berlin: the one a client may be allowed to name (reset for each test)."""
    second_upstream.reset(answer="Berlin")
    return second_upstream


def port_of(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/")[0])


def cached(fake: FakeUpstream, cache: str, key: str = UPSTREAM_KEY, **server: Any) -> ServerSettings:
    return settings_for(fake, {"cache": cache, "api_key": key}, **server)


# ---- 3. the shared cache and tenants ---------------------------------------------------------------------


def test_proxies_with_other_upstream_keys_share_no_cached_answer(fake: FakeUpstream, redis_url: str) -> None:
    with (
        start(cached(fake, redis_url)) as one,
        start(cached(fake, redis_url, key=OTHER_KEY)) as other_tenant,
        start(cached(fake, redis_url)) as replica,
    ):
        assert post(one, chat()).status_code == 200
        made = len(fake.calls)
        assert post(other_tenant, chat()).status_code == 200
        assert len(fake.calls) == 2 * made  # every call made again, with its own key
        assert {c.authorization for c in fake.calls[made:]} == {f"Bearer {OTHER_KEY}"}
        assert post(replica, chat()).status_code == 200
        assert len(fake.calls) == 2 * made  # a replica of the first tenant: answered from Redis
        assert (
            metric(replica, "selfpara_cache_hits_total") == made
            and metric(other_tenant, "selfpara_cache_hits_total") == 0
        )


def test_no_key_or_fingerprint_of_it_reaches_redis(fake: FakeUpstream, redis_url: str) -> None:
    import hashlib

    import redis

    with start(cached(fake, redis_url)) as proxy:
        assert post(proxy, chat()).status_code == 200
    client = redis.Redis.from_url(redis_url)
    try:
        dump = b"".join(k + (client.get(k) or b"") for k in client.scan_iter("*"))
    finally:
        client.close()
    assert dump and UPSTREAM_KEY.encode() not in dump
    assert hashlib.sha256(UPSTREAM_KEY.encode()).hexdigest().encode() not in dump


def test_clients_cannot_tell_a_cached_answer_the_operator_can(
    fake: FakeUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    with start(cached(fake, "memory")) as proxy:
        with caplog.at_level("INFO", logger="selfpara.server"):
            first = post(proxy, chat())
            again = post(proxy, chat())  # every call answered from the cache
            warmer = post(proxy, chat(temperature=0.7))  # the seeded paraphrase call is shared
        for r in (first, again, warmer):
            assert r.status_code == 200
            assert not any(h.startswith("x-selfpara-cache") for h in r.headers)
            assert {"cache_hits", "cache_errors"}.isdisjoint(r.json()["selfpara"]["usage"])
        assert again.headers["x-selfpara-calls"] == first.headers["x-selfpara-calls"]
        assert again.json()["usage"] == first.json()["usage"]
        assert again.json()["selfpara"]["usage"] == first.json()["selfpara"]["usage"]
        made = int(first.headers["x-selfpara-calls"])
        assert metric(proxy, "selfpara_cache_hits_total") >= made + 1  # the operator sees the hits
        assert f"cache_hits={made}" in caplog.text


OPERATOR_SERIES = (
    "selfpara_cache_hits",
    "selfpara_cache_errors",
    "selfpara_upstream_calls",
    "selfpara_upstream_errors",
)


def test_a_clients_metrics_say_nothing_of_what_others_asked(fake: FakeUpstream) -> None:
    """The probe (issue 45, item 6): selfpara_cache_hits_total rose by 6 for a question asked earlier by
    someone else and by 0 for a new one (and the upstream calls by 0 and 6), read with the proxy key
    every client holds."""
    with start(cached(fake, "memory")) as proxy:
        post(proxy, chat())  # someone asks
        client_view = httpx.get(f"{proxy.base}/metrics", headers=AUTH, timeout=10)
        assert client_view.status_code == 200 and "selfpara_requests_total" in client_view.text
        assert not any(name in client_view.text for name in OPERATOR_SERIES)
        before = metric(proxy, "selfpara_cache_hits_total")
        post(proxy, chat())  # the same question again: answered from the cache
        assert metric(proxy, "selfpara_cache_hits_total") > before  # the operator's key still sees it
        assert metric(proxy, "selfpara_upstream_calls_total", kind="answer") > 0
        assert metric(proxy, "selfpara_cache_hits_total", key=PROXY_KEY) == 0  # absent for the proxy key
    with pytest.raises(ValueError, match="must differ from the proxy key"):
        settings_for(fake, metrics_key=PROXY_KEY)


# ---- 4. models a client may name ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["judge_model", "paraphrase_model"])
def test_a_client_cannot_spend_the_key_on_another_model_of_the_provider(fake: FakeUpstream, name: str) -> None:
    with start(settings_for(fake)) as proxy:
        error = assert_openai_error(post(proxy, chat(selfpara={name: "openai/o1-pro"})), 400)
        assert error["param"] == f"selfpara.{name}"
        assert fake.calls == []
        assert post(proxy, chat(selfpara={name: "openai/fake"})).status_code == 200  # the upstream itself
    with start(settings_for(fake, allowed_helper_models=["openai/o1-pro"])) as proxy:
        assert post(proxy, chat(selfpara={name: "openai/o1-pro"})).status_code == 200  # listed by the operator
        assert any(c.body.get("model") == "o1-pro" for c in fake.calls)


def test_the_servers_own_judge_and_paraphrase_models_may_be_named(fake: FakeUpstream) -> None:
    settings = settings_for(fake, {"judge_model": "openai/fake-judge"})
    assert settings.helper_model("openai/fake-judge") == "openai/fake-judge"
    assert settings.helper_model("fake") == "openai/fake"
    assert settings.helper_model("openai/gpt-4o") is None and settings.helper_model("local/smollm2") is None


@pytest.mark.parametrize("alias", ["fake", "selfpara/fake", "selfpara/openai/fake"])
def test_the_upstreams_aliases_as_helper_models_reach_the_upstream(fake: FakeUpstream, alias: str) -> None:
    """The probe (issue 45, item 9): `fake` and `selfpara/fake` passed the allow-list, every check call then
    failed "unknown model", and the answer was a silent 200 flagged no_paraphrases."""
    with start(settings_for(fake)) as proxy:
        options = {"judge_model": alias, "paraphrase_model": alias, "paraphrase_check": "llm"}
        r = post(proxy, chat(selfpara=options))
        assert r.status_code == 200, r.text
        report = r.json()["selfpara"]
        assert report["k_kept"] == 3 and "no_paraphrases" not in report["flags"]
        assert not [x for x in report["rejected"] if x["reason"] == "check_failed"]
        assert fake.calls_of("judge") and {c.body["model"] for c in fake.calls} == {"fake"}


# ---- 2. the upstream a client may name ---------------------------------------------------------------------


def test_no_client_upstream_without_an_operator_list(fake: FakeUpstream, other: FakeUpstream) -> None:
    with start(settings_for(fake)) as proxy:
        r = post(proxy, chat(selfpara={"api_base": other.url}))  # type: ignore[attr-defined]
        assert assert_openai_error(r, 400)["param"] == "selfpara.api_base"
    assert other.calls == []


def test_a_listed_upstream_is_reached_and_nothing_else(fake: FakeUpstream, other: FakeUpstream) -> None:
    listed = f"127.0.0.1:{port_of(other.url)}"  # type: ignore[attr-defined]
    with socket.socket() as trap, start(settings_for(fake, client_api_bases=[listed])) as proxy:
        trap.bind(("127.0.0.1", 0))
        trap.listen()
        trap.setblocking(False)
        r = post(proxy, chat(selfpara={"api_base": other.url, "api_key": "client-own-key"}))  # type: ignore[attr-defined]
        assert r.status_code == 200 and r.json()["choices"][0]["message"]["content"] == "Berlin"
        for base in (
            f"http://127.0.0.1:{trap.getsockname()[1]}/v1",  # another port of a listed host (say, Redis)
            f"http://127.0.0.1:{proxy.port}/v1",  # the proxy itself
            f"http://localhost:{port_of(other.url)}/v1",  # type: ignore[attr-defined]  # a name not listed
            "http://169.254.169.254/latest",  # a cloud's metadata service
        ):
            error = assert_openai_error(post(proxy, chat(selfpara={"api_base": base})), 400)
            assert error["param"] == "selfpara.api_base", base
        with pytest.raises(BlockingIOError):
            trap.accept()  # nothing connected to the unlisted port
    assert fake.calls == []


def test_a_wildcard_list_still_refuses_loopback_link_local_and_the_proxy(
    fake: FakeUpstream, other: FakeUpstream
) -> None:
    with start(settings_for(fake, client_api_bases=["*"])) as proxy:
        for base in (
            other.url,  # type: ignore[attr-defined]  # loopback
            f"http://localhost:{proxy.port}/v1",  # the proxy itself, by name
            "http://[::1]:8000/v1",
            "http://169.254.169.254/v1",
            "http://[fe80::1]:8000/v1",
            "http://0.0.0.0:8000/v1",
        ):
            error = assert_openai_error(post(proxy, chat(selfpara={"api_base": base})), 400)
            assert error["param"] == "selfpara.api_base", base
    assert other.calls == [] and fake.calls == []


def test_the_proxy_pointed_at_itself_makes_no_calls(fake: FakeUpstream) -> None:
    """The probe: the proxy's own address with the proxy key turned one request into 144 upstream calls."""
    with start(settings_for(fake, client_api_bases=["*"])) as proxy:
        body = chat(selfpara={"api_base": f"http://127.0.0.1:{proxy.port}/v1", "api_key": "proxy-key-for-tests"})
        assert_openai_error(post(proxy, body), 400)
        assert metric(proxy, "selfpara_requests_total", endpoint="chat/completions", status="200") == 0
    assert fake.calls == []


@pytest.mark.parametrize(
    "entry, base, allowed",
    [
        ("gpu-a:8001", "http://gpu-a:8001/v1", True),
        ("gpu-a:8001", "http://GPU-A:8001/v1", True),
        ("gpu-a:8001", "http://gpu-a:8002/v1", False),
        ("gpu-a", "https://gpu-a/v1", True),
        ("gpu-a", "http://gpu-a:6379/v1", True),
        ("*.internal:8000", "http://vllm.internal:8000/v1", True),
        ("*.internal:8000", "http://internal:8000/v1", False),
        ("*.internal:8000", "http://vllm.internal.evil.com:8000/v1", False),
        ("*", "http://anything.example:1/v1", True),
    ],
)
def test_list_entries_match_hosts_and_ports(entry: str, base: str, allowed: bool) -> None:
    assert (parse_client_bases([entry])[0].match(base) is not None) is allowed


@pytest.mark.parametrize("entry", ["", "http://gpu:1", "gpu:port", "gpu:99999", "a b", "*.:1"])
def test_malformed_list_entries_are_refused_at_startup(entry: str) -> None:
    with pytest.raises(ValueError):
        parse_client_bases([entry])


def test_list_entries_say_whether_they_name_the_host() -> None:
    assert parse_client_bases(["127.0.0.1:9"]) == [ClientBase(host="127.0.0.1", port=9, wildcard=False)]
    assert parse_client_bases(["*.x:9"])[0].wildcard


def test_the_completions_route_still_refuses_a_client_upstream(fake: FakeUpstream, other: FakeUpstream) -> None:
    with start(settings_for(fake, client_api_bases=["*"])) as proxy:
        body = {"model": "openai/fake", "prompt": "Hello", "selfpara": {"api_base": other.url}}  # type: ignore[attr-defined]
        r = httpx.post(f"{proxy.base}/v1/completions", json=body, headers=AUTH, timeout=10)
        assert assert_openai_error(r, 400)["param"] == "selfpara"


def test_serve_takes_the_list_from_flags_and_refuses_a_malformed_entry() -> None:
    from typer.testing import CliRunner

    from selfpara.cli import app

    base = ["serve", "--model", "openai/m", "--api-base", "http://up:1/v1", "--check"]
    env = {"SELFPARA_PROXY_KEY": None, "SELFPARA_CONFIG": None}
    ok = CliRunner().invoke(app, [*base, "--client-api-base", "gpu-a:8001", "--client-api-base", "*.lan"], env=env)
    assert ok.exit_code == 0 and json.loads(ok.stdout)["client_api_bases"] == ["gpu-a:8001", "*.lan"]
    bad = CliRunner().invoke(app, [*base, "--client-api-base", "http://gpu-a:8001"], env=env)
    assert bad.exit_code != 0 and "HOST[:PORT]" in bad.output
