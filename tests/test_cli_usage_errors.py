"""A usage error is one line, `error: ...`, off a terminal (as every other error of the CLI), a
suggestion is made only for a flag close to the one typed, `selfpara` alone shows the help, and
a command's description is never broken mid-sentence in the help panels. Run as a user runs
them: the real program in a subprocess, its stderr a file or a pipe."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from selfpara.cli import app
from selfpara.cli.conventions import close_names, reflowed

ROOT = Path(__file__).resolve().parent.parent


def selfpara(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SELFPARA_")}
    environ.update(PYTHONPATH=str(ROOT), LITELLM_LOCAL_MODEL_COST_MAP="True", COLUMNS="80")
    return subprocess.run(
        [sys.executable, "-m", "selfpara", *args], input=stdin, capture_output=True, text=True, env=environ, timeout=120
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["ask", ""], "error: Invalid value for QUESTION: the question is empty"),
        (["ask", "x", "-k", "0"], "error: Invalid value for '--k' / '-k'"),
        (["ask", "x", "--nope"], "error: No such option: --nope"),
        (["no-such-command"], "error: No such command 'no-such-command'."),
    ],
)
def test_a_usage_error_off_a_terminal_is_one_line(args: list[str], message: str) -> None:
    run = selfpara(*args)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.splitlines() == [run.stderr.strip()], run.stderr  # one line: no usage line, no panel
    assert run.stderr.startswith(message) and "╭" not in run.stderr
    assert re.search(r"\(see '.*selfpara( ask)? -h'\)$", run.stderr.strip())


def test_an_unknown_flag_is_given_a_suggestion_only_when_one_is_close() -> None:
    assert "Possible options" not in selfpara("ask", "x", "--nope").stderr
    assert "(did you mean --json?)" in selfpara("ask", "x", "--jsno").stderr
    assert close_names("--nope", ["--model", "--json", "--k"]) == []
    assert close_names("--modle", ["--model", "--json"]) == ["--model"]
    assert close_names("--verbos", ["--verbose", "--version"]) == ["--verbose"]


def test_selfpara_alone_piped_shows_the_help_and_exits_2() -> None:
    run = selfpara()
    assert run.returncode == 2
    assert run.stderr.startswith("Usage: ") and "Commands:" in run.stderr and "ask" in run.stderr


def test_no_description_is_broken_mid_sentence_in_the_panels() -> None:
    wrapped = "Measure what it gains: every arm answers; prints the\nmetric table.\n\nSecond paragraph\nhere."
    assert (
        reflowed(wrapped)
        == "Measure what it gains: every arm answers; prints the metric table.\n\nSecond paragraph here."
    )
    shown = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "250", "FORCE_COLOR": "1"}, color=False)
    text = re.sub(r"\x1b\[[0-9;]*m", "", shown.output)
    assert shown.exit_code == 0 and "╭" in text  # the rich panels, as on a wide terminal
    if "calibrate" in text:  # the evaluation commands are installed
        assert re.search(r"prints the metric table and writes report\.json", text)
        assert re.search(r"\(a one-sided Clopper–Pearson bound on the error of the answers", text)
    assert "prints the\n" not in text
