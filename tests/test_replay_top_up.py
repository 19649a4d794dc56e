"""scripts/replay_top_up.py, checked against live top-up and default arms of the same run (fake model).

The docs quote its replays as what the arms would have answered; these tests hold it to that.
"""

from __future__ import annotations

import asyncio
import runpy
from pathlib import Path
from typing import Any

import pytest

from evaluation.bench_config import BenchConfig, RunOptions
from evaluation.datasets import save_items
from evaluation.records import Item, ItemVariant
from evaluation.rundir import latest_records, read_samples
from evaluation.runner import run_bench
from selfpara.models.client import ModelClient
from selfpara.testing import PARAPHRASE_MARKER, FakeBackend, last_user_text

# The responder scripts the model's list, so both voting arms take no renaming and ask for a list.
SELFPARA = "selfpara[renamings=false;paraphrase_method=list]"
TOP_UP = "selfpara[renamings=false;paraphrase_method=list;top_up_temperature=0.7;overrule_margin=1]"
GOLD = {"France": "Paris", "Peru": "Lima", "Chile": "Santiago", "Japan": "Tokyo"}
GREEDY = {"France": "Paris", "Peru": "Lima", "Chile": "Santiago", "Japan": "Osaka"}  # the original's answer
PARAPHRASED = {"France": "Paris", "Peru": "Cusco", "Chile": "Santiago", "Japan": "Tokyo"}  # the kept paraphrase's
# Samples of the original by seed 1..4. Top-up slots 2 and 3 (one paraphrase is kept) draw seeds 2 and 3,
# sc's samples seeds 1..4: Peru's top-up vote is Lima, Cusco, Cusco, Cusco (a replay that took seeds 1
# and 2 instead would tie and keep Lima).
SAMPLES = {
    "France": ["Paris"] * 4,
    "Peru": ["Lima", "Cusco", "Cusco", "Lima"],
    "Chile": ["Valparaiso", "Valparaiso", "Santiago", "Valparaiso"],
    "Japan": ["Tokyo", "Tokyo", "Osaka", "Tokyo"],
}


def responder(model: str, messages: list, params: dict) -> str:
    text = last_user_text(messages)
    country = next(c for c in GOLD if c in text)
    if PARAPHRASE_MARKER in text:  # one faithful rewording, two that the entity check rejects
        return "\n".join(
            [
                f"Tell me, friend, alpha style: which city is the capital of {country}?",
                "What is the capital of Germany?",
                "Which city is the capital of Austria?",
            ]
        )
    if params.get("temperature"):
        return SAMPLES[country][params["seed"] - 1]
    return PARAPHRASED[country] if "alpha" in text else GREEDY[country]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("replay-top-up")
    items = [
        Item(
            id=f"cap-{country.lower()}",
            gold=[city],
            variants=[
                ItemVariant(id=0, question=f"What is the capital of {country}?"),
                ItemVariant(id=1, question=f"Which city is the capital of {country}?"),
            ],
        )
        for country, city in GOLD.items()
    ]
    dataset = save_items(items, tmp / "data.jsonl")
    client = ModelClient(backend=FakeBackend(responder), retries=0, backoff_s=0.001, timeout_s=5)
    config = BenchConfig(dataset=str(dataset), arms=["raw", "sc", SELFPARA, TOP_UP], k=3)
    result = asyncio.run(run_bench(config, tmp / "run", RunOptions(progress=False, client=client)))
    assert result.complete
    return tmp / "run"


@pytest.fixture(scope="module")
def replayed(run_dir: Path) -> dict[str, dict[str, dict[int, bool]]]:
    script: dict[str, Any] = runpy.run_path(str(Path(__file__).parents[1] / "scripts" / "replay_top_up.py"))
    return asyncio.run(script["replay"](run_dir, SELFPARA))


def live(run_dir: Path, arm: str) -> dict[str, dict[int, bool]]:
    out: dict[str, dict[int, bool]] = {}
    for r in latest_records(read_samples(run_dir / "samples.jsonl")):
        if r.arm == arm:
            out.setdefault(r.item_id, {})[r.variant_id] = r.label == "correct"
    return out


def test_the_run_tops_up_two_slots_per_wording(run_dir: Path) -> None:
    records = [r for r in read_samples(run_dir / "samples.jsonl") if r.arm == TOP_UP]
    assert len(records) == 2 * len(GOLD)
    assert {(r.details["evidence"]["k_kept"], r.details["evidence"]["k_topped_up"]) for r in records} == {(1, 2)}


def test_the_replayed_top_up_and_defaults_are_the_live_arms(
    run_dir: Path, replayed: dict[str, dict[str, dict[int, bool]]]
) -> None:
    assert replayed["top-up, margin 1"] == live(run_dir, TOP_UP)
    assert replayed["selfpara, margin 2"] == live(run_dir, SELFPARA)
    assert replayed["raw"] == live(run_dir, "raw")
    assert replayed["top-up, margin 1"]["cap-peru"] == {0: False, 1: False}  # the seeds line up (see SAMPLES)


def test_the_sample_mixes_vote_the_original_with_every_sc_sample(
    replayed: dict[str, dict[str, dict[int, bool]]],
) -> None:
    # Chile: Santiago against three Valparaiso samples; Japan: Osaka against three Tokyo samples.
    assert replayed["samples, margin 1"]["cap-chile"] == {0: False, 1: False}
    assert replayed["samples, margin 1"]["cap-japan"] == {0: True, 1: True}
    assert replayed["samples, margin 2"]["cap-chile"] == {0: True, 1: True}  # a one-vote lead: the original stays
    # both: Santiago, Santiago (paraphrase) and four samples, three of them Valparaiso: 3 to 3, a tie.
    assert replayed["both, margin 1"]["cap-chile"] == {0: True, 1: True}
    assert replayed["both, margin 1"]["cap-peru"] == {0: True, 1: True}  # Lima, Cusco + Lima, Cusco, Cusco, Lima: a tie
