"""Regrading a recorded run: every arm's answers graded again by today's grader, nothing else changed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from evaluation.datasets import save_items
from evaluation.records import Item, ItemVariant
from evaluation.revote import regrade_run
from evaluation.runner import BenchConfig, RunOptions, run_bench
from selfpara.errors import ConfigError
from selfpara.models.client import ModelClient
from selfpara.testing import FakeBackend


def test_every_sample_is_graded_again_and_the_rest_is_kept(tmp_path: Path) -> None:
    items = [Item(id="spider", gold=["8"], variants=[ItemVariant(id=0, question="How many legs has a spider?")])]
    data = save_items(items, tmp_path / "d.jsonl")
    client = ModelClient(backend=FakeBackend(lambda m, msgs, p: "A spider has eight legs."), retries=0, timeout_s=5)
    asyncio.run(
        run_bench(
            BenchConfig(dataset=str(data), arms=["raw"]), tmp_path / "run", RunOptions(client=client, progress=False)
        )
    )
    samples = tmp_path / "run" / "samples.jsonl"
    # as a grader that missed number words would have left it
    record = json.loads(samples.read_text())
    samples.write_text(json.dumps({**record, "label": "incorrect"}) + "\n")

    moves = asyncio.run(regrade_run(tmp_path / "run", tmp_path / "again"))
    assert moves == {("incorrect", "correct"): 1}
    regraded = json.loads((tmp_path / "again" / "samples.jsonl").read_text())
    assert regraded == {**record, "label": "correct"}
    assert json.loads(samples.read_text())["label"] == "incorrect"  # the original run is untouched
    with pytest.raises(ConfigError, match="exists"):
        asyncio.run(regrade_run(tmp_path / "run", tmp_path / "again"))
