"""`selfpara bench` arms share identical calls through the call cache, and still report usage as spent."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from evaluation.bench_config import BenchConfig, RunOptions
from evaluation.cache import CachingBackend, CallTally, open_cache, tally_calls
from evaluation.datasets import save_items
from evaluation.report import build_report
from evaluation.runner import run_bench
from selfpara.models.cache import cacheable
from selfpara.models.client import ModelClient
from selfpara.testing import FakeBackend
from tests.helpers.bench import make_items, responder

MSGS = [{"role": "user", "content": "What is the capital of France?"}]


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    return save_items(make_items(), tmp_path / "data.jsonl")


def fake_client() -> tuple[ModelClient, FakeBackend]:
    fake = FakeBackend(responder)
    return ModelClient(backend=fake, retries=0, backoff_s=0.001, timeout_s=5), fake


def run(config: BenchConfig, out: Path, **options: Any) -> Any:
    return asyncio.run(run_bench(config, out, RunOptions(progress=False, **options)))


def outcomes(result: Any) -> dict[tuple[str, int, str], tuple[Any, ...]]:
    return {
        (r.item_id, r.variant_id, r.arm): (r.answer, r.label, r.calls, r.prompt_tokens, r.completion_tokens)
        for r in result.records
    }


def signature(call: tuple[str, list, dict]) -> str:
    model, messages, params = call
    return json.dumps([model, messages, {k: v for k, v in params.items() if k != "timeout"}], sort_keys=True)


@pytest.mark.parametrize("arms", [["raw", "selfpara", "sc"], ["sc[k=2]", "sc[k=3]"]])
def test_arms_share_identical_calls_and_report_usage_as_spent(dataset: Path, tmp_path: Path, arms: list[str]) -> None:
    cfg = BenchConfig(dataset=str(dataset), arms=arms, k=2)
    alone, alone_fake = fake_client()
    plain = run(cfg, tmp_path / "plain", client=alone)
    client, fake = fake_client()
    shared = run(cfg, tmp_path / "shared", client=client, cache=open_cache(tmp_path / "calls.sqlite"))
    # Same answers, labels and per-arm usage as a run without any cache: nothing that differs collided.
    assert outcomes(shared) == outcomes(plain)
    # Fewer upstream calls: no identical greedy or seeded call was sent twice.
    sent = [signature(c) for c in fake.calls if cacheable(c[2])]
    assert len(sent) == len(set(sent))
    saved = len(alone_fake.calls) - len(fake.calls)
    assert saved > 0 and saved == sum(r.shared_calls for r in shared.records)
    assert all(r.cached_calls == 0 for r in shared.records)  # nothing came from an earlier run
    assert shared.model_calls == len(fake.calls)


def test_the_run_counts_shared_and_cached_calls_apart(dataset: Path, tmp_path: Path) -> None:
    # bench's closing line said "N cached" for both; one word is one thing: shared within the run,
    # cached from an earlier run's saved calls
    cfg = BenchConfig(dataset=str(dataset), arms=["raw", "selfpara"], k=2)
    cache = tmp_path / "calls.sqlite"
    client, fake = fake_client()
    first = run(cfg, tmp_path / "first", client=client, cache=open_cache(cache), concurrency=1)
    assert first.shared_calls == sum(r.shared_calls for r in first.records) > 0 and first.cached_calls == 0
    assert first.model_calls == len(fake.calls)
    again, again_fake = fake_client()
    second = run(cfg, tmp_path / "second", client=again, cache=open_cache(cache), concurrency=1)
    assert second.model_calls == len(again_fake.calls) == 0
    assert second.cached_calls == sum(r.calls for r in second.records) - second.shared_calls > 0


def test_the_selfpara_arms_answer_to_the_original_is_the_raw_arms_call(dataset: Path, tmp_path: Path) -> None:
    cfg = BenchConfig(dataset=str(dataset), arms=["raw", "selfpara"], k=2)
    client, fake = fake_client()
    result = run(cfg, tmp_path / "run", client=client, cache=open_cache(tmp_path / "calls.sqlite"), concurrency=1)
    by_arm = {arm: [r for r in result.records if r.arm == arm] for arm in ("raw", "selfpara")}
    assert all(r.shared_calls == 0 for r in by_arm["raw"])
    assert all(r.shared_calls == 1 for r in by_arm["selfpara"])  # its original's answer, nothing else
    spent = sum(r.calls for r in result.records)
    assert len(fake.calls) == spent - len(by_arm["selfpara"])  # one call per selfpara answer saved, still counted
    report_warnings = build_report(tmp_path / "run", n_boot=10)["warnings"]
    assert any("shared identical calls" in w and "selfpara" in w for w in report_warnings)


def test_unseeded_sampled_calls_stay_with_their_arm_and_deterministic_ones_are_shared(tmp_path: Path) -> None:
    cache = open_cache(tmp_path / "calls.sqlite")
    fake = FakeBackend()
    base = ModelClient(backend=fake, retries=0)
    a = CachingBackend(base, cache, {"arm": "a", "sample": 0})
    b = CachingBackend(base, cache, {"arm": "b", "sample": 0})

    async def calls() -> None:
        sampled = {"temperature": 0.7, "max_tokens": 8}
        await a.complete("openai/m", MSGS, sampled)
        await b.complete("openai/m", MSGS, sampled)  # another arm's draw: made again
        await a.complete("openai/m", MSGS, sampled)  # its own draw: replayed
        for params in ({"temperature": 0.0, "max_tokens": 8}, {"temperature": 0.7, "max_tokens": 8, "seed": 4}):
            await a.complete("openai/m", MSGS, params)
            await b.complete("openai/m", MSGS, params)  # identical: shared

    asyncio.run(calls())
    assert len(fake.calls) == 2 + 1 + 1
    assert (a.calls, a.hits, b.calls, b.hits) == (3, 1, 1, 2)


def test_the_selfpara_arm_takes_no_library_cache_setting() -> None:
    from evaluation.arms import make_arm, parse_arm_list
    from selfpara.errors import ConfigError

    client, _ = fake_client()
    with pytest.raises(ConfigError, match="cache"):
        parse_arm_list("selfpara[cache=off]")
    arm = make_arm(parse_arm_list("selfpara")[0], client, "openai/m", k=2, max_tokens=8, api_base=None)
    assert "cache" not in arm.describe()["config"] and arm.describe()["config"]["model"] == "openai/m"


class Ticks:
    """A clock that moves one second each time it is read: one raw call is read twice, so it takes 1 s."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def test_an_answer_that_shares_a_call_is_charged_the_model_seconds_it_took(tmp_path: Path) -> None:
    # a shared call was charged 0 model-seconds, so an arm whose original was raw's call looked cheaper
    # by that call, and raw, when another arm had made its call first, looked free
    client = ModelClient(backend=FakeBackend(responder), retries=0, backoff_s=0.001, timeout_s=5, clock=Ticks())
    backend = CachingBackend(client, open_cache(tmp_path / "calls.sqlite"))

    async def answer() -> CallTally:
        with tally_calls() as tally:
            await backend.complete("fake", MSGS, {"temperature": 0.0})
        return tally

    made, shared = asyncio.run(answer()), asyncio.run(answer())
    assert (made.calls, made.shared, made.call_s, made.shared_s) == (1, 0, 1.0, 0.0)
    assert (shared.calls, shared.shared, shared.call_s, shared.shared_s) == (0, 1, 0.0, 1.0)
