import json
import os
import shutil
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from selfpara.cli import app

runner = CliRunner()


@pytest.mark.parametrize(
    "args, message",
    [
        (["ask", "Capital of France?", "--model", "nosuchprovider-x"], "unknown model"),
        (["ask", "Capital of France?", "--equivalence", "nli", "--nli-model", "/no/such/dir"], "not a model directory"),
    ],
)
def test_bad_input_is_one_line_and_exit_1(args, message):
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    assert message in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["-k", "0"], "Invalid value for '--k' / '-k'"),
        (["-k", "21"], "Invalid value for '--k' / '-k'"),
        (["--equivalence", "vibes"], "Invalid value for '--equivalence' (env var: 'SELFPARA_EQUIVALENCE'): unknown"),
        (["--transport", "http"], "transport http needs an openai/ or hosted_vllm/ model"),  # two flags together
        (["--transport", "smoke-signals"], "Invalid value for '--transport'"),
        (["--low-vote-share", "panic"], "Invalid value for '--low-vote-share'"),
        (["--low-vote-share-threshold", "2"], "Invalid value for '--low-vote-share-threshold'"),
    ],
)
def test_a_bad_flag_value_is_exit_2_and_names_the_flag(args, message):
    result = runner.invoke(app, ["ask", "Capital of France?", *args], env={"COLUMNS": "300"})
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.replace("│", " ").split())
    assert message in text and "Traceback" not in text
    assert "invalid settings: k:" not in text  # the flag, not the field of WrapConfig


@pytest.mark.parametrize("question, stdin", [("", None), ("   ", None), ("-", "  \n")])
def test_an_empty_question_is_a_command_line_problem_exit_2(question, stdin):
    result = runner.invoke(app, ["ask", question], input=stdin, env={"COLUMNS": "300"})
    assert result.exit_code == 2, result.output
    assert "QUESTION: the question is empty" in " ".join(result.output.split())


def test_unreachable_upstream_is_a_clean_error():
    result = runner.invoke(
        app,
        ["ask", "Capital of France?", "--model", "openai/x", "--api-base", "http://127.0.0.1:9/v1", "-k", "1"],
        env={"OPENAI_API_KEY": "sk-secretvalue99"},
    )
    assert result.exit_code == 1 and "error" in result.output
    assert "secretvalue99" not in result.output and "Traceback" not in result.output


@pytest.mark.model
def test_ask_on_embedded_model_end_to_end():
    exe = shutil.which("selfpara") or f"{sys.executable} -m selfpara"
    cmd = exe.split() + [
        "ask",
        "What is the capital of France?",
        "-k",
        "2",
        "--max-tokens",
        "24",
        "--json",
        "--model",
        "local/smollm2",
    ]  # the small embedded model: fast
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["model"] == "local/smollm2" and result["k_requested"] == 2
    assert len(result["variants"]) == 1 + result["k_kept"] and result["answers"][0]["variant"] == 0
    assert sum(len(c["members"]) for c in result["clusters"]) == sum(1 for a in result["answers"] if a["error"] is None)
    assert 0 < result["vote_share"] <= 1 and result["usage"]["calls"] >= 1  # renamings need no paraphrase call
    assert 0 < result["confidence"] < 1  # the real engine's log-probabilities included


def test_bracketed_text_in_errors_is_not_eaten_as_markup():
    result = runner.invoke(app, ["ask", "Capital?", "--model", "local/[bold]nope"])
    assert result.exit_code == 1 and "[bold]nope" in result.output


def test_serve_takes_equivalence():
    args = ["--equivalence", "exact,numeric"]
    result = runner.invoke(app, ["serve", "--model", "openai/m", "--api-base", "http://up/v1", *args, "--check"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["upstream"]["equivalence"] == "exact,numeric"


def test_a_settings_file_naming_an_unknown_setting_is_told_its_name(tmp_path):
    path = tmp_path / "proxy.toml"
    path.write_text('[upstream]\nmodel = "openai/m"\napi_base = "http://up/v1"\nlow_agreement = "abstain"\n')
    result = runner.invoke(app, ["serve", "--config", str(path), "--check"], env={"COLUMNS": "300"})
    assert result.exit_code != 0
    assert "low_agreement: Extra inputs are not permitted" in " ".join(result.output.split())


@pytest.fixture(scope="module")
def upstream():
    from tests.fake_upstream import serve_fake

    yield from serve_fake()


def _ask(upstream, *args):
    return runner.invoke(
        app,
        [
            "ask",
            "What is the capital of France?",
            "--model",
            "openai/fake",
            "--api-base",
            upstream.url,
            "-k",
            "3",
            "--no-renamings",  # the fake upstream scripts the model's list
            *args,
        ],
        env={"OPENAI_API_KEY": "sk-test-0000"},
    )


def test_low_vote_share_is_flagged_shown_and_can_abstain(upstream):
    upstream.reset(answers={0: "Paris", 1: "Lyon", 2: "Nice", 3: "Lille"})
    flagged = _ask(upstream)
    assert flagged.exit_code == 0, flagged.output
    assert flagged.stdout.splitlines()[0] == "Paris" and "warning: low vote share" in flagged.output
    assert "vote share 25% of 4 · confidence 0.33" in flagged.output
    # a loopback server's model judges itself: the CLI says so
    assert "answer judge is the small/local model under test" in flagged.output

    upstream.reset(answers={0: "Paris", 1: "Lyon", 2: "Nice", 3: "Lille"})
    abstained = _ask(upstream, "--low-vote-share", "abstain", "--abstention-text", "Not sure.", "--json")
    report = json.loads(abstained.stdout)
    assert report["answer"] == "Not sure." and report["withheld_answer"] == "Paris" and report["abstained"]
    assert "low_vote_share" in report["flags"] and report["vote_share"] == 0.25
    assert report["confidence"] == pytest.approx(2 / 6)  # four answers, four clusters: (1 + 1) / (4 + 2)
    assert all({"a", "b", "equivalent", "decided_by"} <= set(c) for c in report["comparisons"])

    upstream.reset(answers={0: "Paris", 1: "Lyon", 2: "Nice", 3: "Lille"})
    shown = _ask(upstream, "--low-vote-share", "off", "--show")
    assert shown.exit_code == 0 and "low vote share" not in shown.output and "pairs decided by" in shown.output

    upstream.reset()
    agreed = _ask(upstream, "--low-vote-share", "abstain")
    assert agreed.stdout.splitlines()[0] == "Paris" and "low vote share" not in agreed.output


def test_top_up_and_the_margin_reach_the_pipeline(upstream):
    upstream.reset(answers={0: "Paris", 1: "Lyon", 2: "Lyon", 3: "Nice"})
    kept = json.loads(_ask(upstream, "--equivalence", "exact", "--json").stdout)
    assert kept["answer"] == "Paris"  # 2 votes against 1: not decisive at the default margin 2
    assert "short of the margin 2" in kept["original_kept_reason"]
    upstream.reset(answers={0: "Paris", 1: "Lyon", 2: "Lyon", 3: "Nice"})
    flipped = _ask(upstream, "--equivalence", "exact", "--overrule-margin", "1", "--json")
    assert flipped.exit_code == 0, flipped.output
    # decisive at margin 1, and the model's check verified both Lyon wordings: overruled
    assert json.loads(flipped.stdout)["answer"] == "Lyon"
    upstream.reset(answers={0: "Paris", 1: "Lyon", 2: "Lyon", 3: "Nice"})
    unchecked = _ask(
        upstream, "--equivalence", "exact", "--overrule-margin", "1", "--paraphrase-check", "off", "--json"
    )
    # with no check both came from the paraphrase call alone: the original is kept
    assert json.loads(unchecked.stdout)["answer"] == "Paris"
    assert "paraphrase call" in json.loads(unchecked.stdout)["original_kept_reason"]

    upstream.reset()
    upstream.fail(400, when="paraphrase", times=None)
    topped = _ask(upstream, "--equivalence", "exact", "--top-up-temperature", "0.7", "--show")
    assert topped.exit_code == 0, topped.output
    assert "kept 0 of 3 paraphrases, 3 not written · 3 topped up" in topped.output
    assert topped.output.count("(top-up, sampled)") == 3
    temperatures = sorted(c.body["temperature"] for c in upstream.calls_of("answer"))
    assert temperatures == [0.0, 0.7, 0.7, 0.7]


def test_adaptive_k_shows_what_it_did_not_need(upstream):
    upstream.reset()
    shown = upstream.whole_reply_first(lambda: _ask(upstream, "--adaptive", "--show"))
    assert shown.exit_code == 0, shown.output
    assert shown.output.count("not needed (adaptive k)") == 2 and "saved" in shown.output
    # the two it did not need were kept all the same: the note and the title count them, as the report does,
    # and say how many the vote used (the JSON's k_kept) and how many it did not need (skipped_paraphrases)
    assert "kept 3 of 3 paraphrases (1 answered, 2 not needed)" in shown.output


def test_doubt_first_says_whether_the_vote_ran_and_why(upstream):
    upstream.reset()  # the fake's every token has log-probability -0.5: p = 0.61
    sure = _ask(upstream, "--sure-probability", "0.6", "--show")
    assert sure.exit_code == 0, sure.output
    assert sure.stdout.splitlines()[0] == "Paris" and len(upstream.calls_of("answer")) == 1
    assert "no vote: answer sure: p = 0.61 >= 0.60" in sure.output and "paraphrases" not in sure.output
    upstream.reset()
    doubtful = _ask(upstream, "--sure-probability", "0.7", "--show")
    assert "voted: in doubt: p = 0.61 < 0.70" in doubtful.output and "kept 3 of 3 paraphrases" in doubtful.output
    assert len(upstream.calls_of("answer")) == 4


def test_show_with_json_prints_the_table_to_stderr_and_json_alone_to_stdout(upstream):
    upstream.reset()
    both = _ask(upstream, "--show", "--json")
    assert both.exit_code == 0, both.output
    assert json.loads(both.stdout)["answer"] == "Paris"  # stdout holds the JSON and nothing else
    assert "pairs decided by" in both.stderr and "pairs decided by" not in both.stdout


def test_output_wraps_at_the_terminal_width_of_the_call_and_never_off_a_terminal(upstream, monkeypatch):
    # Within one process the width can change between calls (pytest, an embedding app); on a
    # terminal each call wraps at the width it finds, as the stderr console is made per use. Off a
    # terminal (here: the runner's pipe) lines are never wrapped, at any COLUMNS.
    line = "warning: low vote share: the wordings disagree, treat this answer as unreliable"
    outputs = {}
    for width, terminal in (("200", "1"), ("40", "1"), ("40", "")):
        monkeypatch.setenv("COLUMNS", width)
        monkeypatch.setenv("FORCE_COLOR", terminal)  # rich: a terminal when set
        upstream.reset(answers={0: "Paris", 1: "Lyon", 2: "Nice", 3: "Lille"})
        outputs[width, terminal] = _ask(upstream).stderr
    assert line in outputs["200", "1"]
    assert line not in outputs["40", "1"] and "warning: low vote share" in outputs["40", "1"]
    assert line in outputs["40", ""] and "\x1b[" not in outputs["40", ""]


def test_show_off_a_terminal_is_plain_lines_that_break_no_word(upstream, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    question = "What is the capital city of France, the country whose seat of government is on the Seine river?"
    upstream.reset()
    result = runner.invoke(
        app,
        ["ask", question, "--model", "openai/fake", "--api-base", upstream.url, "-k", "3", "--no-renamings", "--show"],
        env={"OPENAI_API_KEY": "sk-test-0000"},
    )
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert any(question in line for line in lines)  # the wording whole, on its line
    assert any(line.startswith("openai/fake · kept ") and line.rstrip().endswith(tuple("0123456789")) for line in lines)
    assert not any(c in result.stderr for c in "│┃━─")  # no table drawn into a pipe
    assert "pairs decided by" in result.stderr


def test_the_original_answer_alone_is_not_shown_as_a_confident_vote(upstream):
    upstream.reset()
    upstream.fail(400, when="paraphrase", times=None)
    alone = _ask(upstream, "--equivalence", "exact", "--show")
    assert alone.exit_code == 0, alone.output
    assert "no vote: the original's answer alone" in alone.output and "vote share 100%" not in alone.output
    assert "kept 0 of 3 paraphrases, 3 not written" in alone.output and "paraphrase failed" in alone.output
