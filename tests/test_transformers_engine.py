"""Tests of the transformers engine (selfpara.engines.transformers), kept for comparison.

The plain tests exercise grouping and the batching worker with a fake `_generate`; the
`model` tests load the real SmolLM2 GGUF on transformers, offline (slow: kept to two).
"""

from __future__ import annotations

import asyncio
import os
import threading

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before anything imports huggingface_hub
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest

from selfpara.engines.embedded import resolve
from selfpara.engines.request import GenRequest
from selfpara.engines.transformers import TransformersModel, cut_generation, group_requests
from selfpara.errors import UpstreamError
from selfpara.llm import ModelClient
from selfpara.result import Completion

USER = [{"role": "user", "content": "hi"}]


# ---------------------------------------------------------------- pure logic


def test_grouping_shares_generate_calls_only_when_decoding_matches() -> None:
    greedy = [GenRequest(USER, max_tokens=n) for n in (8, 32, 16)]
    hot = [GenRequest(USER, temperature=0.7), GenRequest(USER, temperature=0.7)]
    seeded = [GenRequest(USER, temperature=0.7, seed=1)]
    groups = group_requests([greedy[0], hot[0], greedy[1], seeded[0], hot[1], greedy[2]])
    assert groups == [greedy, hot, seeded]  # different max_tokens batch together
    # greedy ignores seed and top_p
    assert len(group_requests([GenRequest(USER, seed=1), GenRequest(USER, top_p=0.5)])) == 1


def test_grouping_caps_batch_size() -> None:
    reqs = [GenRequest(USER) for _ in range(37)]
    assert [len(g) for g in group_requests(reqs, max_batch=16)] == [16, 16, 5]


@pytest.mark.extra("hf")
def test_progress_bars_are_silenced_only_while_loading() -> None:
    import transformers.modeling_gguf_pytorch_utils as gguf_utils
    from transformers.utils import logging as hf_logging

    from selfpara.engines.transformers import _quiet_progress

    before, enabled = gguf_utils.tqdm, hf_logging.is_progress_bar_enabled()
    with _quiet_progress():
        assert gguf_utils.tqdm is not before and not hf_logging.is_progress_bar_enabled()
    assert gguf_utils.tqdm is before and hf_logging.is_progress_bar_enabled() == enabled


def test_cut_generation() -> None:
    assert cut_generation([5, 6, 2, 0, 0], {2}, 10) == ([5, 6], "stop")
    assert cut_generation([5, 6, 7, 8], {2}, 3) == ([5, 6, 7], "length")
    assert cut_generation([2, 0, 0], {2}, 3) == ([], "stop")  # empty generation stays empty
    assert cut_generation([5, 6], {2}, 8) == ([5, 6], "stop")


# ---------------------------------------------------------------- batching worker, fake model


class FakeBackend(TransformersModel):
    """TransformersModel whose generate echoes the last message; records each batch."""

    def __init__(self, fail: bool = False, **kw) -> None:
        super().__init__(resolve("local/smollm2"), **kw)
        self._model = object()  # counts as loaded
        self.fail = fail
        self.batches: list[list[str]] = []
        self.threads: set[str] = set()

    def _generate(self, group: list[GenRequest]) -> list[Completion]:
        self.threads.add(threading.current_thread().name)
        if self.fail:
            raise RuntimeError("boom " * 100)
        self.batches.append([str(r.messages[-1]["content"]) for r in group])
        self.stats.generate_calls += 1
        return [Completion(text=f"echo {r.messages[-1]['content']}", completion_tokens=1) for r in group]


async def test_concurrent_calls_share_one_batch() -> None:
    backend = FakeBackend()
    client = ModelClient(backend=backend)
    msgs = [[{"role": "user", "content": f"q{i}"}] for i in range(6)]
    results = await asyncio.gather(*(client.complete("local/smollm2", m) for m in msgs))
    assert [r.text for r in results] == [f"echo q{i}" for i in range(6)]
    assert backend.batches == [[f"q{i}" for i in range(6)]]
    assert backend.threads == {"selfpara-transformers"}  # never on the event loop's thread


async def test_mixed_temperatures_split_into_groups() -> None:
    backend = FakeBackend()
    calls = [
        backend.complete("local/smollm2", [{"role": "user", "content": f"q{i}"}], {"temperature": t})
        for i, t in enumerate([0, 0.7, 0, 0.7])
    ]
    results = await asyncio.gather(*calls)
    assert [r.text for r in results] == ["echo q0", "echo q1", "echo q2", "echo q3"]
    assert sorted(backend.batches) == [["q0", "q2"], ["q1", "q3"]]


def test_works_across_successive_event_loops() -> None:
    backend = FakeBackend()
    for i in range(3):
        result = asyncio.run(backend.complete("local/smollm2", [{"role": "user", "content": str(i)}], {}))
        assert result.text == f"echo {i}"


async def test_generate_failure_is_a_short_502() -> None:
    client = ModelClient(backend=FakeBackend(fail=True), retries=0)
    with pytest.raises(UpstreamError) as err:
        await client.complete("local/smollm2", USER)
    assert err.value.status == 502 and "RuntimeError" in str(err.value) and len(str(err.value)) < 300


# ---------------------------------------------------------------- the real model (offline)


@pytest.mark.model
@pytest.mark.extra("hf")  # the real SmolLM2 on the transformers engine
async def test_real_model_answers_concurrent_calls_in_one_batch() -> None:
    """One load (slow on transformers), one batched generate for three callers."""
    engine = TransformersModel(resolve("local/smollm2"), batch_wait_s=0.5)  # a busy CPU delays the callers
    try:
        engine.load()
        questions = [
            "Hi?",
            "What is the capital of France?",
            "Name a colour that is often used for the sky on a clear day.",
        ]
        client = ModelClient(backend=engine)
        results = await asyncio.gather(
            *(client.complete("local/smollm2", [{"role": "user", "content": q}], max_tokens=8) for q in questions)
        )
    finally:
        engine.close()
    assert engine.stats.generate_calls == 1 and engine.stats.last_batch == 3
    # each caller got the row of its own prompt: prompt lengths follow question lengths
    assert results[0].prompt_tokens < results[1].prompt_tokens < results[2].prompt_tokens
    for r in results:
        assert r.text.strip() and 0 < r.completion_tokens <= 8 and r.cost == 0.0
        assert r.finish_reason in ("stop", "length") and r.logprob is not None and r.logprob <= 0.0
