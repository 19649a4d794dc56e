"""The CLI speaks its users' conventions: --version, completion, flags shown as flags,
settings from environment variables in one precedence, stdout only for the output asked
for, one log record per line."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import selfpara
from selfpara.cli import app
from selfpara.cli.render import rejection_text, result_table
from selfpara.result import RejectedParaphrase

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()
# The variables the tests set, cleared first so a developer's own environment cannot leak in.
SETTINGS_ENV = {
    name: ""
    for name in (
        "SELFPARA_MODEL",
        "SELFPARA_API_BASE",
        "SELFPARA_K",
        "SELFPARA_EQUIVALENCE",
        "SELFPARA_PROXY_KEY",
        "SELFPARA_CONFIG",
        "SELFPARA_ROUTER_CONFIG",
    )
}


def env(**values: str) -> dict[str, str | None]:
    return {**{k: None for k in SETTINGS_ENV}, **values}


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout == f"selfpara {selfpara.__version__}\n"


def test_shell_completion_completes_commands_and_options() -> None:
    def complete(words: str, cword: int) -> str:
        completion = {"_SELFPARA_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
        result = runner.invoke(app, [], prog_name="selfpara", env=completion)
        assert result.exit_code == 0, result.output
        return result.output

    assert complete("selfpara se", 1).split() == ["serve"]
    assert "--json" in complete("selfpara ask --js", 2).split()
    script = runner.invoke(app, ["--show-completion", "bash"], prog_name="selfpara")
    assert script.exit_code == 0 and "_SELFPARA_COMPLETE=complete_bash" in script.output
    assert "--install-completion" in runner.invoke(app, ["--help"]).output


@pytest.mark.parametrize("command", [[], ["ask"], ["serve"], ["bench"], ["report"], ["metrics"]])
def test_help_shows_flags_as_flags(command: list[str]) -> None:
    result = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "200"})
    if result.exit_code == 2 and "No such command" in result.output:
        pytest.skip(f"{command[0]} is not installed")
    assert result.exit_code == 0, result.output
    assert "<bool>" not in result.output and "--help" in result.output
    assert "{" not in result.output.split("Usage:")[1].splitlines()[0]  # no `{question}` in the usage line


def test_arguments_are_named_in_capitals() -> None:
    usage = runner.invoke(app, ["ask", "--help"], env={"COLUMNS": "200"}).output
    assert "ask [OPTIONS] QUESTION" in usage


@pytest.mark.parametrize(
    "command, names",
    [
        ("ask", ["SELFPARA_MODEL", "SELFPARA_API_BASE", "SELFPARA_K", "SELFPARA_EQUIVALENCE"]),
        ("bench", ["SELFPARA_MODEL", "SELFPARA_API_BASE"]),
        (
            "serve",
            [
                "SELFPARA_MODEL",
                "SELFPARA_API_BASE",
                "SELFPARA_K",
                "SELFPARA_PROXY_KEY",
                "SELFPARA_CONFIG",
                "SELFPARA_ROUTER_CONFIG",
            ],
        ),
    ],
)
def test_help_names_the_environment_variables(command: str, names: list[str]) -> None:
    text = runner.invoke(app, [command, "--help"], env={"COLUMNS": "250"}).output
    for name in names:
        assert name in text, name


@pytest.mark.parametrize(
    "flag, environment, in_file, expected",
    [
        (None, None, None, 3),  # the default (WrapConfig's)
        (None, None, 4, 4),  # the settings file
        (None, "7", 4, 7),  # the environment beats the file
        ("2", "7", 4, 2),  # the flag beats both
    ],
)
def test_one_precedence_flag_env_file_default(
    tmp_path: Path, flag: str | None, environment: str | None, in_file: int | None, expected: int
) -> None:
    path = tmp_path / "proxy.toml"
    path.write_text(
        '[upstream]\nmodel = "openai/m"\napi_base = "http://up/v1"\n'
        + (f"k = {in_file}\n" if in_file is not None else "")
    )
    args = ["serve", "--check"] + (["--k", flag] if flag else [])
    values = {"SELFPARA_CONFIG": str(path), **({"SELFPARA_K": environment} if environment else {})}
    result = runner.invoke(app, args, env=env(**values))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["upstream"]["k"] == expected


def test_serve_reads_model_and_base_from_the_environment() -> None:
    result = runner.invoke(
        app, ["serve", "--check"], env=env(SELFPARA_MODEL="openai/from-env", SELFPARA_API_BASE="http://env:1/v1")
    )
    assert result.exit_code == 0, result.output
    upstream = json.loads(result.stdout)["upstream"]
    assert upstream["model"] == "openai/from-env" and upstream["api_base"] == "http://env:1/v1"


def test_proxy_key_variable_is_honoured_by_default_and_never_printed() -> None:
    base = ["serve", "--model", "openai/m", "--api-base", "http://up/v1", "--check"]
    off = runner.invoke(app, base, env=env())
    on = runner.invoke(app, base, env=env(SELFPARA_PROXY_KEY="s3cret-proxy-key"))
    assert json.loads(off.stdout)["auth"] is False
    assert json.loads(on.stdout)["auth"] is True and "s3cret-proxy-key" not in on.output
    named = runner.invoke(app, [*base, "--api-key-env", "MY_KEY"], env=env(SELFPARA_PROXY_KEY="x", MY_KEY=""))
    assert named.exit_code == 1 and "MY_KEY" in named.output  # a named variable wins, and must be set


def test_ask_reads_its_settings_from_the_environment() -> None:
    result = runner.invoke(app, ["ask", "Capital of France?"], env=env(SELFPARA_MODEL="nosuchprovider-x"))
    assert result.exit_code == 1 and "nosuchprovider-x" in result.output
    bad_k = runner.invoke(app, ["ask", "Capital of France?"], env=env(SELFPARA_K="many"))
    assert bad_k.exit_code == 2 and "SELFPARA_K" in bad_k.output  # click names the variable it read


def test_bench_reads_its_model_from_the_environment(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["bench", "--limit", "1", "--arms", "raw", "--max-variants", "1", "--no-cache", "-q", "--out", str(out)]
    runner.invoke(app, args, env=env(SELFPARA_MODEL="nosuchprovider-x"))
    assert json.loads((out / "config.json").read_text())["bench"]["model"] == "nosuchprovider-x"


@pytest.mark.parametrize("command", ["ask", "bench"])
def test_help_names_the_default_model(command: str) -> None:
    from selfpara.models.names import EMBEDDED_MODEL

    text = runner.invoke(app, [command, "--help"], env={"COLUMNS": "250"}).output
    assert f"default: the embedded {EMBEDDED_MODEL}" in text


def test_ask_json_with_an_unknown_provider_keeps_stdout_clean() -> None:
    # litellm prints a "Provider List" line to stdout for a provider it does not know.
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    environ.pop("SELFPARA_MODEL", None)
    proc = subprocess.run(
        [sys.executable, "-m", "selfpara", "ask", "Capital of France?", "--json", "--model", "foo/bar", "-k", "1"],
        capture_output=True,
        text=True,
        timeout=300,
        env=environ,
    )
    assert proc.returncode == 1 and "unknown model" in proc.stderr
    assert proc.stdout.strip() == "" or json.loads(proc.stdout)
    assert "Provider List" not in proc.stdout


def test_a_rejected_paraphrase_names_its_reason_once() -> None:
    overlap = RejectedParaphrase(text="What is France's capital?", reason="overlap", detail="overlap 0.86")
    assert rejection_text(overlap) == "overlap 0.86"
    judged = RejectedParaphrase(text="x", reason="not_equivalent", detail="asks about Spain")
    assert rejection_text(judged) == "not equivalent: asks about Spain"
    assert rejection_text(RejectedParaphrase(text="", reason="empty")) == "empty"


def test_the_table_shows_rejections_once_and_text_as_text(paraphraser_result: object) -> None:
    from rich.console import Console

    console = Console(width=200, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(result_table(paraphraser_result))  # type: ignore[arg-type]
    text = console.export_text()
    assert "rejected: overlap 0.86" in text and "overlap overlap" not in text
    assert "[bold]Paris" in text  # an answer's brackets are its text, not markup


@pytest.fixture
def paraphraser_result() -> object:
    from selfpara.result import Answer, Cluster, Variant, WrappedAnswer

    return WrappedAnswer(
        answer="[bold]Paris",
        question="Capital of France?",
        model="m",
        k_requested=2,
        k_kept=1,
        variants=[Variant(index=0, text="Capital of France?"), Variant(index=1, text="France's capital city?")],
        rejected=[RejectedParaphrase(text="Capital of France??", reason="overlap", detail="overlap 0.86")],
        answers=[Answer(variant=0, text="[bold]Paris", cluster=0), Answer(variant=1, text="[bold]Paris", cluster=0)],
        clusters=[Cluster(id=0, members=[0, 1])],
        winner=0,
        vote_share=1.0,
        confidence=0.5,
        entropy=0.0,
        entropy_normalized=0.0,
        original_won=True,
    )


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def test_cli_log_is_one_record_per_line_when_redirected(
    capsys: pytest.CaptureFixture[str], restore_logging: None
) -> None:
    from selfpara.cli.common import setup_logging

    setup_logging(verbose=False)
    log = logging.getLogger("selfpara.test")
    try:
        raise ValueError("first line\nsecond line")
    except ValueError:
        log.exception("a failure\nwith a second line")
    log.warning("then another record")
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2, lines
    assert "a failure\\nwith a second line" in lines[0] and "Traceback" in lines[0] and "second line" in lines[0]


@pytest.mark.parametrize("command", [["ask"], ["serve"], ["bench"], ["report"], ["metrics"]])
def test_h_is_help(command: list[str]) -> None:
    short, long = (runner.invoke(app, [*command, flag], env={"COLUMNS": "200"}) for flag in ("-h", "--help"))
    if long.exit_code == 2 and "No such command" in long.output:
        pytest.skip(f"{command[0]} is not installed")
    assert short.exit_code == 0 and short.output == long.output


def test_choices_are_shown_checked_and_completed() -> None:
    text = runner.invoke(app, ["ask", "--help"], env={"COLUMNS": "250"}).output
    for shown in ("auto|litellm|http", "auto|off|llm|nli", "flag|abstain|off"):
        assert shown in text, shown
    completion = {"_SELFPARA_COMPLETE": "complete_bash", "COMP_WORDS": "selfpara ask --transport ", "COMP_CWORD": "3"}
    result = runner.invoke(app, [], prog_name="selfpara", env=completion)
    assert result.output.split() == ["auto", "litellm", "http"]
    serve_help = runner.invoke(app, ["serve", "--help"], env={"COLUMNS": "250"}).output
    assert "auto|litellm|http" in serve_help and "auto|off|llm|nli" in serve_help


def test_the_choice_enums_are_wrapconfigs_literals() -> None:
    from typing import get_args

    from selfpara.cli.choices import CHOICES_OF_FIELDS
    from selfpara.config import WrapConfig

    for field, enum in CHOICES_OF_FIELDS.items():
        assert {e.value for e in enum} == set(get_args(WrapConfig.model_fields[field].annotation)), field


def test_bench_answers_are_the_answer_styles() -> None:
    from typing import get_args

    pytest.importorskip("numpy")
    from evaluation.arms.templates import AnswerStyle
    from evaluation.cli.bench import Answers

    assert {e.value for e in Answers} == set(get_args(AnswerStyle))


def test_a_bad_serve_flag_is_exit_2_naming_it_and_a_bad_file_value_exit_1(tmp_path: Path) -> None:
    flag = runner.invoke(app, ["serve", "--check", "--max-k", "0"], env=env())
    assert flag.exit_code == 2 and "Invalid value for '--max-k'" in flag.output
    timeout = runner.invoke(app, ["serve", "--check", "--timeout", "-1"], env=env())
    assert timeout.exit_code == 2 and "'--timeout'" in timeout.output  # the flag, not the field timeout_s
    path = tmp_path / "proxy.toml"
    path.write_text("[upstream]\nk = 0\n")
    in_file = runner.invoke(app, ["serve", "--check", "--config", str(path)], env=env())
    assert in_file.exit_code == 1 and "invalid settings: k:" in in_file.output  # the file's name for it


def test_litellm_console_noise_only_when_its_own_debug_is_asked_for() -> None:
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    for name in ("SELFPARA_MODEL", "LITELLM_LOG"):
        environ.pop(name, None)
    base = [sys.executable, "-m", "selfpara", "ask", "Capital of France?", "--model", "nosuch/model", "-k", "1"]
    # the three runs at once: each spends its time importing litellm
    runs = [
        subprocess.Popen(base + extra, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environ | more)
        for extra, more in (([], {}), (["-v"], {}), (["-v"], {"LITELLM_LOG": "DEBUG"}))
    ]
    (_, quiet), (_, verbose), (debug_out, debug) = (run.communicate(timeout=300) for run in runs)
    assert [run.returncode for run in runs] == [1, 1, 1]
    banners = ("Provider List", "Give Feedback", "turn_on_debug")
    for err in (quiet, verbose):  # selfpara's --verbose is selfpara's log, not litellm's banners
        assert not any(b in err for b in banners) and "\x1b[" not in err and "unknown model" in err
    assert "Provider List" in debug and "Provider List" not in debug_out
    assert "\x1b[" not in debug  # stderr is a pipe here: litellm's colour codes removed


def test_the_exit_code_table_is_the_codes_the_cli_uses() -> None:
    import re

    from selfpara.cli import common

    doc = (ROOT / "docs" / "cli.md").read_text()
    table = doc.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    documented = {int(code) for code in re.findall(r"^\| `(\d+)` \|", table, flags=re.MULTILINE)}
    assert documented == {common.EXIT_OK, common.EXIT_FAILED, common.EXIT_USAGE, common.EXIT_INTERRUPTED}
    assert "docs/cli.md#exit-codes" in (ROOT / "README.md").read_text()
    assert runner.invoke(app, ["ask", "x", "--no-such-flag"]).exit_code == common.EXIT_USAGE
