"""A bench answer's latency splits into the model's work and its wait in an embedded model's queue:
at concurrency 4 on one model taking 0.1 s a call, raw answers wait 0, 0.1, 0.2 and 0.3 s.

The engine and the client share a fake clock that only a generation moves, and the engine
starts each generation at a fixed point of the run, so every figure is exact."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from evaluation.datasets import save_items
from evaluation.records import Item, ItemVariant, SampleRecord
from evaluation.report import build_report, markdown_table
from evaluation.runner import BenchConfig, RunOptions, run_bench
from selfpara.models.client import ModelClient
from selfpara.models.engines.params import GenRequest
from selfpara.result import Completion
from tests.helpers.clock import FakeClock
from tests.helpers.engines import SerialEngine

DELAY_S = 0.1
CALLS = 4


class SteppedEngine(SerialEngine):
    """The llama.cpp engine's own queue, on a fake clock that a generation moves by DELAY_S.

    The first generation starts once all CALLS calls wait in the queue, each later one once the
    bench has recorded the answer before it: no reading of the clock can race a generation.
    """

    def __init__(self, clock: FakeClock) -> None:
        super().__init__()
        self.clock = clock
        self.generated = self.recorded = 0

    def record(self, _record: SampleRecord) -> None:
        """The bench wrote an answer (RunOptions.on_record): its clock readings are all taken."""
        with self.requests.state:
            self.recorded += 1
            self.requests.state.notify_all()

    def _generate(self, req: GenRequest) -> Completion:
        self.requests.wait_for_puts(CALLS)
        with self.requests.state:
            ready = self.requests.state.wait_for(lambda: self.recorded == self.generated, timeout=30)
            assert ready, f"{self.recorded} of {self.generated} answers recorded"
            self.generated += 1
        self.clock.advance(DELAY_S)
        return Completion(text="Lima", completion_tokens=1)


def test_totals_split_latency_into_model_and_queue_time(tmp_path: Path) -> None:
    items = [
        Item(id=f"q{i}", gold=["Lima"], variants=[ItemVariant(id=0, question=f"Capital of Peru ({i})?")])
        for i in range(CALLS)
    ]
    data = save_items(items, tmp_path / "data.jsonl")
    clock = FakeClock()
    engine = SteppedEngine(clock)
    client = ModelClient(backend=engine, retries=0, timeout_s=30, clock=clock)
    out = tmp_path / "run"
    options = RunOptions(client=client, progress=False, concurrency=CALLS, on_record=engine.record)
    result = asyncio.run(run_bench(BenchConfig(dataset=str(data), arms=["raw"], model="local/smollm2"), out, options))
    records = sorted(result.records, key=lambda r: r.latency_s)
    # the k-th answer waited for the k before it, then took one generation
    assert [r.queue_s for r in records] == pytest.approx([0.0, 0.1, 0.2, 0.3], abs=1e-9)
    assert [r.model_s for r in records] == pytest.approx([DELAY_S] * CALLS, abs=1e-9)
    assert [r.latency_s for r in records] == pytest.approx([0.1, 0.2, 0.3, 0.4], abs=1e-9)
    totals = build_report(out, n_boot=20)["totals"]["raw"]
    assert totals["model_mean_s"] == pytest.approx(DELAY_S, abs=1e-9)
    assert totals["queue_mean_s"] == pytest.approx(1.5 * DELAY_S, abs=1e-9)  # (0 + 1 + 2 + 3) / 4 generations
    assert totals["latency_mean_s"] == pytest.approx(totals["model_mean_s"] + totals["queue_mean_s"], abs=1e-9)
    rows = [line for line in markdown_table(build_report(out, n_boot=20)).splitlines() if line.startswith("| raw |")]
    row = rows[-1]  # the totals table comes last
    assert "0.10 / 0.15" in row
