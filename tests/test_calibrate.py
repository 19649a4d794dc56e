"""`selfpara calibrate`, end to end: a threshold chosen on half of a labelled run and checked on the other,
written as a settings file, and read back by the library, `ask --settings` and the proxy, which then
flag (or withhold) answers below it."""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evaluation.calibrate import split_questions
from evaluation.datasets import save_items
from evaluation.records import Item, ItemVariant
from evaluation.runner import BenchConfig, RunOptions, run_bench
from evaluation.stats import clopper_pearson_upper
from selfpara import config_from_file
from selfpara.cli import app
from selfpara.config.file import read_settings_file
from selfpara.models.client import ModelClient
from selfpara.pipeline.decision import decide_answer
from selfpara.pipeline.prompts import JUDGE_MARKER, PARAPHRASE_MARKER
from selfpara.result import Answer
from selfpara.server.settings import load_settings
from selfpara.testing import FakeBackend, last_user_text
from tests.fake_upstream import FakeUpstream
from tests.helpers.proxy import PROXY_KEY, UPSTREAM_KEY, chat, post, start

FIXTURE = Path(__file__).parent / "fixtures" / "run_gsm8k_held5"
TARGET, CONFIDENCE = 0.3, 0.8
UNANIMOUS_WRONG = {5}
runner = CliRunner()


def _kind(i: int) -> str:
    return "unanimous-wrong" if i in UNANIMOUS_WRONG else "split" if i % 3 == 0 else "easy"


def _responder(model: str, messages: list, params: dict) -> str:
    """Land{i}: easy ones answered Paris by every wording; every third split four ways with the original
    wrong (confidence 1/3); one answered Lyon by every wording (confidence 5/6, wrong)."""
    text = last_user_text(messages)
    i = int(text.rsplit("Land", 1)[1].split("?")[0].split()[0].strip(".,:"))
    if PARAPHRASE_MARKER in text:
        lines = [
            f"Which city serves as the capital of Land{i}?",
            f"Name the capital city of Land{i}.",
            f"Land{i}: capital city?",
        ]
        return "\n".join(f"{n}. {line}" for n, line in enumerate(lines, 1))
    if JUDGE_MARKER in text:
        return "YES"
    kind = _kind(i)
    if kind == "easy":
        return "Paris"
    if kind == "unanimous-wrong":
        return "Lyon"
    return {"Which": "Nice", "Name": "Lille"}.get(text.split()[0], "Paris" if text.startswith(f"Land{i}:") else "Lyon")


@pytest.fixture(scope="module")
def upstream() -> Iterator[FakeUpstream]:
    from tests.fake_upstream import serve_fake

    yield from serve_fake()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, upstream: FakeUpstream) -> Path:
    """A labelled run of the selfpara arm on 40 questions, on a fake openai/ model (the fake upstream's name)
    that lives at the fake upstream's URL (the run's answers come from a scripted backend)."""
    tmp = tmp_path_factory.mktemp("calibrate")
    items = [
        Item(
            id=f"land-{i:02d}",
            gold=["Paris"],
            # a shape the renamings table does not read: every wording is the scripted list's
            variants=[ItemVariant(id=0, question=f"Capital of Land{i}, please?")],
        )
        for i in range(40)
    ]
    data = save_items(items, tmp / "items.jsonl")
    client = ModelClient(backend=FakeBackend(_responder), retries=0, timeout_s=5)
    config = BenchConfig(
        dataset=str(data), model="openai/fake", api_base=upstream.url, arms=["selfpara"], k=3, limit=None
    )
    result = asyncio.run(run_bench(config, tmp / "run", RunOptions(client=client, progress=False)))
    assert result.complete and not result.failed
    return result.out


def _calibrate(*args: str) -> Any:
    return runner.invoke(app, ["calibrate", *args])


@pytest.fixture(scope="module")
def calibration(run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cal") / "calibration.toml"
    args = [str(run), "--target-error", str(TARGET), "--confidence", str(CONFIDENCE), "--out", str(out)]
    assert _calibrate(*args).exit_code == 0
    return out


def test_the_threshold_is_chosen_on_one_half_checked_on_the_other_and_written(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "cal.toml"
    args = [str(run), "--target-error", str(TARGET), "--confidence", str(CONFIDENCE), "--out", str(out)]
    result = _calibrate(*args, "--json")
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    # recount from the per-sample log, by the same seeded split
    records = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    choose, check = split_questions([r["item_id"] for r in records], 0.5, seed=0)
    confidence = {r["item_id"]: r["details"]["confidence"] for r in records}
    right = {r["item_id"]: r["label"] == "correct" for r in records}
    threshold = got["choice"]["threshold"]
    assert threshold == pytest.approx(5 / 6)  # the unanimous votes: (4 + 1) / (4 + 2)
    covered = [q for q in choose if confidence[q] >= threshold]
    errors = sum(1 for q in covered if not right[q])
    assert (got["choice"]["covered"], got["choice"]["errors"], got["choice"]["attempted"]) == (
        len(covered),
        errors,
        len(choose),
    )
    assert got["choice"]["bound"] == pytest.approx(clopper_pearson_upper(errors, len(covered), CONFIDENCE))
    assert (
        got["choice"]["bound"]
        <= TARGET
        < clopper_pearson_upper(sum(not right[q] for q in choose), len(choose), CONFIDENCE)
    )  # answering everything would not keep the target
    held = [q for q in check if confidence[q] >= threshold]
    assert got["check"]["covered"] == len(held) and got["check"]["errors"] == sum(not right[q] for q in held)
    assert got["check"]["within_target"] == (got["check"]["error"] <= TARGET)
    assert got["written"] == str(out)

    written = read_settings_file(out)  # the TOML every entry point reads
    assert written.upstream["confidence_threshold"] == threshold and written.upstream["low_vote_share"] == "flag"
    assert written.upstream["model"] == "openai/fake" and written.upstream["k"] == 3
    # where the model lives is written (ask --settings reaches it), but not as a calibrated setting
    assert written.upstream["api_base"] == got["arm_config"]["api_base"]
    assert "timeout_s" not in written.upstream and not written.server
    record = written.calibration
    assert record is not None
    assert (record["arm"], record["target_error"], record["confidence"], record["n"]) == (
        "selfpara",
        TARGET,
        CONFIDENCE,
        len(choose),
    )
    assert (record["bound"], record["coverage"], record["covered"]) == (
        got["choice"]["bound"],
        got["choice"]["coverage"],
        len(covered),
    )
    assert record["check"]["covered"] == len(held) and record["settings"]["k"] == 3
    assert "api_base" not in record["settings"]

    printed = _calibrate(*args)
    assert printed.exit_code == 0
    assert f"expected coverage {100 * got['choice']['coverage']:.1f}%" in printed.stdout
    assert "held out:" in printed.stdout and f"written to {out}" in printed.stdout


def test_calibrate_says_why_questions_dropped_out(run: Path, tmp_path: Path) -> None:
    partial = tmp_path / "partial"
    shutil.copytree(run, partial)
    lines = (partial / "samples.jsonl").read_text().splitlines()[:30]  # an interrupted run: 10 never answered
    failed = json.loads(lines[0])
    failed["error"] = "openai/fake: upstream error 500"
    (partial / "samples.jsonl").write_text("\n".join([json.dumps(failed), *lines[1:]]) + "\n")
    args = [str(partial), "--target-error", "0.5", "--confidence", "0.5", "--out", str(tmp_path / "c.toml")]
    got = json.loads(_calibrate(*args, "--json").stdout)
    assert got["questions_in_run"] == 40 and got["left_out"] == {"not_run": 10, "failed": 1}
    assert got["questions_choose"] + got["questions_check"] == 29
    printed = " ".join(_calibrate(*args).stdout.split())
    assert "29 of the run's 40 questions have an answer to calibrate on; left out: 10 not answered yet" in printed
    assert "1 whose answer call failed" in printed
    whole = _calibrate(str(run), "--target-error", "0.5", "--confidence", "0.5", "--out", str(tmp_path / "w.toml"))
    assert "left out" not in whole.stdout  # every question counted: nothing to explain


def test_the_library_reads_the_threshold_and_the_policy_acts_on_the_confidence(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "cal.json"  # JSON works as well as TOML
    result = _calibrate(str(run), "--target-error", str(TARGET), "--confidence", str(CONFIDENCE), "-o", str(out))
    assert result.exit_code == 0, result.output
    cfg = config_from_file(out)
    threshold = json.loads(out.read_text())["upstream"]["confidence_threshold"]
    assert cfg.confidence_threshold == threshold and cfg.k == 3

    class Vote:
        returned, vote_share = 0, 1.0  # a vote share that would never be flagged

        def __init__(self, confidence: float) -> None:
            self.confidence = confidence

    answers = [Answer(variant=0, text="Paris")]
    assert decide_answer(Vote(threshold), answers, cfg).flags == []
    assert decide_answer(Vote(threshold - 0.01), answers, cfg).flags == ["low_confidence"]
    withheld = decide_answer(Vote(threshold - 0.01), answers, cfg.with_overrides(low_vote_share="abstain"))
    assert withheld.withheld == "Paris" and withheld.answer == cfg.abstention_text


def test_a_setting_that_leaves_the_calibrated_ones_is_a_warning(
    calibration: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="selfpara.config.file"):
        assert config_from_file(calibration).k == 3 and not caplog.records
        assert config_from_file(calibration, k=5).k == 5
    assert "k: calibrated 3, now 5" in caplog.text and "does not carry over" in caplog.text


ASKED = "Capital of France, please?"  # no renaming: the fake upstream answers its scripted paraphrases


def _ask(upstream: FakeUpstream, *args: str) -> Any:
    return runner.invoke(
        app,
        ["ask", ASKED, "--api-base", upstream.url, *args],
        env={"OPENAI_API_KEY": "sk-test-0000"},
    )


def test_ask_reads_the_threshold_from_its_settings_file(upstream: FakeUpstream, calibration: Path) -> None:
    upstream.reset()  # every wording answers Paris: confidence 5/6, at the threshold
    # no --api-base: the file says where the calibrated model lives
    agreed = runner.invoke(
        app, ["ask", ASKED, "--settings", str(calibration), "--json"], env={"OPENAI_API_KEY": "sk-test-0000"}
    )
    assert agreed.exit_code == 0, agreed.output
    report = json.loads(agreed.stdout)
    assert report["model"] == "openai/fake" and report["k_requested"] == 3  # the file's settings
    assert report["confidence"] == pytest.approx(5 / 6) and "low_confidence" not in report["flags"]
    assert upstream.calls_of("answer")  # reached at the run's api base, not the provider's default URL

    upstream.reset(answers={0: "Paris", 1: "Lyon", 2: "Nice", 3: "Lille"})
    flagged = _ask(upstream, "--settings", str(calibration))
    assert flagged.exit_code == 0, flagged.output
    assert flagged.stdout.splitlines()[0] == "Paris" and "warning: low confidence" in flagged.output
    assert "calibrated under" not in flagged.output

    upstream.reset(answers={0: "Paris", 1: "Lyon", 2: "Nice", 3: "Lille"})
    withheld = _ask(upstream, "--settings", str(calibration), "--low-vote-share", "abstain", "--json")
    report = json.loads(withheld.stdout)
    assert report["withheld_answer"] == "Paris" and report["flags"][-1] == "low_confidence"

    upstream.reset()
    moved = _ask(upstream, "--settings", str(calibration), "-k", "2")  # a flag given overrides the file
    assert moved.exit_code == 0, moved.output
    assert "note: these settings leave the ones the confidence threshold was calibrated under" in moved.output
    said = " ".join(moved.output.split())
    assert said.count("calibrated under") == 1 and "(k: calibrated 3, now 2)" in said  # once, naming what moved


def test_a_bad_value_in_the_settings_file_is_exit_1_and_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[upstream]\nconfidence_threshold = 3\n")
    result = runner.invoke(app, ["ask", "Capital of France?", "--settings", str(bad)])
    assert result.exit_code == 1 and "confidence_threshold" in result.output and "Traceback" not in result.output
    shutil.copy(bad, tmp_path / "bad.json")
    (tmp_path / "bad.json").write_text("{")
    result = runner.invoke(app, ["ask", "Capital of France?", "--settings", str(tmp_path / "bad.json")])
    assert result.exit_code == 1 and "cannot parse config file" in result.output


def test_the_proxy_flags_and_withholds_below_the_calibrated_threshold(
    upstream: FakeUpstream, calibration: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="selfpara.config.file"):
        settings = load_settings(
            calibration,
            upstream={"api_base": upstream.url, "api_key": UPSTREAM_KEY, "cache": "off", "timeout_s": 3.0},
            server={"api_key": PROXY_KEY},
        )
    assert settings.upstream.confidence_threshold == pytest.approx(5 / 6) and not caplog.records
    server = start(settings)
    try:
        upstream.reset()
        agreed = post(server, chat(ASKED))
        assert agreed.status_code == 200 and agreed.headers["x-selfpara-low-confidence"] == "false"
        upstream.reset(answers={0: "Paris", 1: "Lyon", 2: "Nice", 3: "Lille"})
        flagged = post(server, chat(ASKED))
        assert flagged.headers["x-selfpara-low-confidence"] == "true"
        assert flagged.headers["x-selfpara-low-vote-share"] == "false"  # one policy: it read the confidence
        assert flagged.json()["choices"][0]["message"]["content"] == "Paris"
        upstream.reset(answers={0: "Paris", 1: "Lyon", 2: "Nice", 3: "Lille"})
        withheld = post(server, chat(ASKED, selfpara={"low_vote_share": "abstain"}))
        report = withheld.json()["selfpara"]
        assert report["withheld_answer"] == "Paris" and "low_confidence" in report["flags"]
        assert withheld.json()["choices"][0]["message"]["content"] == settings.upstream.abstention_text
    finally:
        server.stop()


def test_a_recorded_run_calibrates_an_arm_it_cannot_deploy_and_says_so(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    measured = _calibrate(
        str(run), "--arm", "oracle", "--target-error", "0.6", "--confidence", "0.5", "--split", "1", "--all-wordings"
    )
    assert measured.exit_code == 0, measured.output
    assert "threshold " in measured.stdout and "the promise is unchecked" in measured.stdout
    assert not (run / "calibration.toml").exists()  # the oracle's confidence is not what a wrapper computes
    refused = _calibrate(
        str(run),
        "--arm",
        "oracle",
        "--target-error",
        "0.6",
        "--confidence",
        "0.5",
        "--split",
        "1",
        "--all-wordings",
        "--out",
        str(tmp_path / "c.toml"),
    )
    assert refused.exit_code == 1 and "not the wrapper" in refused.output
    none = _calibrate(str(run), "--arm", "oracle", "--target-error", "0.1")
    assert none.exit_code == 1 and "no threshold keeps error ≤ 0.1" in none.stdout
    assert _calibrate(str(run), "--arm", "raw", "--target-error", "0.5").exit_code == 1  # no token probabilities
    unknown = _calibrate(str(run), "--arm", "selfpara", "--target-error", "0.5")
    assert unknown.exit_code == 1 and "no arm 'selfpara' in this run; it has raw, oracle" in unknown.output
    assert _calibrate(str(run), "--arm", "oracle", "--target-error", "0").exit_code == 2
