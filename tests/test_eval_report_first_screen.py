"""What a reader sees first and reads across the HTML report: one sentence with the answer, one
colour per arm in every figure, tables that wrap instead of scrolling, a risk–coverage axis
fitted to the data, one definition of the paraphrases kept."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from evaluation.datasets import save_items
from evaluation.records import Item, ItemVariant, SampleRecord
from evaluation.report import build_report, markdown_table, write_reports
from evaluation.report.headline import headline
from evaluation.report.plots import arm_colors, figures, fitted_axis, risk_coverage_chart
from evaluation.runner import BenchConfig, RunOptions, run_bench
from selfpara.models.client import ModelClient
from selfpara.testing import PARAPHRASE_MARKER, FakeBackend, last_user_text

ARMS = ["raw", "sc", "selfpara", "oracle"]


def responder(model: str, messages: list, params: dict) -> str:
    text = last_user_text(messages)
    if PARAPHRASE_MARKER in text:
        return "1. Say which city it is, friend\n2. I would really like to learn this"
    if "Peru" in text:
        return "Lima" if "capital of Peru" in text or (params.get("seed") or 0) % 2 == 0 else "Cusco"
    return "Tokyo" if "Japan" in text or "nippon" in text else "I don't know"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("first-screen")
    items = [
        Item(
            id=f"{country.lower()}-{i}",
            gold=[city],
            variants=[ItemVariant(id=j, question=q.format(country)) for j, q in enumerate(wordings)],
        )
        for i in range(3)
        for country, city, wordings in (
            ("Peru", "Lima", ("What is the capital of {}?", "Which city is {}'s seat of government?")),
            ("Japan", "Tokyo", ("What is the capital of {}?", "Tell me the capital of nippon.")),
        )
    ]
    out = tmp / "run"
    client = ModelClient(backend=FakeBackend(responder), retries=0, timeout_s=5)
    config = BenchConfig(dataset=str(save_items(items, tmp / "data.jsonl")), arms=ARMS, k=2)
    asyncio.run(run_bench(config, out, RunOptions(client=client, progress=False)))
    write_reports(out, n_boot=200)
    return out


def test_the_first_screen_says_what_selfpara_gained_and_its_share_of_the_oracles_gain(run_dir: Path) -> None:
    page = (run_dir / "report.html").read_text()
    body = page.split("<body>", 1)[1]
    first = re.findall(r"<(h1|p|table|figure)\b[^>]*>", body)[:2]
    assert (
        first == ["h1", "p"] and '<p class="headline" id="headline">On 6 questions, selfpara changed A_strict' in body
    )
    report = build_report(run_dir, n_boot=200)
    said = headline(report)
    assert said is not None and "over raw" in said and "the oracle" in said
    assert re.search(r"by [+-]\d\.\d{3} \[[+-]\d\.\d{3}, [+-]\d\.\d{3}\] over raw", said)  # the gain with its CI
    assert said in markdown_table(report) and said in (run_dir / "report.md").read_text()


def efficiency_report(**entry: Any) -> dict[str, Any]:
    arms = [{"label": a, "arm": a} for a in ("raw", "selfpara", "oracle")]
    return {"config": {"arms": arms}, "arms": [a["label"] for a in arms], "efficiency": [entry]}


def test_the_sentence_names_the_share_of_the_ceiling_or_why_there_is_none() -> None:
    common = {"selfpara": "selfpara", "oracle": "oracle", "raw": "raw", "questions": 80}
    strict = {"A_strict": {"raw": 0.5, "selfpara": 0.55, "oracle": 0.6}}
    gains = {
        "selfpara_gain": {"value": 0.05, "lo": 0.0125, "hi": 0.0876},
        "oracle_gain": {"value": 0.1, "lo": 0.05, "hi": 0.15},
    }
    said = headline(efficiency_report(**common, **strict, **gains, efficiency=0.5, lo=0.2, hi=0.8, note=""))
    assert said == (
        "On 80 questions, selfpara changed A_strict (right under every wording) by +0.050 [+0.013, +0.088] over "
        "raw (0.550 against 0.500); the oracle, voting with the dataset's own wordings, by +0.100 [+0.050, +0.150], "
        "so selfpara reached 50% [20%, 80%] of the oracle's gain."
    )
    flat = {**gains, "oracle_gain": {"value": 0.0, "lo": -0.02, "hi": 0.02}}
    undefined = headline(efficiency_report(**common, **strict, **flat, efficiency=None, note="undefined"))
    assert undefined is not None and undefined.endswith("so selfpara's share of its gain is undefined.")


def test_every_figure_draws_an_arm_in_its_one_colour(run_dir: Path) -> None:
    report = build_report(run_dir, n_boot=200)
    colours = arm_colors(report)
    assert len(set(colours.values())) == len(ARMS)
    seen: dict[str, set[str]] = {arm: set() for arm in ARMS}
    for svg in figures(report).values():
        for colour, title in re.findall(r'(?:fill|stroke)="(#[0-9A-Fa-f]{6})"[^>]*><title>([^<]*)</title>', svg):
            arm = max((a for a in ARMS if title.startswith(a)), key=len, default=None)
            if arm is not None:
                seen[arm].add(colour)
    assert all(seen[arm] == {colours[arm]} for arm in ARMS), seen


def test_tables_wrap_instead_of_scrolling(run_dir: Path) -> None:
    style = (run_dir / "report.html").read_text().split("<style>", 1)[1].split("</style>", 1)[0]
    assert "overflow-x" not in style and "nowrap" not in style  # no scrollbar hides a CI or a column
    assert re.search(r"th,td\{[^}]*overflow-wrap:anywhere", style)  # a long arm label breaks, not the page


def test_the_risk_coverage_axis_is_fitted_to_the_accuracies() -> None:
    curves = [("sc", [(0.5, 0.96), (1.0, 0.94)]), ("selfpara", [(0.5, 0.97), (1.0, 0.95)])]
    svg = risk_coverage_chart("fig", curves)
    ys = {title: float(cy) for cy, title in re.findall(r'cy="([\d.]+)"[^>]*><title>([^<]*)</title>', svg)}
    assert ys["sc: accuracy 0.940 at 100% coverage"] - ys["sc: accuracy 0.960 at 50% coverage"] > 30  # pixels apart
    low, high, _ = fitted_axis([0.94, 0.96, 0.95, 0.97])
    assert 0.8 <= low < 0.94 and high >= 0.97 and "(axis fitted)" in svg
    assert fitted_axis([0.0, 1.0]) == (0.0, 1.0, 0.2)


def test_mean_kept_is_one_figure_in_every_table() -> None:
    from evaluation.report.data import _diagnostics
    from evaluation.report.supply import kept_distribution

    details = {"k_kept": 1, "clusters": [0, 0], "vote_share": 1.0, "evidence": {"skipped_paraphrases": ["a", "b"]}}
    records = [
        SampleRecord(item_id=f"q{i}", variant_id=0, is_original=True, arm="selfpara", answer="x", label="correct")
        for i in range(2)
    ]
    records[0].details = dict(details)
    records[1].details = {**details, "k_kept": 2, "evidence": {"skipped_paraphrases": []}}
    diagnostics = _diagnostics(records, ["selfpara"])["selfpara"]
    assert diagnostics["mean_k_kept"] == kept_distribution(records)["mean"] == 2.5  # (1 + 2) and (2 + 0)
    assert diagnostics["mean_k_answered"] == 1.5


def test_warnings_are_one_line_each_kind_and_the_numbers_follow_at_once(run_dir: Path) -> None:
    from evaluation.report.page import render_html
    from evaluation.report.warnings import abstention_warnings, judge_warnings

    # a four-arm run of a small self-judging model that abstains a lot: one warning per kind, naming the arms
    arms = [{"label": a, "arm": a, "config": {"model": "openai/qwen2.5-1.5b", "equivalence": "auto"}} for a in ARMS]
    (judge,) = judge_warnings(arms, [])
    assert judge.startswith("arms raw, sc, selfpara, oracle: the answer judge is the model under test")
    share = {"answers": 10, "not_attempted": 4}
    (abstained,) = abstention_warnings({arm: share for arm in ARMS})
    assert abstained.count("4 of 10 answers (40%)") == 4 and abstained.startswith("arms raw, sc, selfpara, oracle")
    report = build_report(run_dir, n_boot=200)
    report["warnings"] = [judge, abstained, "small sample: 6 question(s)"]
    body = render_html(report).split("<body>", 1)[1]
    # the headline, the run, the warnings as one list of one item each, then the first figure and its table
    order = re.findall(r'<(h1|p class="headline"|p class="meta"|ul class="warn"|figure|table)[\s>]', body)
    assert order[:6] == ["h1", 'p class="headline"', 'p class="meta"', 'ul class="warn"', "figure", "table"]
    listed = body.split('<ul class="warn"', 1)[1].split("</ul>", 1)[0]
    assert listed.count("<li>") == 3 and "Warning:" not in body
    # the long note on the intervals is read after the metrics, not before the first figure
    assert body.index("Values are fractions") > body.index('<table id="tbl-metrics"')
