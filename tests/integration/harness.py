"""What the integration tests share. They drive the real proxy with real evaluation harnesses
(inspect-ai, lm-eval, LangChain): `selfpara serve`, a subprocess on a loopback port, in front of the fake upstream.

They are marked `integration` and skip (with the reason) when a harness is not installed:

    pip install -e ".[test,integrations]"
    pytest -m integration
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fake_upstream import FakeUpstream

REPO = Path(__file__).resolve().parents[2]
PROXY_KEY = "sk-proxy-integration-0123456789"
MODEL = "llama3.2"  # the name the harnesses ask for; the proxy serves openai/llama3.2 under it
QUESTIONS = ["What is the capital of France?", "Which city is the capital of France?", "Name the French capital."]
TARGET = "Paris"


def needs(module: str, package: str) -> None:
    """Skip the calling test module when the harness `module` is not installed (call at import)."""
    pytest.importorskip(module, reason=f"{package} is not installed (pip install -e '.[integrations]')")


@dataclass
class Proxy:
    base: str  # http://127.0.0.1:PORT/v1
    key: str
    log: Path
    fake: FakeUpstream

    def request_lines(self, since: int = 0) -> list[str]:
        """The proxy's per-request log lines, from line `since` of its log on."""
        lines = self.log.read_text(encoding="utf-8", errors="replace").splitlines()[since:]
        return [line for line in lines if "request_id=" in line and " status=" in line]

    def log_length(self) -> int:
        return len(self.log.read_text(encoding="utf-8", errors="replace").splitlines())


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def harness_env(**extra: str) -> dict[str, str]:
    """The environment of a harness subprocess: offline, this checkout first on the path."""
    env = dict(os.environ)
    env.update(
        {
            "HF_HUB_OFFLINE": "1",
            "HF_DATASETS_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "INSPECT_DISPLAY": "plain",
            "NO_COLOR": "1",
            "PYTHONPATH": os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        }
    )
    env.update(extra)
    return env


def wrapped_with_k(lines: list[str], k: int) -> list[str]:
    """The log lines of successful wrapped requests that ran with `k` paraphrases."""
    return [line for line in lines if " status=200 " in line and " mode=wrapped " in line and f" k={k} " in line]
