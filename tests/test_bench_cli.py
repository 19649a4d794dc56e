"""`selfpara bench` and `selfpara report` through the real CLI (typer's CliRunner).

Runs that need a model are made through the Python API with a fake backend; the CLI
is then exercised on them (report, config mismatch). One test, marked `model`, runs
`selfpara bench` on the embedded model end to end.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evaluation.datasets import save_items
from evaluation.records import Item, ItemVariant
from evaluation.runner import BenchConfig, RunOptions, run_bench
from selfpara.cli import app
from selfpara.models.client import ModelClient
from selfpara.testing import FakeBackend

runner = CliRunner()


def invoke(*args: str):  # noqa: ANN201
    return runner.invoke(app, list(args))


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    items = [
        Item(
            id=f"q{i}",
            gold=["Paris"],
            variants=[
                ItemVariant(id=0, question=f"What is the capital of France ({i})?"),
                ItemVariant(id=1, question=f"France's capital ({i}) is which city?"),
            ],
        )
        for i in range(3)
    ]
    return save_items(items, tmp_path / "data.jsonl")


@pytest.fixture
def fake_run(dataset: Path, tmp_path: Path) -> Path:
    out = tmp_path / "run"
    client = ModelClient(backend=FakeBackend(), retries=0, timeout_s=5)
    asyncio.run(
        run_bench(
            BenchConfig(dataset=str(dataset), arms=["raw", "selfpara"], k=2),
            out,
            RunOptions(client=client, progress=False),
        )
    )
    return out


def assert_clean_error(result, *fragments: str) -> None:  # noqa: ANN001
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    text = " ".join(result.output.split())
    for fragment in fragments:
        assert fragment in text, text


def test_report_rebuilds_the_reports_of_a_run(fake_run: Path) -> None:
    for name in ("report.json", "report.md", "report.html"):
        (fake_run / name).unlink(missing_ok=True)
    result = invoke("report", str(fake_run), "--n-boot", "50")
    assert result.exit_code == 0, result.output
    assert "| A_strict |" in result.output and "selfpara − raw" in result.output
    for name in ("report.json", "report.md", "report.html"):
        assert (fake_run / name).exists()
    as_json = invoke("report", str(fake_run), "--json", "--n-boot", "50", "--consistency", "none", "--paraphrases-only")
    assert as_json.exit_code == 0
    data = json.loads(as_json.output[: as_json.output.rindex("}") + 1])
    assert data["arms"] == ["raw", "selfpara"] and data["metrics"]["include_original"] is False


def test_bench_into_a_run_dir_of_another_config_fails_cleanly(fake_run: Path, dataset: Path) -> None:
    result = invoke(
        "bench",
        "--dataset",
        str(dataset),
        "--arms",
        "raw,selfpara",
        "--k",
        "5",
        "--out",
        str(fake_run),
        "--no-cache",
        "--quiet",
    )
    assert_clean_error(result, str(fake_run / "config.json"), "k: 2 -> 5", "--overwrite")


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["--dataset", "nosuchset"], ["unknown dataset 'nosuchset'"]),
        (["--dataset", "simpleqa", "--data-dir", "no-such-folder"], ["dataset 'simpleqa' needs its file"]),
    ],
)
def test_bad_bench_input_is_a_clean_error(args: list[str], fragments: list[str], tmp_path: Path) -> None:
    result = invoke("bench", *args, "--out", str(tmp_path / "runs" / "r"), "--no-cache", "--quiet")
    assert_clean_error(result, *fragments)
    assert not (tmp_path / "runs").exists()  # no empty run directory (nor its parent) left behind


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["--arms", "raw,bogus"], ["'--arms' / '-a'", "unknown arm 'bogus'", "raw, selfpara, sc, single_call, rar"]),
        (["--arms", "sc[temperature=0]"], ["'--arms' / '-a'", "temperature must be between 0.01 and 2"]),
        (["--variants", "generate:lots"], ["'--variants'", "generate:N"]),
        (["--grader", "vibes"], ["'--grader'", "unknown grader 'vibes'"]),
        (["--order", "sideways"], ["'--order'", "unknown order"]),
        (["--k", "0"], ["'--k' / '-k'", "greater than or equal to 1"]),
        (["--consistency", "bleu"], ["'--consistency'", "unknown consistency function"]),
        (["--answers", "long"], ["'--answers'", "'short', 'worked'"]),
    ],
)
def test_a_bad_bench_flag_is_exit_2_naming_the_flag(args: list[str], fragments: list[str], tmp_path: Path) -> None:
    result = invoke("bench", *args, "--out", str(tmp_path / "r"), "--no-cache", "--quiet")
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.replace("│", " ").split())
    for fragment in fragments:
        assert fragment in text, text
    assert not (tmp_path / "r").exists()  # refused before any work


def test_bad_data_file_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "gold": ["x"], "variants": [{"id": 0, "question": "Q?"}]}\n{oops\n')
    result = invoke("bench", "--dataset", str(bad), "--out", str(tmp_path / "r"), "--no-cache", "--quiet")
    assert_clean_error(result, f"{bad}:2:")


def test_report_on_bad_run_dirs_fails_cleanly(fake_run: Path, tmp_path: Path) -> None:
    assert_clean_error(invoke("report", str(tmp_path / "missing")), "no such run directory")
    rows = (fake_run / "samples.jsonl").read_text().splitlines()
    rows.insert(1, "{not json")
    (fake_run / "samples.jsonl").write_text("\n".join(rows) + "\n")
    assert_clean_error(invoke("report", str(fake_run)), f"{fake_run / 'samples.jsonl'}:2:")
    (fake_run / "config.json").write_text("{\n  nope")
    assert_clean_error(invoke("report", str(fake_run)), f"{fake_run / 'config.json'}:2:")


def test_help_lists_the_options() -> None:
    result = invoke("bench", "--help")
    assert result.exit_code == 0
    for option in (
        "--dataset",
        "--model",
        "--arms",
        "--k",
        "--variants",
        "--limit",
        "--out",
        "--concurrency",
        "--seed",
        "--overwrite",
    ):
        assert option in result.output


@pytest.mark.model
def test_bench_on_the_embedded_model_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = invoke(
        "bench",
        "--limit",
        "2",
        "--max-variants",
        "1",
        "--arms",
        "raw,selfpara",
        "--k",
        "1",
        "--max-tokens",
        "12",
        "--out",
        str(out),
        "--cache",
        str(tmp_path / "c.sqlite"),
        "--quiet",
        "--model",
        "local/smollm2",
    )
    assert result.exit_code == 0, result.output
    assert "| A_orig |" in result.output
    rows = [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and {r["arm"] for r in rows} == {"raw", "selfpara"}
    assert all(r["error"] is None and r["label"] in ("correct", "incorrect", "not_attempted") for r in rows)
    assert all(r["calls"] >= 1 for r in rows)
    report = json.loads((out / "report.json").read_text())
    assert report["summary"]["complete"] is True and report["config"]["bench"]["model"] == "local/smollm2"
    # a rerun resumes: nothing left to do, no model call
    again = invoke(
        "bench",
        "--limit",
        "2",
        "--max-variants",
        "1",
        "--arms",
        "raw,selfpara",
        "--k",
        "1",
        "--max-tokens",
        "12",
        "--out",
        str(out),
        "--cache",
        str(tmp_path / "c.sqlite"),
        "--model",
        "local/smollm2",
    )
    assert again.exit_code == 0 and "0 new samples (4 resumed), 0 model calls" in " ".join(again.output.split())


def test_without_arms_the_oracle_joins_where_the_dataset_has_other_wordings(dataset: Path, tmp_path: Path) -> None:
    from evaluation.variants import default_arms

    assert default_arms("sample", "data", 2) == ["raw", "selfpara", "oracle"]  # the built-in set: 4 wordings each
    assert default_arms(str(dataset), "data", None) == ["raw", "selfpara", "oracle"]
    assert default_arms(str(dataset), "data", 1) == ["raw", "selfpara"]  # one wording kept: nothing to vote with
    assert default_arms(str(dataset), "generate:3", None) == ["raw", "selfpara"]  # the model's own wordings
    single = [Item(id="q", gold=["x"], variants=[ItemVariant(id=0, question="What is x?")])]
    assert default_arms(str(save_items(single, tmp_path / "one.jsonl")), "data", None) == ["raw", "selfpara"]

    out = tmp_path / "run"
    args = ["bench", "--dataset", str(dataset), "--limit", "1", "--model", "nosuchprovider-x", "--no-cache", "-q"]
    invoke(*args, "--out", str(out))
    assert json.loads((out / "config.json").read_text())["bench"]["arms"] == ["raw", "selfpara", "oracle"]


def test_the_default_arms_on_the_built_in_set_report_selfparas_efficiency(tmp_path: Path) -> None:
    from evaluation.report import write_reports
    from evaluation.variants import default_arms

    arms = default_arms("sample", "data", 2)
    client = ModelClient(backend=FakeBackend(), retries=0, timeout_s=5)
    config = BenchConfig(dataset="sample", arms=arms, k=2, limit=3, max_variants=2)
    asyncio.run(run_bench(config, tmp_path / "run", RunOptions(client=client, progress=False)))
    report = write_reports(tmp_path / "run")
    assert [(e["selfpara"], e["oracle"], e["raw"]) for e in report["efficiency"]] == [("selfpara", "oracle", "raw")]
    assert "needs raw, selfpara and oracle arms" not in (tmp_path / "run" / "report.md").read_text()
