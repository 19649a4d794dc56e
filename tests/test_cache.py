"""The call cache across requests (selfpara.models.cache): what may be cached, keys, stores, the client's use."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from selfpara import SelfParaphraser
from selfpara.config import build_config
from selfpara.errors import ConfigError, UpstreamError
from selfpara.models.cache import CallCache, MemoryStore, cacheable, call_key, key_material, open_call_cache, tenant
from selfpara.models.cache.spec import masked, parse_cache
from selfpara.models.cache.sqlite_store import SQLiteStore
from selfpara.models.client import ModelClient
from selfpara.paraphraser import client_from_config
from selfpara.result import Completion, Usage
from selfpara.testing import FakeBackend
from tests.helpers.clock import FakeClock
from tests.helpers.stores import BrokenStore, BusyStore
from tests.helpers.waiting import settle

MSGS = [{"role": "user", "content": "What is the capital of France?"}]
Q = "What is the capital of France?"
SECRET = "sk-secret-upstream-0123456789"


def cached_client(fake: FakeBackend, cache: CallCache | None = None, **kw: Any) -> ModelClient:
    return ModelClient(
        backend=fake, retries=1, backoff_s=0.001, timeout_s=5, cache=cache or CallCache(MemoryStore()), **kw
    )


# ---- what may be cached, and keys ------------------------------------------------------------


def test_only_greedy_or_seeded_calls_are_cacheable() -> None:
    assert cacheable({"temperature": 0.0, "max_tokens": 5})
    assert cacheable({"temperature": 0})
    assert cacheable({"temperature": 0.7, "seed": 3})
    assert cacheable({"temperature": 1.2, "seed": 0})  # seed 0 is a seed
    assert not cacheable({"temperature": 0.7})
    assert not cacheable({"temperature": 0.7, "seed": None})


def test_keys_differ_in_everything_that_shapes_the_output() -> None:
    base = {"temperature": 0.7, "max_tokens": 32, "seed": 1}
    key = call_key("openai/m", MSGS, base)
    different = [
        call_key("openai/other", MSGS, base),
        call_key("openai/m", [{"role": "user", "content": "What is the capital of Peru?"}], base),
        call_key("openai/m", [{"role": "system", "content": "Be brief."}, *MSGS], base),
        call_key("openai/m", MSGS, {**base, "temperature": 0.8}),
        call_key("openai/m", MSGS, {**base, "seed": 2}),
        call_key("openai/m", MSGS, {**base, "max_tokens": 33}),
        call_key("openai/m", MSGS, {**base, "logprobs": True}),
        call_key("openai/m", MSGS, {**base, "api_base": "http://other:8000/v1"}),
        call_key("openai/m", MSGS, base, {"arm": "raw", "sample": 0}),
        call_key("openai/m", MSGS, base, {"arm": "raw", "sample": 1}),
        call_key("openai/m", MSGS, base, tenant=tenant("http://gpu:8000/v1", "sk-tenant-a-0123456789")),
        call_key("openai/m", MSGS, base, tenant=tenant("http://gpu:8000/v1", "sk-tenant-b-0123456789")),
        call_key("openai/m", MSGS, base, tenant=tenant("http://gpu-2:8000/v1", "sk-tenant-a-0123456789")),
        call_key("openai/m", MSGS, base, tenant=tenant("http://gpu:8000/v1", None)),
    ]
    assert len({key, *different}) == len(different) + 1


def test_the_tenant_is_a_keyed_fingerprint_never_the_key() -> None:
    import hashlib

    fingerprint = tenant("http://gpu:8000/v1", SECRET)
    material = json.dumps(key_material("openai/m", MSGS, {"temperature": 0.0}, tenant=fingerprint))
    assert SECRET not in material and hashlib.sha256(SECRET.encode()).hexdigest() not in material
    assert fingerprint == tenant("http://gpu:8000/v1", SECRET) != tenant("http://gpu:8000/v1", SECRET + "x")


def test_key_material_holds_no_credentials_and_ignores_how_the_call_is_made() -> None:
    params = {
        "temperature": 0.0,
        "max_tokens": 8,
        "api_key": SECRET,
        "timeout": 5,
        "headers": {"Authorization": f"Bearer {SECRET}"},
        "extra_headers": {"X-Api-Key": SECRET},
    }
    material = key_material("openai/m", MSGS, params)
    assert SECRET not in json.dumps(material)
    assert set(material["params"]) == {"temperature", "max_tokens"}
    plain = call_key("openai/m", MSGS, {"temperature": 0.0, "max_tokens": 8, "timeout": 60})
    assert call_key("openai/m", MSGS, params) == plain
    assert len(plain) == 64 and SECRET not in plain


# ---- the setting ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value, kind",
    [
        ("memory", "memory"),
        ("off", "off"),
        ("OFF", "off"),
        ("redis://localhost:6379/0", "redis"),
        ("rediss://:pw@cache.internal:6380/2", "redis"),
        ("unix:///run/redis.sock", "redis"),
        ("sqlite:///tmp/calls.sqlite", "sqlite"),
    ],
)
def test_cache_settings_that_name_a_store(value: str, kind: str) -> None:
    assert parse_cache(value).kind == kind
    assert build_config(cache=value).cache == value


@pytest.mark.parametrize(
    "value, says",
    [
        ("redis://:hunter2pw@host:notaport/0", "port"),
        ("redis://:hunter2pw@host:6379/zero", "database number"),
        ("redis://:hunter2pw@/0", "no host"),
        ("memcached://:hunter2pw@host:11211", "is not a cache"),
        ("sqlite://", "file path"),
        ("yes please", "is not a cache"),
    ],
)
def test_a_malformed_cache_setting_is_a_clear_config_error_without_the_password(value: str, says: str) -> None:
    with pytest.raises(ConfigError) as info:
        build_config(cache=value)
    assert says in str(info.value) and "hunter2pw" not in str(info.value)
    with pytest.raises(ConfigError):
        open_call_cache(value)


def test_public_settings_mask_the_cache_password() -> None:
    cfg = build_config(cache="redis://:hunter2pw@cache.internal:6379/0")
    assert cfg.public_dict()["cache"] == "redis://:***@cache.internal:6379/0"
    assert "hunter2pw" not in json.dumps(cfg.public_dict())
    assert masked("redis://user:pw@h:1/0") == "redis://user:***@h:1/0"


def test_a_redis_cache_without_the_redis_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "redis", None)  # as if not installed
    monkeypatch.setitem(sys.modules, "redis.asyncio", None)
    with pytest.raises(ConfigError, match=r"selfpara\[redis\]"):
        open_call_cache("redis://localhost:6379/0")


# ---- the memory store -------------------------------------------------------------------------


async def test_memory_store_is_bounded_and_drops_the_least_recently_used() -> None:
    store = MemoryStore(max_entries=2)
    await store.put("a", "1")
    await store.put("b", "2")
    assert await store.get("a") == "1"  # a is now the most recently used
    await store.put("c", "3")
    assert len(store) == 2 and await store.get("b") is None
    assert await store.get("a") == "1" and await store.get("c") == "3"


async def test_memory_store_entries_expire() -> None:
    clock = FakeClock()
    store = MemoryStore(ttl_s=60, clock=clock)
    await store.put("a", "1")
    clock.advance(59.9)
    assert await store.get("a") == "1"
    clock.advance(0.1)
    assert await store.get("a") is None and len(store) == 0


# ---- through ModelClient -------------------------------------------------------------------------


async def test_an_identical_greedy_call_is_answered_from_the_cache() -> None:
    fake = FakeBackend()
    client = cached_client(fake)
    first, second = Usage(), Usage()
    a = await client.complete("openai/m", MSGS, usage=first, max_tokens=16)
    b = await client.complete("openai/m", MSGS, usage=second, max_tokens=16)
    assert a == b and len(fake.calls) == 1
    assert (first.calls, first.cache_hits, first.prompt_tokens > 0) == (1, 0, True)
    assert (second.calls, second.cache_hits, second.prompt_tokens, second.cost) == (0, 1, 0, 0.0)
    await client.complete("openai/m", MSGS, usage=second, max_tokens=17)  # other params: a new call
    assert len(fake.calls) == 2
    assert client.cache is not None and client.cache.stats.hits == 1 and client.cache.stats.misses == 2


async def test_sampled_calls_are_cached_only_by_seed() -> None:
    fake = FakeBackend(lambda m, msgs, p: f"draw {p.get('seed')} {len(fake.calls)}")
    client = cached_client(fake)
    unseeded = [await client.complete("openai/m", MSGS, temperature=0.7) for _ in range(2)]
    assert len(fake.calls) == 2 and unseeded[0].text != unseeded[1].text  # fresh draws each time
    s1 = await client.complete("openai/m", MSGS, temperature=0.7, seed=1)
    s2 = await client.complete("openai/m", MSGS, temperature=0.7, seed=2)
    again = await client.complete("openai/m", MSGS, temperature=0.7, seed=1)
    assert len(fake.calls) == 4 and again == s1 and s1.text != s2.text


async def test_errors_are_never_cached() -> None:
    outcomes: list[Any] = [UpstreamError("bad request", status=400), "Paris"]
    fake = FakeBackend(lambda m, msgs, p: outcomes.pop(0))
    client = cached_client(fake)
    with pytest.raises(UpstreamError):
        await client.complete("openai/m", MSGS)
    usage = Usage()
    assert (await client.complete("openai/m", MSGS, usage=usage)).text == "Paris"
    assert len(fake.calls) == 2 and usage.calls == 1 and usage.cache_hits == 0


async def test_identical_calls_in_flight_at_once_make_one_upstream_call() -> None:
    fake = FakeBackend(delay_s=0.05)
    client = cached_client(fake)
    usages = [Usage() for _ in range(5)]
    results = await asyncio.gather(*(client.complete("openai/m", MSGS, usage=u) for u in usages))
    assert len(fake.calls) == 1 and len({r.text for r in results}) == 1
    assert sum(u.calls for u in usages) == 1 and sum(u.cache_hits for u in usages) == 4


class CountingStore(MemoryStore):
    """A MemoryStore that counts lookups (its `get` never suspends: a caller counted is past it)."""

    def __init__(self) -> None:
        super().__init__()
        self.gets = 0

    async def get(self, key: str) -> str | None:
        self.gets += 1
        return await super().get(key)


async def test_when_the_call_in_flight_fails_each_waiter_makes_its_own() -> None:
    outcomes: list[Any] = [UpstreamError("rejected", status=400), "Paris", "Paris"]
    release = asyncio.Event()

    async def held(model: str, messages: list, params: dict) -> Completion:
        fake.calls.append((model, messages, params))
        if len(fake.calls) == 1:
            await release.wait()  # the first call stays in flight until the second caller waits on it
        out = outcomes.pop(0)
        if isinstance(out, Exception):
            raise out
        return Completion(text=out)

    fake = FakeBackend()
    fake.complete = held  # type: ignore[method-assign]
    store = CountingStore()
    client = cached_client(fake, CallCache(store))
    first = asyncio.create_task(client.complete("openai/m", MSGS))
    await settle(lambda: len(fake.calls) == 1, "the first call reached the backend")
    second = asyncio.create_task(client.complete("openai/m", MSGS))
    # its lookup missed; with no suspension between, it now waits on the call in flight
    await settle(lambda: store.gets == 2, "the second caller looked the key up")
    assert len(fake.calls) == 1
    release.set()
    results = await asyncio.gather(first, second, return_exceptions=True)
    assert isinstance(results[0], UpstreamError) and isinstance(results[1], Completion)
    assert len(fake.calls) == 2


async def test_a_client_without_a_cache_calls_every_time() -> None:
    fake = FakeBackend()
    client = ModelClient(backend=fake, retries=0)
    for _ in range(2):
        await client.complete("openai/m", MSGS)
    assert len(fake.calls) == 2 and client.cache is None


def test_from_config_builds_the_configured_cache(tmp_path: Path) -> None:
    assert client_from_config(build_config(model="openai/m", cache="off")).cache is None
    memory = client_from_config(build_config(model="openai/m", cache_size=3)).cache
    assert memory is not None and isinstance(memory.store, MemoryStore) and memory.store.max_entries == 3
    path = tmp_path / "c.sqlite"
    sqlite = client_from_config(build_config(model="openai/m", cache=f"sqlite://{path}")).cache
    assert sqlite is not None and sqlite.name == f"sqlite:{path}"
    assert client_from_config(build_config(model="openai/m"), cache=None).cache is None


async def test_sqlite_store_entries_expire_and_rows_keep_sqlites_julian_days(tmp_path: Path) -> None:
    import sqlite3

    clock = FakeClock(now=1_700_000_000.0)  # seconds since the Unix epoch: 2023-11-14T22:13:20Z
    store = SQLiteStore(tmp_path / "c.sqlite", ttl_s=60, clock=clock)
    await store.put("a", "1")
    clock.advance(59.9)
    assert await store.get("a") == "1"
    clock.advance(0.1)
    assert await store.get("a") is None
    store.close()
    with sqlite3.connect(tmp_path / "c.sqlite") as db:  # files written by julianday('now') read alike
        created, written = db.execute("SELECT created, julianday('2023-11-14T22:13:20') FROM calls").fetchone()
    assert created == pytest.approx(written, abs=1e-9)


def test_a_sqlite_cache_outlives_the_process_that_wrote_it(tmp_path: Path) -> None:
    spec = f"sqlite://{tmp_path}/calls.sqlite"
    for expected_calls in (1, 0):
        fake = FakeBackend()
        client = client_from_config(build_config(model="openai/m", cache=spec), backend=fake)
        asyncio.run(client.complete("openai/m", MSGS))
        assert len(fake.calls) == expected_calls


# ---- through the pipeline ----------------------------------------------------------------------


def paraphraser(fake: FakeBackend, **settings: Any) -> SelfParaphraser:
    settings.setdefault("renamings", False)  # the paraphrase call is what these tests cache
    cfg = build_config(model="openai/fake", k=3, paraphrase_check="off", equivalence="exact", **settings)
    return SelfParaphraser(cfg, client=client_from_config(cfg, backend=fake))


async def test_a_repeated_request_makes_no_upstream_call_and_reports_its_hits() -> None:
    fake = FakeBackend()
    sp = paraphraser(fake)
    first = await sp.aanswer(Q)
    made = len(fake.calls)
    second = await sp.aanswer(Q)
    assert len(fake.calls) == made  # the paraphrase call is seeded, the answers greedy: all cached
    assert second.usage.calls == 0 and second.usage.cache_hits == first.usage.calls == made
    assert first.usage.cache_hits == 0
    assert second.answer == first.answer and [v.text for v in second.variants] == [v.text for v in first.variants]
    assert "cache_unavailable" not in second.flags


async def test_unseeded_paraphrasing_is_drawn_afresh_while_greedy_answers_are_reused() -> None:
    fake = FakeBackend()
    sp = paraphraser(fake, paraphrase_seed=None, paraphrase_temperature=0.7)
    await sp.aanswer(Q)
    made = len(fake.calls)
    second = await sp.aanswer(Q)
    assert len(fake.calls) == made + 1  # only the paraphrase call, at temperature 0.7 without a seed
    assert second.usage.calls == 1 and second.usage.cache_hits == made - 1


async def test_sampled_answers_are_not_reused_between_requests() -> None:
    fake = FakeBackend()
    sp = paraphraser(fake, temperature=0.7)
    await sp.aanswer(Q)
    made = len(fake.calls)
    second = await sp.aanswer(Q)
    assert second.usage.cache_hits == 1  # the seeded paraphrase call; every sampled answer is new
    assert len(fake.calls) == 2 * made - 1


# ---- a store that fails ---------------------------------------------------------------------------


async def test_a_failing_store_degrades_to_no_cache_with_one_warning_and_a_flag(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = FakeClock()
    store = BrokenStore()
    cache = CallCache(store, retry_after_s=30, clock=clock)
    fake = FakeBackend()
    cfg = build_config(model="openai/fake", k=2, paraphrase_check="off", equivalence="exact")
    sp = SelfParaphraser(cfg, client=ModelClient(backend=fake, retries=0, cache=cache))
    with caplog.at_level(logging.WARNING, logger="selfpara.models.cache"):
        first = await sp.aanswer(Q)
        second = await sp.aanswer(Q)
    assert first.answer == "Paris" and second.usage.calls == first.usage.calls  # nothing cached, nothing failed
    assert "cache_unavailable" in first.flags and first.usage.cache_errors == first.usage.calls
    assert not cache.available and cache.stats.errors == 1  # asked once, then left alone for retry_after_s
    warnings = [r for r in caplog.records if "unavailable" in r.getMessage()]
    assert len(warnings) == 1 and "connection refused" in warnings[0].getMessage()
    store.up = True
    clock.now += 31
    third = await sp.aanswer(Q)
    fourth = await sp.aanswer(Q)
    assert cache.available and "cache_unavailable" not in third.flags
    assert fourth.usage.calls == 0 and fourth.usage.cache_hits == third.usage.calls


# ---- bounds and degraded stores -----------------------------------------------------------


async def test_memory_store_is_bounded_by_bytes_too() -> None:
    store = MemoryStore(100, max_bytes=250)
    for i in range(4):
        await store.put(f"k{i}", "x" * 100)  # 100 bytes each: two fit
    assert len(store) == 2 and store.bytes == 200
    assert await store.get("k0") is None and await store.get("k3") == "x" * 100
    await store.put("k3", "y" * 10)  # replacing an entry frees its bytes
    assert store.bytes == 110
    await store.put("huge", "z" * 251)  # larger than the whole store: not kept, nothing dropped for it
    assert await store.get("huge") is None and len(store) == 2
    cache = open_call_cache("memory", max_bytes=4096)
    assert cache is not None and isinstance(cache.store, MemoryStore) and cache.store.max_bytes == 4096


async def test_a_busy_store_is_skipped_per_call_and_reported_as_degraded(caplog: pytest.LogCaptureFixture) -> None:
    clock = FakeClock()
    store = BusyStore()
    cache = CallCache(store, retry_after_s=30, clock=clock)
    fake = FakeBackend()
    client = cached_client(fake, cache)
    assert cache.state() == ("ok", None)
    with caplog.at_level(logging.WARNING, logger="selfpara.models.cache"):
        usage = Usage()
        await client.complete("openai/fake", MSGS, usage=usage)
        await client.complete("openai/fake", MSGS, usage=usage)
    assert usage.cache_errors == 2 and len(fake.calls) == 2  # answered, without the cache
    assert cache.available  # not switched off: the next call asks the store again
    state, why = cache.state()
    assert state == "degraded" and why is not None and "connections stayed busy" in why and "2 calls" in why
    assert len([r for r in caplog.records if "degraded" in r.getMessage()]) == 1  # one warning per period
    store.up = True
    await client.complete("openai/fake", MSGS)
    assert cache.stats.stored >= 1
    clock.now += 31
    assert cache.state() == ("ok", None)


def test_a_sqlite_cache_and_its_journal_files_are_private(tmp_path: Path) -> None:
    """The probe of issue 34: the cache file and its -wal/-shm were created world-readable (0644)."""
    import stat

    from selfpara.models.cache.sqlite_store import SQLiteStore

    path = tmp_path / "calls.sqlite"
    old = os.umask(0o022)
    try:
        store = SQLiteStore(path)
        store.put_now("k", '{"text": "Paris"}')
        files = [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]
        assert all(f.exists() for f in files)
        assert {f.name: stat.S_IMODE(f.stat().st_mode) for f in files} == {f.name: 0o600 for f in files}
        store.close()
        path.chmod(0o640)  # an existing file keeps the mode its owner gave it
        SQLiteStore(path).close()
        assert stat.S_IMODE(path.stat().st_mode) == 0o640
    finally:
        os.umask(old)
