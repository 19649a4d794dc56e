import contextlib
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
        (["ask", "   "], "the question is empty"),
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
        (["--agreement", "vibes"], "Invalid value for '--agreement': unknown equivalence"),  # deprecated alias
        (["--transport", "http"], "transport http needs an openai/ or hosted_vllm/ model"),  # two flags together
        (["--transport", "smoke-signals"], "Invalid value for '--transport'"),
        (["--low-vote-share", "panic"], "Invalid value for '--low-vote-share'"),
        (["--low-vote-share-threshold", "2"], "Invalid value for '--low-vote-share-threshold'"),
        (["--low-agreement", "panic"], "Invalid value for '--low-agreement'"),  # deprecated alias
        (["--low-agreement-threshold", "2"], "Invalid value for '--low-agreement-threshold'"),  # deprecated alias
    ],
)
def test_a_bad_flag_value_is_exit_2_and_names_the_flag(args, message):
    # a deprecated flag that reaches the settings check warns first (typer itself rejects a bad choice)
    reaches = args in (["--agreement", "vibes"], ["--low-agreement-threshold", "2"])
    with pytest.warns(DeprecationWarning, match="is deprecated") if reaches else contextlib.nullcontext():
        result = runner.invoke(app, ["ask", "Capital of France?", *args], env={"COLUMNS": "300"})
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.replace("│", " ").split())
    assert message in text and "Traceback" not in text
    assert "invalid settings: k:" not in text  # the flag, not the field of WrapConfig


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
    assert (
        0 < result["vote_share"] <= 1 and result["agreement"] == result["vote_share"] and result["usage"]["calls"] >= 2
    )
    assert 0 < result["confidence"] < 1  # the real engine's log-probabilities included


def test_bracketed_text_in_errors_is_not_eaten_as_markup():
    result = runner.invoke(app, ["ask", "Capital?", "--model", "local/[bold]nope"])
    assert result.exit_code == 1 and "[bold]nope" in result.output


@pytest.mark.parametrize(
    "args",
    [["--equivalence", "exact,numeric"], ["--agreement", "exact,numeric"]],  # --agreement: deprecated, hidden
)
def test_serve_takes_equivalence_and_its_deprecated_flag(args):
    result = runner.invoke(app, ["serve", "--model", "openai/m", "--api-base", "http://up/v1", *args, "--check"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["upstream"]["equivalence"] == "exact,numeric"


def test_a_settings_file_may_still_say_agreement(tmp_path):
    path = tmp_path / "proxy.toml"
    path.write_text('[upstream]\nmodel = "openai/m"\napi_base = "http://up/v1"\nagreement = "exact"\n')
    with pytest.warns(DeprecationWarning, match="'agreement' is deprecated"):  # still read, one release
        result = runner.invoke(app, ["serve", "--config", str(path), "--check"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["upstream"]["equivalence"] == "exact"
    assert "--agreement" not in runner.invoke(app, ["serve", "--help"]).output


def test_a_settings_file_may_still_say_low_agreement(tmp_path):
    path = tmp_path / "proxy.toml"
    upstream = 'model = "openai/m"\napi_base = "http://up/v1"\nlow_agreement = "abstain"\nadaptive_agreement = 0.8\n'
    path.write_text("[upstream]\n" + upstream)
    with pytest.warns(DeprecationWarning) as caught:  # still read, one release
        result = runner.invoke(app, ["serve", "--config", str(path), "--check"])
    assert result.exit_code == 0, result.output
    assert sorted(str(w.message) for w in caught) == [
        "the setting 'adaptive_agreement' is deprecated; use 'adaptive_vote_share'",
        "the setting 'low_agreement' is deprecated; use 'low_vote_share'",
    ]
    settings = json.loads(result.stdout)["upstream"]
    assert (settings["low_vote_share"], settings["adaptive_vote_share"]) == ("abstain", 0.8)
    assert "low_agreement" not in settings


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


def test_the_old_low_agreement_flags_still_work_and_say_they_are_deprecated(upstream):
    upstream.reset(answers={0: "Paris", 1: "Lyon", 2: "Nice", 3: "Lille"})
    with pytest.warns(DeprecationWarning) as caught:
        old = _ask(upstream, "--low-agreement", "abstain", "--low-agreement-threshold", "0.3", "--json")
    assert {str(w.message) for w in caught} == {
        "the setting 'low_agreement' is deprecated; use 'low_vote_share'",
        "the setting 'low_agreement_threshold' is deprecated; use 'low_vote_share_threshold'",
    }
    assert old.exit_code == 0, old.output
    report = json.loads(old.stdout)
    assert report["answer"] != "Paris" and report["withheld_answer"] == "Paris"  # 0.25 is below 0.3: withheld
    assert report["flags"][-2:] == ["low_vote_share", "low_agreement"]  # the old flag too, one release
    assert "note: --low-agreement is deprecated; use --low-vote-share" in old.output
    assert "--low-agreement" not in runner.invoke(app, ["ask", "--help"]).output


def test_top_up_and_the_margin_reach_the_pipeline(upstream):
    upstream.reset(answers={0: "Paris", 1: "Lyon", 2: "Lyon", 3: "Nice"})
    kept = _ask(upstream, "--equivalence", "exact")
    assert kept.stdout.splitlines()[0] == "Paris"  # 2 votes against 1: not decisive at the default margin 2
    upstream.reset(answers={0: "Paris", 1: "Lyon", 2: "Lyon", 3: "Nice"})
    flipped = _ask(upstream, "--equivalence", "exact", "--overrule-margin", "1")
    assert flipped.exit_code == 0, flipped.output
    assert flipped.stdout.splitlines()[0] == "Lyon"

    upstream.reset()
    upstream.fail(400, when="paraphrase", times=None)
    topped = _ask(upstream, "--equivalence", "exact", "--top-up-temperature", "0.7", "--show")
    assert topped.exit_code == 0, topped.output
    assert "kept 0/3 paraphrases · 3 topped up" in topped.output and topped.output.count("(top-up, sampled)") == 3
    temperatures = sorted(c.body["temperature"] for c in upstream.calls_of("answer"))
    assert temperatures == [0.0, 0.7, 0.7, 0.7]


def test_adaptive_k_shows_what_it_did_not_need(upstream):
    upstream.reset()
    shown = upstream.whole_reply_first(lambda: _ask(upstream, "--adaptive", "--show"))
    assert shown.exit_code == 0, shown.output
    assert shown.output.count("not needed (adaptive k)") == 2 and "saved" in shown.output


def test_show_with_json_prints_the_table_to_stderr_and_json_alone_to_stdout(upstream):
    upstream.reset()
    both = _ask(upstream, "--show", "--json")
    assert both.exit_code == 0, both.output
    assert json.loads(both.stdout)["answer"] == "Paris"  # stdout holds the JSON and nothing else
    assert "pairs decided by" in both.stderr and "pairs decided by" not in both.stdout


def test_output_wraps_at_the_terminal_width_of_the_call(upstream, monkeypatch):
    # Within one process the width can change between calls (pytest, an embedding app); each call
    # wraps at the width it finds, as the stderr console is made per use.
    line = "warning: low vote share: the wordings disagree, treat this answer as unreliable"
    outputs = {}
    for width in ("200", "40"):
        monkeypatch.setenv("COLUMNS", width)
        upstream.reset(answers={0: "Paris", 1: "Lyon", 2: "Nice", 3: "Lille"})
        outputs[width] = _ask(upstream).output
    assert line in outputs["200"]
    assert line not in outputs["40"] and "warning: low vote share" in outputs["40"]
