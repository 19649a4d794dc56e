"""Reports that cannot mislead: abstentions shown, significance only where CI and test agree,
small-n and self-judging warnings, cached answers out of latency figures."""

from __future__ import annotations

import asyncio
import copy
import re
from pathlib import Path

import pytest

from evaluation.cache import open_cache
from evaluation.datasets import save_items
from evaluation.metrics import PairedComparison
from evaluation.records import Item, ItemVariant, SampleRecord
from evaluation.report import build_report, markdown_table, render_html, write_reports
from evaluation.report.data import significance
from evaluation.report.markdown import markdown_report
from evaluation.report.warnings import format_warnings, is_small_or_local, judge_warnings
from evaluation.runner import BenchConfig, RunOptions, run_bench
from selfpara.models.client import ModelClient
from selfpara.testing import PARAPHRASE_MARKER, FakeBackend, last_user_text


def _items(n: int) -> list[Item]:
    return [
        Item(
            id=f"q{i}",
            gold=["Lima"],
            variants=[
                ItemVariant(id=0, question=f"What is the capital of Peru ({i})?"),
                ItemVariant(id=1, question=f"Which city is Peru's capital ({i})?"),
            ],
        )
        for i in range(n)
    ]


def _run(tmp: Path, responder, *, arms=("raw", "selfpara"), n: int = 3, cache=None, name: str = "run") -> Path:
    data = save_items(_items(n), tmp / f"{name}.jsonl")
    out = tmp / name
    client = ModelClient(backend=FakeBackend(responder), retries=0, timeout_s=5)
    asyncio.run(
        run_bench(
            BenchConfig(dataset=str(data), arms=list(arms), k=2),
            out,
            RunOptions(client=client, progress=False, cache=cache),
        )
    )
    return out


def _abstainer(model: str, messages: list, params: dict) -> str:
    if PARAPHRASE_MARKER in last_user_text(messages):
        return "1. Tell me which city is the capital of Peru\n2. Name Peru's capital city please"
    return "I don't know"


def test_html_and_markdown_show_abstentions(tmp_path: Path) -> None:
    """An all-"I don't know" run must not read as plain 0 accuracy: answered / not attempted are shown."""
    out = _run(tmp_path, _abstainer)
    report = write_reports(out, n_boot=50)
    assert report["abstention"]["raw"]["not_attempted"] == 6 and report["abstention"]["raw"]["attempted"] == 0
    page = (out / "report.html").read_text()
    table = re.search(r'<table id="tbl-abstention">(.*?)</table>', page, re.S)
    assert table, "the abstention table is missing from the HTML"
    assert re.search(r"<td>raw</td><td>6</td><td>0</td><td>6</td><td>0%</td>", table.group(1))
    # one warning for both arms, one line: "arms raw, selfpara each did not attempt ...: raw 6 of 6 answers ..."
    (abstained,) = [w for w in report["warnings"] if "did not attempt" in w]
    assert abstained.startswith("arms raw, selfpara") and "raw 6 of 6 answers (100%)" in abstained
    assert abstained in page
    md = (out / "report.md").read_text()
    assert "| raw | 6 | 0 | 6 | 0% |" in md and abstained in md
    assert "small sample: 3 question(s)" in page and "small sample" in md


def _cmp(diff: float, lo: float, hi: float, p: float | None) -> PairedComparison:
    return PairedComparison(
        metric="A_exp",
        a="selfpara",
        b="raw",
        value_a=None,
        value_b=None,
        diff=diff,
        lo=lo,
        hi=hi,
        p_value=p,
        test="permutation" if p is not None else "none",
        n=40,
    )


def test_significance_needs_the_ci_and_the_test() -> None:
    assert significance(_cmp(0.2, 0.05, 0.35, 0.01), True) == "good"
    assert significance(_cmp(0.2, 0.05, 0.35, 0.01), False) == "bad"
    assert significance(_cmp(-0.2, -0.35, -0.05, 0.01), True) == "bad"
    assert significance(_cmp(0.2, 0.05, 0.35, 0.25), True) == "mixed"  # CI clears 0, p does not
    assert significance(_cmp(0.2, -0.05, 0.35, 0.01), True) == "mixed"  # p does, CI does not
    assert significance(_cmp(0.2, 0.05, 0.35, None), True) == "mixed"  # no test: never marked
    assert significance(_cmp(0.0, -0.1, 0.1, 0.9), True) == ""


def test_a_ci_clearing_zero_with_p_above_alpha_is_not_marked(tmp_path: Path) -> None:
    out = _run(tmp_path, _abstainer)
    report = build_report(out, n_boot=50)
    fake = copy.deepcopy(report)
    for c in fake["metrics"]["comparisons"]:
        if c["metric"] == "A_exp":
            c.update(diff=0.3, lo=0.1, hi=0.5, p_value=0.25)
    page = render_html(fake)
    row = re.search(r"<tr><td>A_exp</td>(.*?)</tr>", page.split('id="tbl-comparisons"')[1]).group(1)
    assert 'class="good"' not in row and "CI and test disagree" in row
    assert "▲" not in markdown_table(fake).split("A_exp |")[2].splitlines()[0]
    for c in fake["metrics"]["comparisons"]:
        if c["metric"] == "A_exp":
            c.update(p_value=0.01)
    row = re.search(r"<tr><td>A_exp</td>(.*?)</tr>", render_html(fake).split('id="tbl-comparisons"')[1]).group(1)
    assert 'class="good"' in row
    assert "**▲**" in markdown_report(fake)


def _echo(model: str, messages: list, params: dict) -> str:
    if PARAPHRASE_MARKER in last_user_text(messages):
        return "1. Tell me which city is the capital of Peru\n2. Name Peru's capital city please"
    return "Lima"


def test_cached_answers_are_flagged_and_left_out_of_latency(tmp_path: Path) -> None:
    cache = open_cache(tmp_path / "calls.sqlite")
    first = _run(tmp_path, _echo, cache=cache, name="first")
    second = _run(tmp_path, _echo, cache=cache, name="second")
    fresh, cached = build_report(first, n_boot=20), build_report(second, n_boot=20)
    t = fresh["totals"]["raw"]
    assert t["cached_samples"] == 0 and t["latency_samples"] == t["samples"] == 6
    assert t["latency_p50_s"] is not None
    t = cached["totals"]["raw"]
    assert t["cached_samples"] == 6 and t["latency_samples"] == 0 and t["latency_p50_s"] is None
    assert cached["totals"]["selfpara"]["cached_calls"] > 0
    (note,) = [w for w in cached["warnings"] if "call cache" in w]  # one line, however many arms
    assert "raw 6/6" in note and re.search(r"selfpara \d+/6", note)
    md = markdown_report(cached)
    # answers (errors), calls, calls/answer ... timed answers (cached), latency, model / queued
    assert re.search(r"\| raw \| 6 \(0\) \| 6 \| 1\.00 \|[^\n]*\| 0 \(6\) \| – \(–, –\) \| – / – \|", md)


def test_judge_warning_for_a_small_self_judging_model() -> None:
    arm = {
        "arm": "selfpara",
        "label": "selfpara",
        "config": {"model": "openai/qwen2.5-1.5b-instruct", "equivalence": "exact,numeric,llm", "judge_model": None},
    }
    assert judge_warnings([arm], []) and "judge is the model under test" in judge_warnings([arm], [])[0]
    strong = {**arm, "config": {**arm["config"], "judge_model": "openai/gpt-4o"}}
    assert judge_warnings([strong], []) == []
    no_llm = {**arm, "config": {**arm["config"], "equivalence": "exact,numeric,contains"}}
    assert judge_warnings([no_llm], []) == []
    sc = {
        "arm": "sc",
        "label": "sc",
        "model": "openai/big-model",
        "settings": {"equivalence": "auto"},
        "api_base": "http://127.0.0.1:8080/v1",
    }
    assert judge_warnings([sc], [])  # local server
    flagged = SampleRecord(
        item_id="q",
        variant_id=0,
        is_original=True,
        arm="sc",
        answer="x",
        label="correct",
        details={"flags": ["judge_is_model_under_test"]},
    )
    hosted = {**sc, "api_base": None, "settings": {"equivalence": "exact"}}
    assert judge_warnings([hosted], [flagged])


@pytest.mark.parametrize(
    ("model", "api_base", "expected"),
    [
        ("local/smollm2", None, True),
        ("openai/Qwen2.5-Coder-1.5B-Instruct", None, True),
        ("hosted_vllm/llama-3-8b", None, True),
        ("openai/llama-3-70b", None, False),
        ("openai/gpt-4o", None, False),
        ("openai/gpt-4o", "http://localhost:8000/v1", True),
        ("smollm2-135m", None, True),
    ],
)
def test_small_or_local(model: str, api_base: str | None, expected: bool) -> None:
    assert is_small_or_local(model, api_base) is expected


def _direct(model: str, messages: list, params: dict) -> str:
    """A model that ignores the single-call format and answers straight away."""
    return "Lima"


def _formatted(model: str, messages: list, params: dict) -> str:
    return "1. Which city is the capital of Peru?\n2. Name Peru's capital.\nFinal answer: Lima"


def test_single_call_replies_without_their_final_line_are_flagged(tmp_path: Path) -> None:
    """A single_call arm whose model skipped the rewordings measured raw prompting: the report says so."""
    direct = build_report(_run(tmp_path, _direct, arms=("raw", "single_call"), name="direct"), n_boot=50)
    flagged = [w for w in direct["warnings"] if w.startswith("arm single_call:")]
    assert len(flagged) == 1 and "0 of 6 replies (0%)" in flagged[0]
    assert "6 of them a one-line answer with no rewordings" in flagged[0] and "raw prompting" in flagged[0]
    formatted = build_report(_run(tmp_path, _formatted, arms=("raw", "single_call"), name="fmt"), n_boot=50)
    assert not [w for w in formatted["warnings"] if w.startswith("arm single_call:")]
    assert formatted["metrics"]["groups"]["single_call"]["A_orig"]["value"] == 1.0


def test_rar_rewrites_cut_at_their_limit_are_counted() -> None:
    records = [
        SampleRecord(
            item_id=f"q{i}",
            variant_id=0,
            is_original=True,
            arm="rar",
            answer="Lima",
            label="correct",
            details={"rephrased": "…", "rephrase_finish": "length" if i < 2 else "stop"},
        )
        for i in range(5)
    ]
    assert format_warnings(records) == ["arm rar: 2 of 5 rewrites were cut at their token limit (rephrase_max_tokens)"]


def test_single_call_replies_of_rewordings_only_are_not_called_raw_prompting() -> None:
    records = [
        SampleRecord(
            item_id=f"q{i}",
            variant_id=0,
            is_original=True,
            arm="single_call",
            answer="Name Peru's capital.",
            label="incorrect",
            details={"final_line_found": False, "reply": "1. Which city is Peru's capital?\n2. Name Peru's capital."},
        )
        for i in range(3)
    ]
    (warning,) = format_warnings(records)
    assert "0 of 3 replies" in warning and "0 of them a one-line answer" in warning
    assert "raw prompting" not in warning
