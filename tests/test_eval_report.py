"""Reports of a run directory: report.json, the Markdown table, and the self-contained HTML page."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from evaluation.datasets import save_items
from evaluation.records import Item, ItemVariant
from evaluation.report import FIGURES, TABLES, build_report, comparison_pairs, markdown_table, write_reports
from evaluation.runner import BenchConfig, RunOptions, run_bench
from selfpara.errors import ConfigError
from selfpara.models.client import ModelClient
from selfpara.testing import PARAPHRASE_MARKER, FakeBackend, last_user_text

ARMS = ["raw", "sc", "selfpara", "single_call", "rar"]


def responder(model: str, messages: list, params: dict) -> str:
    text = last_user_text(messages)
    if PARAPHRASE_MARKER in text:
        return "1. Say which one it is, friend\n2. I would really like to learn this"
    if text.startswith("Question:"):  # rar's rephrase call
        return "A clearer wording of the question?"
    seed = params.get("seed") or 0
    if "Peru" in text:
        return "Lima" if seed % 2 == 0 else "Cusco"
    if "Japan" in text:
        return "Tokyo"
    if "6 times 7" in text or "six" in text:
        return "42"
    return "I don't know"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("report")
    items = [
        Item(
            id="peru",
            gold=["Lima"],
            category="capitals",
            variants=[
                ItemVariant(id=0, question="What is the capital of Peru?"),
                ItemVariant(id=1, question="Which city is Peru's capital?"),
                ItemVariant(id=2, question="Name the capital of Peru."),
            ],
        ),
        Item(
            id="japan",
            gold=["Tokyo"],
            category="capitals",
            variants=[
                ItemVariant(id=0, question="What is the capital of Japan?"),
                ItemVariant(id=1, question="Tell me the capital of nippon."),
            ],
        ),
        Item(
            id="mult",
            kind="math",
            gold=["42"],
            category="arithmetic",
            variants=[
                ItemVariant(id=0, question="What is 6 times 7?"),
                ItemVariant(id=1, question="Multiply six by seven."),
            ],
        ),
    ]
    data = save_items(items, tmp / "data.jsonl")
    out = tmp / "run"
    client = ModelClient(backend=FakeBackend(responder), retries=0, timeout_s=5)
    asyncio.run(
        run_bench(BenchConfig(dataset=str(data), arms=ARMS, k=2), out, RunOptions(client=client, progress=False))
    )
    return out


def test_report_json_has_tables_pairs_totals_and_config(run_dir: Path) -> None:
    report = write_reports(run_dir, n_boot=200)
    saved = json.loads((run_dir / "report.json").read_text())
    assert saved["arms"] == ARMS == report["arms"]
    assert saved["pairs"] == [["selfpara", b] for b in ("raw", "sc", "single_call", "rar")]
    metrics = saved["metrics"]
    for arm in ARMS:
        for m in ("A_orig", "A_exp", "A_any", "A_strict", "mismatch", "flip_cw", "ND", "cons_exact", "cons_rouge1"):
            est = metrics["groups"][arm][m]
            assert set(est) >= {"value", "lo", "hi", "n"}
    assert {(c["a"], c["b"]) for c in metrics["comparisons"]} == {tuple(p) for p in saved["pairs"]}
    totals = saved["totals"]
    assert totals["raw"]["calls"] == 7 and totals["raw"]["calls_per_answer"] == 1
    assert totals["sc"]["calls"] == 7 * 3 and totals["rar"]["calls"] == 14
    assert saved["config"]["bench"]["k"] == 2 and saved["summary"]["complete"] is True
    assert saved["summary"]["samples"] == 7 * 5
    assert saved["diagnostics"]["selfpara"]["mean_k_kept"] >= 0 and "sc" in saved["diagnostics"]
    assert set(saved["categories"]) == {"capitals", "arithmetic"}
    # A_orig of raw by hand: Peru correct (seedless greedy -> Lima), Japan correct, 6x7 correct
    assert metrics["groups"]["raw"]["A_orig"]["value"] == pytest.approx(1.0)


def test_markdown_table_shows_every_arm_metric_difference_and_total(run_dir: Path) -> None:
    report = build_report(run_dir, n_boot=100)
    md = markdown_table(report)
    header = next(line for line in md.splitlines() if line.startswith("| metric |"))
    assert all(arm in header for arm in ARMS)
    for title in ("A_orig", "A_exp", "A_any", "A_strict", "C→W flips", "Cons(exact)"):
        assert f"| {title} |" in md
    assert "selfpara − raw" in md and "selfpara − rar" in md
    assert re.search(r"\| sc \| 7 \(0\) \| 21 \| 3\.00 \|", md)  # answers (errors), calls, calls / answer
    assert "| arm | answers | attempted | not attempted |" in md


def test_html_is_self_contained_and_holds_every_figure_and_table(run_dir: Path) -> None:
    write_reports(run_dir, n_boot=100)
    page = (run_dir / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>")
    for fig_id in FIGURES:
        assert f'<figure id="{fig_id}">' in page and f'<svg id="{fig_id}-svg"' in page
    for table_id in TABLES:
        assert f'<table id="{table_id}">' in page
    assert page.count("<svg") == len(FIGURES)
    # no scripts, no external resources: it opens offline and from an email attachment
    assert "<script" not in page and "<link" not in page
    assert not re.search(r'(src|href)="https?://', page)
    # every arm appears in the legend of the bar charts and in the tables
    for arm in ARMS:
        assert f">{arm}<" in page
    # the bars carry their values with CIs as tooltips
    assert re.search(r"<title>raw A_orig: 1\.000 \[", page)


def test_incomplete_runs_say_so(run_dir: Path, tmp_path: Path) -> None:
    import shutil

    partial = tmp_path / "partial"
    shutil.copytree(run_dir, partial)
    rows = (partial / "samples.jsonl").read_text().splitlines()
    (partial / "samples.jsonl").write_text("\n".join(rows[:-4]) + "\n")
    report = write_reports(partial, n_boot=50)
    assert report["summary"]["complete"] is False
    assert "incomplete" in markdown_table(report)
    assert "Incomplete run" in (partial / "report.html").read_text()
    # arms are compared on the questions every arm answered in full
    last = {json.loads(r)["item_id"] for r in rows[-4:]}
    assert report["summary"]["items_left_out"] == len(last)
    assert report["summary"]["samples_reported"] < report["summary"]["samples"] == len(rows) - 4
    assert set(report["metrics"]["questions"].values()) == {3 - len(last)}
    assert any("unfinished run" in n for n in report["metrics"]["notes"])
    everything = build_report(partial, n_boot=50, complete_only=False)
    assert everything["summary"]["samples_reported"] == len(rows) - 4


def test_paraphrases_only_and_no_consistency(run_dir: Path) -> None:
    report = build_report(run_dir, n_boot=50, include_original=False, consistency="none")
    assert report["metrics"]["include_original"] is False
    assert not [m for m in report["metrics"]["metrics"] if m.startswith("cons_")]


def test_comparison_pairs() -> None:
    arms = [
        {"arm": "raw", "label": "raw"},
        {"arm": "selfpara", "label": "selfpara"},
        {"arm": "selfpara", "label": "selfpara[k=5]"},
        {"arm": "sc", "label": "sc"},
    ]
    assert comparison_pairs(arms) == [
        ("selfpara", "raw"),
        ("selfpara", "sc"),
        ("selfpara[k=5]", "raw"),
        ("selfpara[k=5]", "sc"),
    ]
    assert comparison_pairs(arms[:1] + arms[3:]) == [("raw", "sc")]


def test_reporting_a_missing_or_empty_run_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such run directory"):
        build_report(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="not a run directory"):
        build_report(tmp_path / "empty")
