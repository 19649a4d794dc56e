"""Shared fixtures: a fake-model client and a paraphraser on it."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from selfpara.llm import ModelClient  # noqa: E402
from selfpara.testing import FakeBackend  # noqa: E402


@pytest.fixture
def fake() -> FakeBackend:
    return FakeBackend()


@pytest.fixture
def client(fake: FakeBackend) -> ModelClient:
    return ModelClient(backend=fake, retries=2, backoff_s=0.001, timeout_s=5)
