"""The runner on a fake model: run dir layout, cache hits, resume after interruption, config checks, variants."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from evaluation.bench_config import BenchConfig, RunOptions
from evaluation.cache import open_cache
from evaluation.datasets import load_items, save_items
from evaluation.records import Item, ItemVariant, SampleRecord
from evaluation.rundir import read_samples
from evaluation.runner import run_bench
from evaluation.variants import parse_variants, select_items
from selfpara.errors import ConfigError, InputError, UpstreamError
from selfpara.models.client import ModelClient
from selfpara.result import Completion
from selfpara.testing import PARAPHRASE_MARKER, FakeBackend, last_user_text
from tests.helpers.backends import GatedBackend
from tests.helpers.bench import make_items, responder

ARMS = ["raw", "selfpara", "sc"]


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    return save_items(make_items(), tmp_path / "data.jsonl")


def fake_client(resp: Any = responder, delay: float = 0.0) -> tuple[ModelClient, FakeBackend]:
    fake = FakeBackend(resp, delay_s=delay)
    return ModelClient(backend=fake, retries=0, backoff_s=0.001, timeout_s=5), fake


def run(config: BenchConfig, out: Path, **options: Any) -> Any:
    return asyncio.run(run_bench(config, out, RunOptions(progress=False, **options)))


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_every_arm_answers_every_variant_and_the_run_dir_holds_it_all(dataset: Path, tmp_path: Path) -> None:
    client, fake = fake_client()
    out = tmp_path / "run"
    cfg = BenchConfig(dataset=str(dataset), arms=ARMS, k=2)
    result = run(cfg, out, client=client, cache=open_cache(tmp_path / "c.sqlite"))
    assert result.complete and result.new_samples == 4 * 2 * 3
    records = lines(out / "samples.jsonl")
    assert len(records) == 24
    assert {(r["item_id"], r["variant_id"], r["arm"]) for r in records} == {
        (f"cap-{i}", v, a) for i in range(4) for v in (0, 1) for a in ARMS
    }
    r0 = next(r for r in records if r["arm"] == "raw" and r["item_id"] == "cap-0" and r["variant_id"] == 0)
    assert r0["answer"] == "It is Paris." and r0["label"] == "correct" and r0["calls"] == 1 and r0["is_original"]
    assert r0["prompt_tokens"] > 0 and r0["latency_s"] >= 0
    sc = [r for r in records if r["arm"] == "sc"]
    assert all(r["calls"] == 3 for r in sc)  # k + 1
    config = json.loads((out / "config.json").read_text())
    assert config["bench"]["arms"] == ARMS and config["bench"]["k"] == 2
    assert [a["label"] for a in config["arms"]] == ARMS and config["variants"] == 8
    assert [i.id for i in load_items(out / "items.jsonl")] == [f"cap-{i}" for i in range(4)]
    assert result.model_calls == len(fake.calls)


def test_second_run_is_served_from_the_cache(dataset: Path, tmp_path: Path) -> None:
    cache_path = tmp_path / "calls.sqlite"
    cfg = BenchConfig(dataset=str(dataset), arms=ARMS, k=2)
    client, fake = fake_client()
    first = run(cfg, tmp_path / "a", client=client, cache=open_cache(cache_path))
    assert len(fake.calls) > 0
    client2, fake2 = fake_client()
    second = run(cfg, tmp_path / "b", client=client2, cache=open_cache(cache_path))
    assert len(fake2.calls) == 0 and second.model_calls == 0 and second.cache_hits > 0
    key = lambda r: (r.item_id, r.variant_id, r.arm)  # noqa: E731
    a = {key(r): (r.answer, r.label, r.calls, r.prompt_tokens) for r in first.records}
    b = {key(r): (r.answer, r.label, r.calls, r.prompt_tokens) for r in second.records}
    assert a == b  # usage is still counted as the arm spent it


def test_resume_after_interruption_runs_only_the_missing_samples(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    cfg = BenchConfig(dataset=str(dataset), arms=["raw", "sc"], k=2)
    client, fake = fake_client()
    first = run(cfg, out, client=client, stop_after=5, concurrency=1)
    assert not first.complete and first.new_samples == 5
    done = {(r["item_id"], r["variant_id"], r["arm"]) for r in lines(out / "samples.jsonl")}
    assert len(done) == 5
    client2, fake2 = fake_client()
    second = run(cfg, out, client=client2, concurrency=3)
    assert second.complete and second.new_samples == 16 - 5 and second.skipped == 5
    rows = lines(out / "samples.jsonl")
    assert len(rows) == 16 and len({(r["item_id"], r["variant_id"], r["arm"]) for r in rows}) == 16
    # only the missing samples were asked: raw costs 1 call, sc k + 1 = 3
    assert len(fake2.calls) == sum(
        1 if a == "raw" else 3 for (_, _, a) in {(r["item_id"], r["variant_id"], r["arm"]) for r in rows} - done
    )


def test_a_run_cancelled_mid_flight_keeps_what_it_wrote(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    cfg = BenchConfig(dataset=str(dataset), arms=["raw"], k=1)
    client, _ = fake_client(delay=0.05)

    async def interrupted() -> None:
        def cancel_at_the_third(_record: SampleRecord) -> None:  # called once its line is written
            written.append(_record)
            if len(written) == 3:
                task.cancel()

        written: list[SampleRecord] = []
        options = RunOptions(client=client, progress=False, concurrency=1, on_record=cancel_at_the_third)
        task = asyncio.create_task(run_bench(cfg, out, options))
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(interrupted())
    kept = len(lines(out / "samples.jsonl"))
    assert kept == 3  # the fourth sample's call was in flight: cancelled, nothing written for it
    # a torn last line, as a kill during a write leaves it
    with (out / "samples.jsonl").open("a") as fh:
        fh.write('{"item_id": "cap-3", "variant_id": 1, "is_or')
    client2, fake2 = fake_client()
    result = run(cfg, out, client=client2)
    assert result.complete and len(fake2.calls) == 8 - kept
    assert len(lines(out / "samples.jsonl")) == 8  # the torn line is gone


def test_failed_samples_are_logged_and_retried_on_resume(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    cfg = BenchConfig(dataset=str(dataset), arms=["raw"])

    def flaky(model: str, messages: list, params: dict) -> str | Exception:
        if "Japan" in last_user_text(messages):
            return UpstreamError("server on fire", status=400)
        return responder(model, messages, params)

    client, _ = fake_client(flaky)
    first = run(cfg, out, client=client)
    assert not first.complete and first.failed == 2
    failed = [r for r in lines(out / "samples.jsonl") if r["error"]]
    assert len(failed) == 2 and all(r["answer"] is None and r["label"] == "not_attempted" for r in failed)
    client2, fake2 = fake_client()
    second = run(cfg, out, client=client2)
    assert second.complete and len(fake2.calls) == 2
    assert all(r.error is None for r in second.records) and len(second.records) == 8


def test_rerun_with_another_config_is_refused(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    client, _ = fake_client()
    run(BenchConfig(dataset=str(dataset), arms=["raw"], k=2), out, client=client)
    with pytest.raises(ConfigError) as err:
        run(BenchConfig(dataset=str(dataset), arms=["raw"], k=3), out, client=client)
    message = str(err.value)
    assert str(out / "config.json") in message and "k: 2 -> 3" in message and "--overwrite" in message
    result = run(BenchConfig(dataset=str(dataset), arms=["raw"], k=3), out, client=client, overwrite=True)
    assert result.complete and result.skipped == 0
    assert json.loads((out / "config.json").read_text())["bench"]["k"] == 3


def test_bad_inputs_fail_before_any_call(dataset: Path, tmp_path: Path) -> None:
    client, fake = fake_client()
    with pytest.raises(ConfigError, match="unknown arm 'nope'"):
        run(BenchConfig(dataset=str(dataset), arms=["raw", "nope"]), tmp_path / "a", client=client)
    with pytest.raises(ConfigError, match="unknown dataset 'no-such-set'"):
        run(BenchConfig(dataset="no-such-set", arms=["raw"]), tmp_path / "b", client=client)
    with pytest.raises(ConfigError, match="unknown grader 'fuzzy'"):
        run(BenchConfig(dataset=str(dataset), arms=["raw"], grader="fuzzy"), tmp_path / "c", client=client)
    with pytest.raises(ConfigError, match="generate:N"):
        parse_variants("generate:x")
    assert fake.calls == []


def test_a_corrupt_sample_log_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    good = SampleRecord(item_id="a", variant_id=0, is_original=True, arm="raw", answer="x", label="correct")
    path.write_text(good.model_dump_json() + "\nnot json\n" + good.model_dump_json() + "\n")
    with pytest.raises(InputError, match=f"{path}:2: not a valid sample record"):
        read_samples(path)


def test_limit_takes_a_seeded_subset_in_dataset_order() -> None:
    items = make_items(6)
    a = select_items(items, 3, seed=1)
    assert a == select_items(items, 3, seed=1) and len(a) == 3
    assert [i.id for i in a] == sorted(i.id for i in a)
    assert select_items(items, None, 0) == items and select_items(items, 10, 0) == items


def test_max_variants_and_variants_from_a_file(dataset: Path, tmp_path: Path) -> None:
    client, _ = fake_client()
    r = run(BenchConfig(dataset=str(dataset), arms=["raw"], max_variants=1), tmp_path / "a", client=client)
    assert all(len(i.variants) == 1 for i in r.items) and len(r.records) == 4
    other = [
        i.model_copy(
            update={
                "variants": [
                    i.variants[0],
                    ItemVariant(id=1, question=f"Q{i.id}?"),
                    ItemVariant(id=2, question=f"R{i.id}?"),
                ]
            }
        )
        for i in make_items()
    ]
    vfile = save_items(other, tmp_path / "variants.jsonl")
    r = run(BenchConfig(dataset=str(dataset), arms=["raw"], variants=str(vfile)), tmp_path / "b", client=client)
    assert [len(i.variants) for i in r.items] == [3, 3, 3, 3] and len(r.records) == 12
    save_items(other[:2], vfile)
    with pytest.raises(ConfigError, match=r"has no variants for item\(s\) cap-2, cap-3"):
        run(BenchConfig(dataset=str(dataset), arms=["raw"], variants=str(vfile)), tmp_path / "c", client=client)


def test_generated_variants_are_verified_saved_and_reused(dataset: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    cfg = BenchConfig(dataset=str(dataset), arms=["raw"], variants="generate:3", limit=2)
    client, fake = fake_client()
    result = run(cfg, out, client=client)
    saved = load_items(out / "items.jsonl")
    for item in saved:
        # capital questions: the renamings fill every slot, each one said where it came from
        assert len(item.variants) == 4 and item.variants[0].id == 0
        generated = item.meta["generated_variants"]
        assert generated["requested"] == 3 and generated["sources"] == ["renaming:capital"] * 3
    assert len(result.records) == sum(len(i.variants) for i in saved)
    client2, fake2 = fake_client()
    run(cfg, out, client=client2)  # resume: the saved variants are used, nothing is regenerated
    assert not [c for c in fake2.calls if PARAPHRASE_MARKER in last_user_text(c[1])]


def test_run_is_concurrent(dataset: Path, tmp_path: Path) -> None:
    fake = GatedBackend(responder, width=8)
    client = ModelClient(backend=fake, retries=0, backoff_s=0.001, timeout_s=5)
    result = run(BenchConfig(dataset=str(dataset), arms=["raw"]), tmp_path / "a", client=client, concurrency=8)
    assert result.complete and len(result.records) == 8
    assert fake.peak == 8  # the 8 samples were asked at once, not one after another


def test_token_and_cost_totals_come_from_usage(dataset: Path, tmp_path: Path) -> None:
    def priced(model: str, messages: list, params: dict) -> Completion:
        return Completion(text="Paris", prompt_tokens=10, completion_tokens=2, cost=0.001)

    client, _ = fake_client(priced)
    result = run(BenchConfig(dataset=str(dataset), arms=["raw", "sc"], k=1), tmp_path / "a", client=client)
    raw = [r for r in result.records if r.arm == "raw"]
    sc = [r for r in result.records if r.arm == "sc"]
    assert sum(r.cost for r in raw) == pytest.approx(8 * 0.001)
    assert sum(r.prompt_tokens for r in sc) == 8 * 2 * 10


def test_job_order_item_arm_and_blocks() -> None:
    from evaluation.runner import job_order

    class A:
        def __init__(self, label: str) -> None:
            self.label = label

    items, arms = make_items(3), [A("raw"), A("sc")]
    key = lambda jobs: [(i.id, v.id, a.label) for i, v, a in jobs]  # noqa: E731
    by_item = key(job_order(items, arms, "item"))  # type: ignore[arg-type]
    assert by_item[:4] == [("cap-0", 0, "raw"), ("cap-0", 0, "sc"), ("cap-0", 1, "raw"), ("cap-0", 1, "sc")]
    by_arm = key(job_order(items, arms, "arm"))  # type: ignore[arg-type]
    assert [a for _, _, a in by_arm] == ["raw"] * 6 + ["sc"] * 6
    blocks = key(job_order(items, arms, "arm:2"))  # type: ignore[arg-type]
    assert [a for _, _, a in blocks] == ["raw"] * 4 + ["sc"] * 4 + ["raw"] * 2 + ["sc"] * 2
    assert sorted(by_item) == sorted(by_arm) == sorted(blocks)
    for bad in ("random", "arm:x", "arm:0"):
        with pytest.raises(ConfigError):
            job_order(items, arms, bad)  # type: ignore[arg-type]


def _merge_runs_script() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("merge_runs", Path(__file__).parents[1] / "scripts/merge_runs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_shards_are_disjoint_and_merge_into_the_whole_run(dataset: Path, tmp_path: Path) -> None:
    merge_runs = _merge_runs_script()
    whole = run(BenchConfig(dataset=str(dataset), arms=["raw"]), tmp_path / "whole", client=fake_client()[0])
    shards = [
        run(
            BenchConfig(dataset=str(dataset), arms=["raw"], shard=f"{i}/3"), tmp_path / f"s{i}", client=fake_client()[0]
        )
        for i in (1, 2, 3)
    ]
    assert [[i.id for i in s.items] for s in shards] == [["cap-0", "cap-3"], ["cap-1"], ["cap-2"]]
    merge_runs.merge(tmp_path / "merged", [tmp_path / f"s{i}" for i in (1, 2, 3)])
    merged = {(r.item_id, r.variant_id, r.answer) for r in read_samples(tmp_path / "merged" / "samples.jsonl")}
    assert merged == {(r.item_id, r.variant_id, r.answer) for r in whole.records}


def test_an_arm_of_another_run_joins_a_run_over_the_same_items(dataset: Path, tmp_path: Path) -> None:
    merge_runs = _merge_runs_script()
    cfg = BenchConfig(dataset=str(dataset), arms=["raw"])
    run(cfg, tmp_path / "a", client=fake_client()[0])
    run(cfg, tmp_path / "b", client=fake_client(lambda m, msgs, p: "Lima")[0])
    merge_runs.main([str(tmp_path / "ab"), str(tmp_path / "a"), str(tmp_path / "b"), "--arm", "raw", "--as", "raw-b"])
    records = read_samples(tmp_path / "ab" / "samples.jsonl")
    assert {r.answer for r in records if r.arm == "raw-b"} == {"Lima"} and len(records) == 16
    assert {r.answer for r in records if r.arm == "raw"} != {"Lima"}
    assert [a["label"] for a in json.loads((tmp_path / "ab" / "config.json").read_text())["arms"]] == ["raw", "raw-b"]
    run(BenchConfig(dataset=str(dataset), arms=["raw"], shard="1/2"), tmp_path / "half", client=fake_client()[0])
    with pytest.raises(SystemExit, match="different items"):
        merge_runs.add_arm(tmp_path / "x", tmp_path / "a", tmp_path / "half", "raw", "raw-h")


def test_runs_merge_whatever_the_order_of_their_arms_but_not_other_arms(dataset: Path, tmp_path: Path) -> None:
    merge_runs = _merge_runs_script()
    for i, arms in ((1, ["raw", "sc"]), (2, ["sc", "raw"]), (3, ["raw"])):
        cfg = BenchConfig(dataset=str(dataset), arms=arms, shard=f"{min(i, 2)}/2")
        run(cfg, tmp_path / f"s{i}", client=fake_client()[0])
    merge_runs.merge(tmp_path / "m", [tmp_path / "s1", tmp_path / "s2"])
    records = read_samples(tmp_path / "m" / "samples.jsonl")
    assert {r.arm for r in records} == {"raw", "sc"} and len({r.item_id for r in records}) == 4
    with pytest.raises(SystemExit, match="the arms differ: raw, sc vs raw"):
        merge_runs.merge(tmp_path / "m3", [tmp_path / "s1", tmp_path / "s3"])


@pytest.mark.parametrize("shard", ["0/2", "3/2", "x/2"])
def test_a_bad_shard_is_refused(shard: str, dataset: Path, tmp_path: Path) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="shard"):
        BenchConfig(dataset=str(dataset), arms=["raw"], shard=shard)


def test_worked_answers_ask_math_for_its_working_and_leave_other_kinds_short(tmp_path: Path) -> None:
    math = Item(id="m", kind="math", gold=["24"], variants=[ItemVariant(id=0, question="What is 3 times 8?")])
    fact = make_items(1)[0]
    data = save_items([math, fact], tmp_path / "data.jsonl")
    seen: dict[str, str] = {}

    def reply(model: str, messages: list, params: dict) -> str:
        seen[last_user_text(messages)] = messages[0]["content"]
        return "3 groups of 8 make 3 × 8 = 24. The answer is 24." if "8" in last_user_text(messages) else "Paris"

    result = run(
        BenchConfig(dataset=str(data), arms=["raw"], answers="worked", max_variants=1),
        tmp_path / "r",
        client=fake_client(reply)[0],
    )
    assert "step by step" in seen["What is 3 times 8?"] and "The answer is N" in seen["What is 3 times 8?"]
    assert seen["What is the capital of France?"] == "Answer the question with a short phrase only. No explanation."
    assert {r.item_id: r.label for r in result.records} == {"m": "correct", "cap-0": "correct"}
