"""The paraphrase call on the real embedded engine (SmolLM2): structure, not words."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest

from selfpara.config import build_config
from selfpara.models.client import ModelClient
from selfpara.paraphraser import paraphrase_request
from selfpara.pipeline.paraphrase import parse_paraphrases
from selfpara.result import Usage

PROBLEM = "Mia buys 3 apples for $2 each. Leo buys 4 pears for $5 each. How many dollars do Mia and Leo spend together?"


@pytest.mark.model
async def test_the_paraphrase_call_returns_parseable_candidates() -> None:
    cfg = build_config(model="local/smollm2", k=2)
    for question in ("What is the capital of France?", PROBLEM):
        model, messages, params = paraphrase_request(question, cfg)
        params["max_tokens"] = min(params["max_tokens"], 96)  # two lines are enough to read the shape
        reply = await ModelClient(timeout_s=600).complete(model, messages, usage=Usage(), kind="paraphrase", **params)
        candidates = parse_paraphrases(reply.text)
        assert candidates, reply.text
        assert all(c.strip() and "\n" not in c and not c.startswith(("1.", "-", "<question>")) for c in candidates)
