"""Shared fixtures: a fake-model client and a paraphraser on it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from selfpara.models.client import ModelClient  # noqa: E402
from selfpara.testing import FakeBackend  # noqa: E402


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Skip a test whose extra is not installed, naming it: `@pytest.mark.extra("nli")`, and every
    `@pytest.mark.model` test (the real embedded model needs `local`) that names no extra of its own.
    So the suite passes on a smaller install (.ci/lowest: the base install and `bench`)."""
    from selfpara.util.extras import missing_modules

    for item in items:
        extras = [m.args[0] for m in item.iter_markers("extra")]
        if not extras and item.get_closest_marker("model") is not None:
            extras = ["local"]
        for extra in extras:
            missing = missing_modules(extra)
            if missing:
                item.add_marker(pytest.mark.skip(reason=f"needs the `{extra}` extra (missing: {', '.join(missing)})"))
                break


@pytest.fixture(autouse=True)
def _terminal_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rich wraps CLI output at the caller's terminal width; pin it so assertions on wording hold in any terminal."""
    monkeypatch.setenv("COLUMNS", "100")


@pytest.fixture
def fake() -> FakeBackend:
    return FakeBackend()


@pytest.fixture
def client(fake: FakeBackend) -> ModelClient:
    return ModelClient(backend=fake, retries=2, backoff_s=0.001, timeout_s=5)


@pytest.fixture(scope="session")
def redis_server() -> Iterator[Any]:
    """A real redis-server on a free loopback port, started for the session (skipped when not installed)."""
    from tests.redis_server import RedisServer, redis_binary

    if redis_binary() is None:
        pytest.skip("redis-server is not installed (Debian package redis-server; .ci/run installs it)")
    pytest.importorskip("redis", reason="the redis package (the `redis` extra) is not installed")
    with RedisServer() as server:
        yield server


@pytest.fixture
def redis_url(redis_server: Any) -> str:
    """The session's redis-server, emptied for this test."""
    import redis

    client = redis.Redis.from_url(redis_server.url)
    try:
        client.flushall()
    finally:
        client.close()
    return str(redis_server.url)
