"""Re-voting a fixed-k arm with adaptive k (`evaluation.revote`): checked against a live adaptive arm of the same run
(fake model)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from evaluation.bench_config import BenchConfig, RunOptions
from evaluation.datasets import save_items
from evaluation.records import Item, ItemVariant
from evaluation.revote import revote_run
from evaluation.rundir import read_samples
from evaluation.runner import run_bench
from selfpara.models.client import ModelClient
from selfpara.testing import PARAPHRASE_MARKER, FakeBackend, last_user_text

COUNTRIES = [("France", "Paris"), ("Japan", "Tokyo"), ("Peru", "Lima"), ("Kenya", "Nairobi"), ("Chile", "Santiago")]
TAGS = ["alpha", "bravo", "charlie", "delta"]
# What the paraphrase tagged TAGS[i] is answered, per country (the original always gets the right city):
# unanimous, a wrong minority, a wrong majority, abstentions, a split.
PATTERNS = {
    "France": ["Paris"] * 4,
    "Japan": ["Tokyo", "Osaka", "Tokyo", "Tokyo"],
    "Peru": ["Cusco", "Cusco", "Cusco", "Lima"],
    "Kenya": ["I don't know", "I don't know", "Nairobi", "I don't know"],
    "Chile": ["Valparaiso", "Santiago", "Valparaiso", "Santiago"],
}


def responder(model: str, messages: list, params: dict) -> str:
    text = last_user_text(messages)
    country = next(c for c, _ in COUNTRIES if c in text)
    if PARAPHRASE_MARKER in text:
        return "\n".join(
            f"{i + 1}. Tell me, friend, {tag} style: which city is the capital of {country}?"
            for i, tag in enumerate(TAGS)
        )
    tag = re.search(r"\b(alpha|bravo|charlie|delta)\b", text)
    return dict(COUNTRIES)[country] if tag is None else PATTERNS[country][TAGS.index(tag.group(1))]


FIXED = "selfpara[adaptive=false]"
"""The arm replayed: on the default (embedded) model adaptive k is on unless turned off."""


def items() -> list[Item]:
    return [
        Item(
            id=f"cap-{country.lower()}",
            kind="factual",
            gold=[city],
            variants=[
                ItemVariant(id=0, question=f"What is the capital of {country}?"),
                ItemVariant(id=1, question=f"Which city is the capital of {country}?"),
            ],
        )
        for country, city in COUNTRIES
    ]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("replay")
    dataset = save_items(items(), tmp / "data.jsonl")
    client = ModelClient(backend=FakeBackend(responder), retries=0, backoff_s=0.001, timeout_s=5)
    config = BenchConfig(dataset=str(dataset), arms=[FIXED, "selfpara[adaptive=true]"], k=4)
    result = asyncio.run(run_bench(config, tmp / "run", RunOptions(progress=False, client=client)))
    assert result.complete
    return tmp / "run"


def test_the_bench_arm_takes_the_adaptive_setting(run_dir: Path) -> None:
    config = json.loads((run_dir / "config.json").read_text())
    adaptive = next(a for a in config["arms"] if a["label"] == "selfpara[adaptive=true]")
    assert adaptive["config"]["adaptive"] is True
    records = [r for r in read_samples(run_dir / "samples.jsonl") if r.arm == "selfpara[adaptive=true]"]
    assert any(r.details["evidence"]["calls_saved"] > 0 for r in records)


def test_the_replay_is_what_a_live_adaptive_run_does(run_dir: Path, tmp_path: Path) -> None:
    asyncio.run(revote_run(run_dir, tmp_path / "replayed", {"adaptive": True}, arm=FIXED, label="replayed"))
    records = read_samples(tmp_path / "replayed" / "samples.jsonl")
    live = {(r.item_id, r.variant_id): r for r in records if r.arm == "selfpara[adaptive=true]"}
    fixed = {(r.item_id, r.variant_id): r for r in records if r.arm == FIXED}
    replayed = [r for r in records if r.arm == "replayed"]
    assert len(replayed) == 2 * len(COUNTRIES)
    for r in replayed:
        lived = live[(r.item_id, r.variant_id)]
        assert (r.answer, r.label, r.calls) == (lived.answer, lived.label, lived.calls)
        assert r.details["k_kept"] == lived.details["evidence"]["k_kept"]
        assert r.skipped_paraphrases == lived.skipped_paraphrases
    saved = sum(fixed[key].calls - r.calls for key, r in ((k, live[k]) for k in live))
    assert 0 < saved == sum(f.calls for f in fixed.values()) - sum(r.calls for r in replayed)


def test_an_arm_that_already_adapted_is_not_replayed_as_fixed_k(run_dir: Path, tmp_path: Path) -> None:
    from selfpara.errors import ConfigError

    with pytest.raises(ConfigError, match="ran adaptive k"):
        asyncio.run(revote_run(run_dir, tmp_path / "x", {"adaptive": False}, arm="selfpara[adaptive=true]"))
