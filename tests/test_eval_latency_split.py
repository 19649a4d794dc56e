"""A bench answer's latency splits into the model's work and its wait in an embedded model's queue:
at concurrency 4 on one model taking 0.1 s a call, raw answers wait 0, 0.1, 0.2 and 0.3 s."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from evaluation.datasets import save_items
from evaluation.report import build_report, markdown_table
from evaluation.runner import BenchConfig, RunOptions, run_bench
from evaluation.schema import Item, ItemVariant
from selfpara.models.client import ModelClient
from selfpara.models.engines.embedded import resolve
from selfpara.models.engines.llamacpp import LlamaCppModel
from selfpara.models.engines.params import GenRequest
from selfpara.result import Completion

DELAY_S = 0.1


class SlowEngine(LlamaCppModel):
    """The llama.cpp engine's own queue and worker, with a generation that takes DELAY_S."""

    def __init__(self) -> None:
        super().__init__(resolve("local/smollm2"))
        self._llm = object()  # counts as loaded

    def _generate(self, req: GenRequest) -> Completion:
        time.sleep(DELAY_S)
        return Completion(text="Lima", completion_tokens=1)


def test_totals_split_latency_into_model_and_queue_time(tmp_path: Path) -> None:
    items = [
        Item(id=f"q{i}", gold=["Lima"], variants=[ItemVariant(id=0, question=f"Capital of Peru ({i})?")])
        for i in range(4)
    ]
    data = save_items(items, tmp_path / "data.jsonl")
    client = ModelClient(backend=SlowEngine(), retries=0, timeout_s=10)
    out = tmp_path / "run"
    options = RunOptions(client=client, progress=False, concurrency=4)
    asyncio.run(run_bench(BenchConfig(dataset=str(data), arms=["raw"], model="local/smollm2"), out, options))
    totals = build_report(out, n_boot=20)["totals"]["raw"]
    assert totals["model_mean_s"] == pytest.approx(DELAY_S, abs=0.05)
    assert totals["queue_mean_s"] == pytest.approx(1.5 * DELAY_S, abs=0.08)  # (0 + 1 + 2 + 3) / 4 generations
    assert totals["latency_mean_s"] == pytest.approx(totals["model_mean_s"] + totals["queue_mean_s"], abs=0.05)
    rows = [line for line in markdown_table(build_report(out, n_boot=20)).splitlines() if line.startswith("| raw |")]
    row = rows[-1]  # the totals table comes last
    assert f"{totals['model_mean_s']:.2f} / {totals['queue_mean_s']:.2f}" in row
