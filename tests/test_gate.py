"""Fitting doubt first's threshold on a labelled run (`selfpara calibrate --gate`, `evaluation.gate`)."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evaluation.datasets import save_items
from evaluation.gate import fit_gate, gate_point, pairs_of
from evaluation.records import Item, ItemVariant
from evaluation.rundir import SAMPLES_FILE, latest_records, read_samples
from evaluation.runner import BenchConfig, RunOptions, run_bench
from selfpara.cli import app
from selfpara.config import config_from_file
from selfpara.errors import ConfigError
from selfpara.models.client import ModelClient
from selfpara.pipeline.prompts import JUDGE_MARKER, PARAPHRASE_MARKER
from selfpara.result import Completion
from selfpara.testing import FakeBackend, default_responder, last_user_text

ARM = "selfpara[renamings=false;equivalence=exact]"


def respond(model: str, messages: list, params: dict) -> Any:
    """Land{i}: an even i's original is sure (p = 0.95) and right; an odd i's in doubt (p = 0.5) and wrong,
    and its three verified rewordings answer right, so the vote corrects it at four calls more."""
    text = last_user_text(messages)
    if PARAPHRASE_MARKER in text or JUDGE_MARKER in text:
        return default_responder()(model, messages, params)
    i = int(text.split("Land", 1)[1].split("?")[0].split()[0])
    if text == f"What is the capital of Land{i}?":
        return Completion(text="Paris" if i % 2 == 0 else "Lyon", logprob=math.log(0.95 if i % 2 == 0 else 0.5))
    return Completion(text="Paris", logprob=-0.01)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("gate")
    items = [
        Item(
            id=f"land-{i:02d}",
            gold=["Paris"],
            variants=[ItemVariant(id=0, question=f"What is the capital of Land{i}?")],
        )
        for i in range(20)
    ]
    data = save_items(items, tmp / "items.jsonl")
    client = ModelClient(backend=FakeBackend(respond), retries=0, timeout_s=5)
    config = BenchConfig(
        dataset=str(data), model="openai/fake", arms=["raw", ARM], k=3, limit=None, answers="natural", max_tokens=32
    )
    result = asyncio.run(run_bench(config, tmp / "run", RunOptions(client=client, progress=False)))
    assert result.complete and not result.failed
    return result.out


def test_the_curve_trades_votes_for_calls(run: Path) -> None:
    pairs = pairs_of(latest_records(read_samples(run / SAMPLES_FILE)), ARM)
    always, gated, never = gate_point(pairs, None), gate_point(pairs, 0.9), gate_point(pairs, 0.0)
    assert always.voted == 1.0 and always.a_orig == 1.0 and always.gained == 10 and always.lost == 0
    # the sure half keeps its own right answer at one call; the doubtful half is still voted and corrected
    assert gated.voted == 0.5 and gated.a_orig == 1.0 and gated.gained == 10
    assert never.voted == 0.0 and never.a_orig == 0.5 and never.calls == 1.0
    assert never.calls < gated.calls < always.calls


def test_fit_chooses_the_highest_threshold_within_the_budget_and_checks_it(run: Path) -> None:
    always = gate_point(pairs_of(latest_records(read_samples(run / SAMPLES_FILE)), ARM), None).calls
    fit = fit_gate(run, arm=ARM, budget=always - 0.1, measure="calls")  # just short of voting on everything
    assert fit.chosen is not None and 0.5 < fit.chosen.threshold <= 0.95  # the doubtful half voted, the sure not
    assert fit.chosen.a_orig == 1.0 and fit.check is not None and fit.check.a_orig == 1.0
    assert fit.questions_choose == fit.questions_check == 10
    free = fit_gate(run, arm=ARM, budget=1.0, measure="calls").chosen  # at raw's cost: a threshold that never votes
    assert free is not None and free.voted == 0.0 and free.calls == 1.0


def test_calibrate_gate_writes_a_settings_file_the_library_reads(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "gate.toml"
    result = CliRunner().invoke(
        app, ["calibrate", str(run), "--arm", ARM, "--gate", "--budget", "7.5", "--cost", "calls", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "sure_probability 0.9" in result.output and "held out:" in result.output
    config = config_from_file(out)
    assert 0.9 <= (config.sure_probability or 0) <= 0.95 and config.model == "openai/fake"
    args = ["calibrate", str(run), "--arm", ARM, "--gate", "--budget", "7.5", "--cost", "calls", "--json"]
    as_json = CliRunner().invoke(app, args)
    assert json.loads(as_json.stdout)["chosen"]["threshold"] == config.sure_probability


def test_a_run_without_a_raw_arm_or_with_a_gated_arm_is_refused(run: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="arm 'selfpara'"):
        fit_gate(run, arm="selfpara")
    bad = CliRunner().invoke(app, ["calibrate", str(run), "--arm", ARM, "--gate", "--cost", "minutes"])
    assert bad.exit_code == 2 and "model-seconds or calls" in bad.output
