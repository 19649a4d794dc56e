"""`selfpara metrics FILE` end to end: through typer's CliRunner and once as the installed console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from selfpara.cli import app

FIX = Path(__file__).parent / "fixtures"
LABELS = FIX / "eval_labels.csv"
runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, ["metrics", *map(str, args)])


def said(message: str, stream: str) -> bool:
    """Whether `message` is in `stream`, ignoring where the console wrapped lines."""
    return "".join(message.split()) in "".join(stream.replace("│", " ").split())  # rich boxes usage errors


def test_table_output_for_two_arms():
    result = run(LABELS, "--n-boot", "200")
    assert result.exit_code == 0, result.output
    out = result.stdout
    for word in ("A_orig", "A_strict", "C→W flips", "Cons(exact)", "raw", "selfpara", "paired comparison"):
        assert word in out, word
    assert "0.500 [" in out  # raw A_orig with its CI


def test_json_has_hand_computed_values_and_a_comparison():
    result = run(LABELS, "--json", "--n-boot", "200", "--seed", "3")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    raw = data["groups"]["raw"]
    # hand-computed in tests/test_eval_metrics.py (FOUR): the same four questions
    assert raw["A_orig"]["value"] == 0.5 and raw["A_orig"]["n"] == 4
    assert raw["A_exp"]["value"] == pytest.approx(0.5) and raw["A_exp"]["n"] == 3
    assert raw["A_any"]["value"] == 0.75 and raw["A_strict"]["value"] == 0.25
    assert raw["mismatch"]["value"] == pytest.approx(2 / 3)
    assert raw["flip_wc"]["value"] == 0.5 and raw["flip_wc"]["n"] == 2
    # consistency, exact: q1 [Paris, Paris., Lyon] = 1/3, q2 [7, 12, 12] = 1/3, q3 = 0; q4 has one answer
    assert raw["cons_exact"]["value"] == pytest.approx((1 / 3 + 1 / 3 + 0) / 3)
    sp = data["groups"]["selfpara"]
    assert sp["A_strict"]["value"] == 0.75
    comps = {c["metric"]: c for c in data["comparisons"]}
    assert comps["A_strict"]["a"] == "raw" and comps["A_strict"]["b"] == "selfpara"
    assert comps["A_strict"]["diff"] == pytest.approx(-0.5)
    assert comps["A_strict"]["test"] == "mcnemar-exact" and comps["A_strict"]["discordant"] == [0, 2]
    assert comps["A_strict"]["p_value"] == pytest.approx(0.5)
    assert data["include_original"] is True and data["n_boot"] == 200 and data["seed"] == 3
    assert run(LABELS, "--json", "--n-boot", "200", "--seed", "3").stdout == result.stdout  # seeded


def test_exclude_original_and_one_group():
    data = json.loads(run(LABELS, "--json", "--exclude-original", "--n-boot", "50").stdout)
    assert data["include_original"] is False
    # raw: q1 [C, I] -> any 1, q2 [C, C] -> any 1 strict 1, q3 [I, N] -> 0, q4 has no paraphrase
    assert data["groups"]["raw"]["A_any"]["value"] == pytest.approx(2 / 3)
    assert data["groups"]["raw"]["A_strict"]["value"] == pytest.approx(1 / 3)
    assert data["groups"]["raw"]["A_any"]["n"] == 3
    custom = FIX / "eval_labels_custom.jsonl"
    cols = ["--question-col", "qid", "--variant-col", "para", "--original-col", "orig", "--label-col", "grade"]
    data = json.loads(run(custom, *cols, "--group-col", "none", "--json", "--n-boot", "50").stdout)
    assert list(data["groups"]) == ["all"] and data["comparisons"] == []


def test_wrong_group_set_is_a_clean_error():
    # without grouping, q1..q4 appear in both arms: their variants repeat
    result = run(LABELS, "--group-col", "none", "--n-boot", "50")
    assert result.exit_code == 1
    assert said("eval_labels.csv:12:", result.stderr) and said("appears twice", result.stderr)


def test_custom_columns_label_spellings_and_compare_option():
    args = [
        FIX / "eval_labels_custom.jsonl",
        "--question-col",
        "qid",
        "--variant-col",
        "para",
        "--original-col",
        "orig",
        "--label-col",
        "grade",
        "--answer-col",
        "text",
        "--consistency",
        "exact,rouge1@0.4",
        "--consistency-mode",
        "both",
        "--json",
        "--n-boot",
        "50",
    ]
    result = run(*args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    m1 = data["groups"]["m1"]  # grouped by the auto-detected 'model' column
    assert m1["A_orig"]["value"] == 0.5 and m1["A_exp"]["value"] == 0.5
    assert m1["flip_cw"]["value"] == 1.0 and m1["flip_wc"]["value"] == 1.0
    assert {"cons_exact", "cons_exact_soft", "cons_rouge1", "cons_rouge1_soft"} <= set(m1)
    result = run(LABELS, "--compare", "selfpara,raw", "--json", "--n-boot", "50")
    assert json.loads(result.stdout)["comparisons"][0]["a"] == "selfpara"


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "file is empty"),
        ("question_id,variant_id,is_original,label\n", "header but no records"),
        ("question_id,variant_id,label\nq,0,correct\n", ":1: missing column(s) ['is_original']"),
        (
            "question_id,variant_id,is_original,label\nq,0,true,correct\nq,1,false,right\n",
            ":3: label 'right' is not one of correct, incorrect, not_attempted",
        ),
        (
            "question_id,variant_id,is_original,label\nq,0,false,correct\nq,1,false,correct\n",
            ":2: question 'q' has no original row",
        ),
        (
            "question_id,variant_id,is_original,label\nq,0,true,correct\nq,1,true,correct\n",
            ":3: question 'q' has two original rows (also line 2)",
        ),
        ("question_id,variant_id,is_original,label\nq,0,maybe,correct\n", ":2: 'is_original' must be true or false"),
        ("question_id,variant_id,is_original,label\n,0,true,correct\n", ":2: empty 'question_id'"),
    ],
)
def test_bad_input_is_one_clean_line(tmp_path, content, message):
    f = tmp_path / "labels.csv"
    f.write_text(content)
    result = run(f)
    assert result.exit_code == 1
    assert said("labels.csv", result.stderr) and said(message, result.stderr), result.stderr
    assert "Traceback" not in result.output


def test_bad_options_are_clean_errors(tmp_path):
    for args, message in [
        (["--compare", "raw"], "two group names"),
        (["--consistency", "bleu"], "unknown consistency function"),
        (["--consistency", "nli"], "--nli-model"),
    ]:
        result = run(LABELS, *args)
        assert result.exit_code == 2, args  # a bad flag value (docs/cli.md, exit codes)
        assert said(message, result.stderr) and said(f"'{args[0]}'", result.stderr), (args, result.stderr)
    for args, message in [
        (["--compare", "raw,nobody"], "no such group"),
        (["--answer-col", "reply"], "missing column(s) ['reply']"),
        (["--group-col", "team"], "missing column(s) ['team']"),
    ]:
        result = run(LABELS, *args)
        assert result.exit_code == 1, args
        assert said(message, result.stderr), (args, result.stderr)
    result = run(tmp_path / "missing.csv")
    assert result.exit_code == 1 and said("missing.csv: no such file", result.stderr)
    no_answers = tmp_path / "na.csv"
    no_answers.write_text("question_id,variant_id,is_original,label\nq,0,1,correct\n")
    result = run(no_answers, "--consistency", "exact")
    assert result.exit_code == 1 and said("answer column", result.stderr)


def test_console_script(tmp_path):
    script = Path(sys.executable).with_name("selfpara")
    if not script.exists():
        pytest.skip("the selfpara console script is not installed (pip install -e .)")
    done = subprocess.run(
        [str(script), "metrics", str(LABELS), "--json", "--n-boot", "100"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "120"},
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["groups"]["selfpara"]["A_orig"]["value"] == 0.75
    bad = tmp_path / "bad.csv"
    bad.write_text("question_id,variant_id,is_original,label\nq,0,1,wrong\n")
    done = subprocess.run([str(script), "metrics", str(bad)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert said("bad.csv:2: label 'wrong'", done.stderr)


def test_confidence_column_gives_auroc_coverage_and_policy(tmp_path: Path):
    """The hand table of tests/test_eval_confidence.py as a CSV: AUROC 4/6, accuracy 2/3 at 50% coverage."""
    rows = [
        ("q1", 0, "correct", 1.0),
        ("q2", 0, "correct", 0.75),
        ("q3", 0, "incorrect", 0.75),
        ("q4", 0, "incorrect", 0.5),
        ("q5", 0, "correct", 0.5),
        ("q6", 0, "not_attempted", 1.0),
    ]
    path = tmp_path / "conf.csv"
    path.write_text(
        "question_id,variant_id,is_original,label,share\n"
        + "".join(f"{q},{v},true,{lab},{s}\n" for q, v, lab, s in rows)
    )
    result = run(path, "--json", "--n-boot", "100", "--confidence-col", "share")
    assert result.exit_code == 0, result.output
    conf = json.loads(result.stdout)["confidence_of_correctness"]["all"]
    assert conf["attempted"] == 5
    assert conf["signals"]["confidence"]["auroc"] == pytest.approx(4 / 6)
    assert conf["signals"]["confidence"]["coverage"]["0.5"] == pytest.approx(2 / 3)
    assert conf["policy"][2]["threshold"] == 0.75 and conf["policy"][2]["correct"] == 2
    table = run(path, "--n-boot", "100", "--confidence-col", "share")
    assert table.exit_code == 0 and "AUROC" in table.stdout and "0.667" in table.stdout
    path.write_text("question_id,variant_id,is_original,label,share\nq1,0,true,correct,high\n")
    bad = run(path, "--confidence-col", "share")
    assert bad.exit_code != 0 and said("must be a number", bad.output)
