"""`selfpara serve` as a process, as an operator runs it: `--log-format json` writes every line as a JSON
object (the start line too) with the request line's status and latency as keys of their own, and
Ctrl-C ends it with exit code 130 (docs/cli.md), not 0. The test waits on the server's own log lines,
never on the clock."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.fake_upstream import FakeUpstream

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def upstream() -> Iterator[FakeUpstream]:
    from tests.fake_upstream import serve_fake

    yield from serve_fake()


def serve_environment() -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("SELFPARA_", "OPENAI_"))}
    return {**environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def test_json_logs_and_ctrl_c(upstream: FakeUpstream) -> None:
    environ = serve_environment()
    command = [sys.executable, "-m", "selfpara", "serve", "--model", "openai/fake", "--api-base", upstream.url]
    command += ["--port", "0", "--k", "2", "--log-format", "json", "--cache", "off"]
    with subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=environ) as served:
        assert served.stderr is not None
        lines = []
        try:
            for line in served.stderr:  # until uvicorn says where it listens
                lines.append(line)
                if "Uvicorn running on" in line:
                    break
            port = re.search(r"http://127\.0\.0\.1:(\d+)", lines[-1])
            assert port, lines
            body = {"model": "openai/fake", "messages": [{"role": "user", "content": "Capital of France?"}]}
            reply = httpx.post(f"http://127.0.0.1:{port.group(1)}/v1/chat/completions", json=body, timeout=60)
            assert reply.status_code == 200, reply.text
            for line in served.stderr:  # until the request's own line
                lines.append(line)
                if '"status"' in line:
                    break
        finally:
            served.send_signal(signal.SIGINT)
        _, rest = served.communicate(timeout=60)
    assert served.returncode == 130, rest
    lines += rest.splitlines()
    records = [json.loads(line) for line in lines]  # every line, the start line included, is a JSON object
    assert records[0]["message"].startswith("selfpara proxy: http://127.0.0.1:0/v1 -> openai/fake")
    (request,) = [r for r in records if "status" in r]
    assert request["status"] == 200 and isinstance(request["latency_ms"], int) and request["model"] == "openai/fake"
    assert request["request_id"] and request["message"].startswith(f"request_id={request['request_id']} status=200")
    assert records[-1]["message"] == "interrupted"


def test_ctrl_c_with_text_logs_is_exit_130_too(upstream: FakeUpstream) -> None:
    environ = serve_environment()
    command = [sys.executable, "-m", "selfpara", "serve", "--model", "openai/fake", "--api-base", upstream.url]
    with subprocess.Popen([*command, "--port", "0"], stderr=subprocess.PIPE, text=True, env=environ) as served:
        assert served.stderr is not None
        try:
            for line in served.stderr:
                if "Uvicorn running on" in line:
                    break
        finally:
            served.send_signal(signal.SIGINT)
        _, rest = served.communicate(timeout=60)
    assert served.returncode == 130 and rest.strip().endswith("interrupted"), rest
