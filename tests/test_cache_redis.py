"""The Redis call cache against a real redis-server (started by the `redis_server` fixture on a free port)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from selfpara import SelfParaphraser
from selfpara.config import build_config
from selfpara.models.cache import CallCache, open_call_cache
from selfpara.models.cache.redis_store import KEY_PREFIX, RedisStore
from selfpara.models.client import ModelClient
from selfpara.paraphraser import client_from_config
from selfpara.result import Completion
from selfpara.testing import FakeBackend

Q = "What is the capital of France?"
SECRET = "sk-secret-upstream-0123456789"


def paraphraser(fake: FakeBackend, url: str, **settings: Any) -> SelfParaphraser:
    cfg = build_config(
        model="openai/fake",
        api_key=SECRET,
        k=3,
        paraphrase_check="off",
        equivalence="exact",
        cache=url,
        **settings,
    )
    return SelfParaphraser(cfg, client=client_from_config(cfg, backend=fake))


def redis_contents(url: str) -> dict[bytes, bytes]:
    import redis

    client = redis.Redis.from_url(url)
    try:
        return {key: client.get(key) for key in client.scan_iter("*")}
    finally:
        client.close()


async def test_two_processes_worth_of_clients_share_one_redis(redis_url: str) -> None:
    # Two paraphrasers with their own clients and connections stand for two proxy replicas.
    one, two = FakeBackend(), FakeBackend()
    first = await paraphraser(one, redis_url).aanswer(Q)
    second = await paraphraser(two, redis_url).aanswer(Q)
    assert len(one.calls) == first.usage.calls > 0
    assert len(two.calls) == 0 and second.usage.cache_hits == first.usage.calls
    assert second.answer == first.answer


async def test_redis_holds_hashes_and_answers_but_no_key_and_entries_expire(redis_url: str) -> None:
    fake = FakeBackend()
    await paraphraser(fake, redis_url, cache_ttl_s=600).aanswer(Q)
    contents = redis_contents(redis_url)
    assert len(contents) == len(fake.calls)
    for key, value in contents.items():
        assert key.startswith(KEY_PREFIX.encode()) and len(key) == len(KEY_PREFIX) + 64
        assert SECRET.encode() not in key and SECRET.encode() not in value
        assert b"Authorization" not in value and b"api_key" not in value
    import redis

    client = redis.Redis.from_url(redis_url)
    try:
        ttls = [client.pttl(key) for key in contents]
    finally:
        client.close()
    assert all(0 < ttl <= 600_000 for ttl in ttls)


def test_the_blocking_api_reuses_redis_across_its_event_loops(redis_url: str) -> None:
    fake = FakeBackend()
    sp = paraphraser(fake, redis_url)
    first = sp.answer(Q)  # asyncio.run: a new event loop per call, each with its own connection
    second = sp.answer(Q)
    assert second.usage.calls == 0 and second.usage.cache_hits == first.usage.calls


@pytest.mark.extra("redis")
async def test_a_redis_that_is_down_answers_without_the_cache(caplog: pytest.LogCaptureFixture) -> None:
    from tests.redis_server import free_port

    url = f"redis://:hunter2pw@127.0.0.1:{free_port()}/0"  # nothing listens there
    fake = FakeBackend()
    sp = paraphraser(fake, url)
    with caplog.at_level(logging.WARNING, logger="selfpara.models.cache"):
        result = await sp.aanswer(Q)
    assert result.answer == "Paris" and result.usage.calls == len(fake.calls)
    assert "cache_unavailable" in result.flags and result.usage.cache_errors == result.usage.calls
    cache = sp.client.cache
    assert cache is not None and not cache.available
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "unavailable" in logged and "hunter2pw" not in logged and "***" in logged


async def test_redis_coming_back_is_used_again(redis_server: Any) -> None:
    from tests.redis_server import RedisServer

    with RedisServer() as server:
        cache = CallCache(RedisStore(server.url), retry_after_s=0.0)
        fake = FakeBackend()
        cfg = build_config(model="openai/fake", k=2, paraphrase_check="off", equivalence="exact")
        sp = SelfParaphraser(cfg, client=ModelClient(backend=fake, retries=0, cache=cache))
        await sp.aanswer(Q)
        server.stop()
        down = await sp.aanswer(Q)
        assert "cache_unavailable" in down.flags and not cache.available
        server.start()  # the same port again
        await sp.aanswer(Q)
        back = await sp.aanswer(Q)
        assert cache.available and back.usage.calls == 0 and "cache_unavailable" not in back.flags
        await sp.client.aclose()


def test_a_redis_url_is_checked_when_the_cache_opens() -> None:
    pytest.importorskip("redis")
    cache = open_call_cache("redis://:pw@127.0.0.1:6399/3", ttl_s=5)
    assert cache is not None and cache.name == "redis://:***@127.0.0.1:6399/3"


async def test_closing_the_client_closes_this_loops_connection(redis_url: str) -> None:
    store = RedisStore(redis_url)
    await store.put("k", "v")
    assert await store.get("k") == "v"
    await store.aclose()
    assert await store.get("k") == "v"  # a later call opens a new connection
    await store.aclose()
    await asyncio.sleep(0)


async def test_more_lookups_at_once_than_redis_pys_default_pool_holds(redis_url: str) -> None:
    """redis-py 8's default pool raised "Too many connections" above 100 at once and the cache
    switched itself off; the blocking pool makes lookups beyond it wait for a connection."""
    cache = open_call_cache(redis_url)  # the library's default pool: 64 connections
    assert cache is not None
    value = Completion(text="Paris").model_dump_json()
    await asyncio.gather(*(cache.store.put(f"k{i}", value) for i in range(50)))
    found = await asyncio.gather(*(cache.get(f"k{i % 60}") for i in range(600)))
    assert all(reachable for _, reachable in found)
    assert sum(result is not None for result, _ in found) == 500  # k50..k59 were never stored
    assert cache.available and cache.stats.errors == 0 and cache.state() == ("ok", None)
    await cache.aclose()
    small = RedisStore(redis_url, max_connections=4)
    assert await asyncio.gather(*(small.get(f"k{i}") for i in range(200))) == [value] * 50 + [None] * 150
    await small.aclose()


async def test_a_saturated_pool_is_a_busy_store_not_an_outage(redis_url: str) -> None:
    import redis

    cache = CallCache(RedisStore(redis_url, max_connections=1, pool_timeout_s=0.05))
    admin = redis.Redis.from_url(redis_url)
    try:
        await cache.get("warm")  # the pool's one connection, open
        admin.execute_command("CLIENT", "PAUSE", "400", "ALL")  # every command waits 0.4 s
        results = await asyncio.gather(*(cache.get(f"k{i}") for i in range(3)))
    finally:
        admin.close()
    assert any(not reachable for _, reachable in results)  # waited 0.05 s for the busy connection: skipped
    assert cache.available and cache.stats.busy >= 1
    state, why = cache.state()
    assert state == "degraded" and why is not None and "1 connections stayed busy" in why
    await cache.aclose()


async def test_an_undecodable_value_is_a_miss_for_that_entry_not_an_outage(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The probe of issue 34: one value that is not UTF-8 turned the shared cache off for everyone
    for 30 s, again at every read of it (its UnicodeDecodeError taken for "Redis down")."""
    import redis

    fake = FakeBackend()
    first = await paraphraser(fake, redis_url).aanswer(Q)
    raw = redis.Redis.from_url(redis_url)
    try:
        keys = list(raw.scan_iter(KEY_PREFIX + "*"))
        bad = keys[0]
        raw.set(bad, b"\xff\xfe not text")
        with caplog.at_level(logging.WARNING, logger="selfpara"):
            second = await paraphraser(FakeBackend(), redis_url).aanswer(Q)
            third = await paraphraser(FakeBackend(), redis_url).aanswer(Q)
        assert "cache_unavailable" not in second.flags and second.usage.cache_errors == 0
        assert second.usage.cache_hits == first.usage.calls - 1 and second.usage.calls == 1  # the one entry missed
        assert third.usage.cache_hits == first.usage.calls and third.usage.calls == 0  # and was stored again
        assert "unavailable" not in caplog.text
        assert raw.get(bad) != b"\xff\xfe not text"  # the damaged value was dropped, then replaced
    finally:
        raw.close()


async def test_the_store_drops_an_undecodable_value(redis_url: str) -> None:
    import redis

    store = RedisStore(redis_url)
    raw = redis.Redis.from_url(redis_url)
    try:
        raw.set(KEY_PREFIX + "k", b"\xc3\x28")
        assert await store.get("k") is None
        assert raw.get(KEY_PREFIX + "k") is None
    finally:
        raw.close()
        await store.aclose()


async def test_a_value_of_the_wrong_type_is_a_miss_for_that_key_not_an_outage(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The probe of issue 45: a list under one key made every request `cache_unavailable` for 30 s (and
    /ready unavailable): Redis's WRONGTYPE answer was taken for Redis being down."""
    import redis

    first = await paraphraser(FakeBackend(), redis_url).aanswer(Q)
    raw = redis.Redis.from_url(redis_url)
    try:
        bad = list(raw.scan_iter(KEY_PREFIX + "*"))[0]
        raw.delete(bad)
        raw.rpush(bad, "not", "a", "string")
        cached = paraphraser(FakeBackend(), redis_url)
        with caplog.at_level(logging.WARNING, logger="selfpara"):
            second = await cached.aanswer(Q)
        assert "cache_unavailable" not in second.flags and second.usage.cache_errors == 0
        assert second.usage.cache_hits == first.usage.calls - 1 and second.usage.calls == 1  # that key missed
        assert cached.client.cache is not None and cached.client.cache.state()[0] == "ok"
        assert raw.type(bad) == b"string"  # and was stored again over the list
        assert "unavailable" not in caplog.text
    finally:
        raw.close()
