"""Fixtures of the integration tests: the fake upstream and `selfpara serve` in front of it
(see harness.py; run them with `pytest -m integration`)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.fake_upstream import FakeUpstream, serve_fake
from tests.helpers.waiting import wait_for_http

from .harness import MODEL, PROXY_KEY, REPO, Proxy, free_port, harness_env


@pytest.fixture(scope="session")
def fake() -> Iterator[FakeUpstream]:
    yield from serve_fake()


@pytest.fixture(scope="session")
def proxy(fake: FakeUpstream, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    """`selfpara serve` (the real command) with k=3 by default, in front of the fake upstream."""
    log = tmp_path_factory.mktemp("proxy") / "proxy.log"
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "selfpara",
        "serve",
        "--model",
        f"openai/{MODEL}",
        "--api-base",
        fake.url,
        "--port",
        str(port),
        "--k",
        "3",  # type: ignore[attr-defined]
        "--api-key-env",
        "SELFPARA_PROXY_KEY",
        "--verbose",
    ]
    env = harness_env(SELFPARA_PROXY_KEY=PROXY_KEY, OPENAI_API_KEY="sk-upstream-unused")
    with log.open("w") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=REPO)
    try:
        try:
            wait_for_http(f"http://127.0.0.1:{port}/health", process)
        except AssertionError as exc:
            raise RuntimeError(f"selfpara serve did not start ({exc}): {log.read_text()[-2000:]}") from None
        yield Proxy(f"http://127.0.0.1:{port}/v1", PROXY_KEY, log, fake)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
