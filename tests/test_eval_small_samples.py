"""Intervals that are honest at small samples: a yes/no metric gets Wilson's interval, a metric
of another kind gets none below stats.MIN_BOOTSTRAP_QUESTIONS questions ("too few questions"),
so a 3-question run shows no zero-width interval."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluation import stats
from evaluation.metrics import compute_metrics
from evaluation.metrics.rows import LabelRow


def rows(n_questions: int, group: str, wrong: set[str] = frozenset()) -> list[LabelRow]:  # type: ignore[assignment]
    out = []
    for q in range(n_questions):
        for v in range(3):
            label = "incorrect" if f"q{q}:{v}" in wrong else "correct"
            out.append(LabelRow(f"q{q}", str(v), v == 0, label, answer="Paris", group=group))  # type: ignore[arg-type]
    return out


@pytest.mark.parametrize(
    "k, n, lo, hi",
    [(3, 3, 0.4385, 1.0), (0, 3, 0.0, 0.5615), (5, 10, 0.2366, 0.7634), (0, 0, None, None)],
)
def test_wilson_interval_matches_the_formula(k: int, n: int, lo: float | None, hi: float | None) -> None:
    got = stats.wilson_interval(k, n, 0.95)
    if lo is None:
        assert got is None
    else:
        assert got == pytest.approx((lo, hi), abs=1e-3)


def test_three_of_three_correct_is_no_zero_width_interval() -> None:
    table = compute_metrics(rows(3, "raw") + rows(3, "selfpara"), n_boot=200, consistency=["exact"])
    raw = table.groups["raw"]
    assert raw["A_orig"].value == 1.0 and raw["A_orig"].interval == "wilson"
    assert raw["A_orig"].lo == pytest.approx(0.4385, abs=1e-3) and raw["A_orig"].hi == 1.0
    assert raw["A_orig"].fmt() == "1.000 [0.439, 1.000]"
    # A_exp is a share per question, not one yes/no: no bootstrap from 3 questions
    assert raw["A_exp"].interval == "too_few" and raw["A_exp"].lo is None
    assert raw["A_exp"].fmt() == "1.000 (n=3: too few questions)"
    for group in table.groups.values():
        for estimate in group.values():
            assert estimate.lo is None or estimate.hi is None or estimate.hi > estimate.lo
    for comparison in table.comparisons:
        assert comparison.lo is None and comparison.hi is None
    assert any("too few for a CI of the differences" in note for note in table.notes)
    assert "| A_orig | raw − selfpara | +0.000 (n=3: too few questions) |" in table.to_markdown()


def test_enough_questions_keep_the_bootstrap_for_shares() -> None:
    wrong = {f"q{q}:1" for q in range(0, 30, 3)}
    table = compute_metrics(rows(30, "raw", wrong), n_boot=200, compare=None)
    a_exp = table.groups["raw"]["A_exp"]
    assert a_exp.interval == "bootstrap" and a_exp.lo is not None and a_exp.lo < a_exp.value < a_exp.hi  # type: ignore[operator]
    assert table.groups["raw"]["A_strict"].interval == "wilson"


def test_an_all_zero_chart_is_a_sentence_and_others_have_axis_titles() -> None:
    from evaluation.report.plots import bar_chart

    zeros = {("C→W", "raw"): (0.0, 0.0, 0.0), ("W→C", "raw"): (0.0, None, None)}
    empty = bar_chart("fig-flips", ["C→W", "W→C"], ["raw"], zeros, y_title="share of questions", empty="No flips.")
    assert "<svg" not in empty and "No flips." in empty
    some = {("C→W", "raw"): (0.25, 0.1, 0.4), ("W→C", "raw"): (0.0, 0.0, 0.1)}
    chart = bar_chart("fig-flips", ["C→W", "W→C"], ["raw"], some, y_title="share of questions", empty="No flips.")
    assert chart.startswith("<svg") and "share of questions</text>" in chart and "rotate(-90" in chart
    assert 'font-size="11" text-anchor="middle">0.25</text>' in chart  # value labels readable, not 9 px


def test_a_three_question_report_has_no_zero_width_interval(tmp_path: Path) -> None:
    import asyncio
    import re

    from evaluation.datasets import save_items
    from evaluation.records import Item, ItemVariant
    from evaluation.report import build_report, markdown_table, render_html
    from evaluation.runner import BenchConfig, RunOptions, run_bench
    from selfpara.models.client import ModelClient
    from selfpara.testing import FakeBackend

    items = [
        Item(id=f"q{i}", gold=["Lima"], variants=[ItemVariant(id=0, question=f"Capital of Peru ({i})?")])
        for i in range(3)
    ]
    data = save_items(items, tmp_path / "data.jsonl")
    client = ModelClient(backend=FakeBackend(lambda *a: "Lima"), retries=0, timeout_s=5)
    out = tmp_path / "run"
    asyncio.run(
        run_bench(
            BenchConfig(dataset=str(data), arms=["raw", "sc"], k=2), out, RunOptions(client=client, progress=False)
        )
    )
    report = build_report(out, n_boot=50)
    md = markdown_table(report)
    intervals = re.findall(r"\[(-?\d\.\d+), (-?\d\.\d+)\]", md + render_html(report))
    assert intervals and all(lo != hi for lo, hi in intervals), intervals
    assert "1.000 [0.439, 1.000]" in md and "too few questions" in md
