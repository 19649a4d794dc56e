"""Re-voting a recorded run: a drift check added after the run drops the paraphrases it rejects,
the rest are voted again, a changed answer is graded again, and the result is a new arm."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from evaluation.datasets import save_items
from evaluation.records import Item, ItemVariant
from evaluation.report.data import build_report
from evaluation.revote import revote_run
from evaluation.runner import BenchConfig, RunOptions, run_bench
from selfpara.errors import ConfigError
from selfpara.models.client import ModelClient
from selfpara.testing import PARAPHRASE_MARKER, FakeBackend, default_responder, last_user_text

QUESTION = "What is the capital of Nigeria?"


def _responder(model: str, messages: list, params: dict) -> str:
    text = last_user_text(messages)
    if PARAPHRASE_MARKER in text:  # three qualifier drifts, all answered "Lagos"
        return (
            "1. Which is the largest city of Nigeria?\n2. Name the most populous Nigerian city.\n"
            "3. Tell me the main city in Nigeria."
        )
    return "Lagos" if any(w in text for w in ("largest", "populous", "main")) else "Abuja"


def _recorded_run(tmp_path: Path, respond: Any, arm: str, question: str = QUESTION, gold: str = "Abuja") -> dict:
    """Bench one question with `arm` on a fake model answering by `respond` into tmp_path/run; its first sample."""
    items = [Item(id="q", gold=[gold], variants=[ItemVariant(id=0, question=question)])]
    data = save_items(items, tmp_path / "d.jsonl")
    client = ModelClient(backend=FakeBackend(respond), retries=0, timeout_s=5)
    config = BenchConfig(dataset=str(data), arms=[arm], k=3)
    asyncio.run(run_bench(config, tmp_path / "run", RunOptions(client=client, progress=False)))
    return dict(json.loads((tmp_path / "run" / "samples.jsonl").read_text().splitlines()[0]))


@pytest.fixture
def run_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run recorded as before the paraphrase call alone was kept from overruling the original (every
    wording counted as independent of it), so that three drifted paraphrases outvoted it."""
    import selfpara.pipeline.request

    monkeypatch.setattr(
        selfpara.pipeline.request,
        "independent_wordings",
        lambda variants, given=False: {v.index for v in variants if v.index},
    )
    items = [Item(id="ng", gold=["Abuja"], variants=[ItemVariant(id=0, question=QUESTION)])]
    data = save_items(items, tmp_path / "d.jsonl")
    client = ModelClient(backend=FakeBackend(_responder), retries=0, timeout_s=5)
    config = BenchConfig(
        dataset=str(data),
        arms=["raw", "selfpara[drift_checks=numbers,entities;renamings=false;paraphrase_method=list]"],
        k=3,
    )
    asyncio.run(run_bench(config, tmp_path / "run", RunOptions(client=client, progress=False)))
    return tmp_path / "run"


def test_an_added_drift_check_drops_the_drifted_paraphrases_and_regrades(run_dir: Path, tmp_path: Path) -> None:
    lines = [json.loads(x) for x in (run_dir / "samples.jsonl").read_text().splitlines()]
    recorded = next(r for r in lines if r["arm"].startswith("selfpara"))
    assert recorded["answer"] == "Lagos" and recorded["label"] == "incorrect"  # the drift outvoted the original

    arm = recorded["arm"]
    changed = asyncio.run(
        revote_run(run_dir, tmp_path / "revoted", {"drift_checks": "numbers,entities,qualifiers"}, arm=arm, label="q")
    )
    assert [(c.before, c.after, c.label_after) for c in changed] == [("Lagos", "Abuja", "correct")]
    assert len(changed[0].dropped) == 3
    new = [json.loads(x) for x in (tmp_path / "revoted" / "samples.jsonl").read_text().splitlines()]
    revoted = next(r for r in new if r["arm"] == "q")
    assert revoted["answer"] == "Abuja" and revoted["details"]["vote_share"] == 1.0
    assert revoted["details"]["confidence"] == pytest.approx(2 / 3)  # the original's answer alone is left
    report = build_report(tmp_path / "revoted", consistency=None, n_boot=50)  # the new arm, scored
    assert json.dumps(report).count('"q"') >= 1
    assert len(lines) == len(new) - 1  # the source run is copied, not changed


def test_settings_that_would_need_new_answers_are_refused(run_dir: Path, tmp_path: Path) -> None:
    arm = next(json.loads(x)["arm"] for x in (run_dir / "samples.jsonl").read_text().splitlines() if "selfpara" in x)
    with pytest.raises(ConfigError, match="only add drift checks"):
        asyncio.run(revote_run(run_dir, tmp_path / "a", {"drift_checks": "numbers"}, arm=arm))
    with pytest.raises(ConfigError, match="runs no model"):
        asyncio.run(revote_run(run_dir, tmp_path / "b", {"equivalence": "exact,llm"}, arm=arm))
    with pytest.raises(ConfigError, match="top_up_temperature"):
        asyncio.run(revote_run(run_dir, tmp_path / "c", {"top_up_temperature": 0.7}, arm=arm))
    with pytest.raises(ConfigError, match="exists"):
        asyncio.run(revote_run(run_dir, run_dir, {"overrule_margin": 1}, arm=arm))


def test_a_topped_up_run_is_re_voted_with_its_samples_but_takes_no_new_drift_check(tmp_path: Path) -> None:
    arm = (
        "selfpara[top_up_temperature=0.7;renamings=false;paraphrase_method=list;"
        "drift_checks=numbers,entities,qualifiers]"
    )
    recorded = _recorded_run(tmp_path, _responder, arm)
    assert recorded["details"]["evidence"]["k_topped_up"] == 3 and recorded["answer"] == "Abuja"
    changed = asyncio.run(revote_run(tmp_path / "run", tmp_path / "m1", {"overrule_margin": 1}, arm=arm, label="m1"))
    assert changed == []  # the three samples of the original agree with it: the margin changes nothing
    with pytest.raises(ConfigError, match="topped-up"):
        asyncio.run(
            revote_run(
                tmp_path / "run",
                tmp_path / "x",
                {"drift_checks": "numbers,entities,qualifiers,asks"},
                arm=arm,
            )
        )


def test_the_command_line_re_votes_a_run_dir(run_dir: Path, tmp_path: Path) -> None:
    import subprocess
    import sys

    arm = next(json.loads(x)["arm"] for x in (run_dir / "samples.jsonl").read_text().splitlines() if "selfpara" in x)
    argv = [sys.executable, "-m", "evaluation.revote", str(run_dir), str(tmp_path / "cli"), "--arm", arm]
    done = subprocess.run(
        [*argv, "--set", "drift_checks=numbers,entities,qualifiers", "--label", "q"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "1 answers changed" in done.stdout and "incorrect -> correct" in done.stdout
    bad = subprocess.run([*argv, "--set", "k"], capture_output=True, text=True)
    assert bad.returncode == 2 and "SETTING=VALUE" in bad.stderr


def test_an_adaptive_arm_that_left_paraphrases_unanswered_is_re_voted_only_under_its_own_rule(tmp_path: Path) -> None:
    def respond(model: str, messages: list, params: dict) -> str:
        text = last_user_text(messages)
        return default_responder()(model, messages, params) if PARAPHRASE_MARKER in text else "Abuja"

    arm = (
        "selfpara[adaptive=true;paraphrase_check=off;equivalence=exact;renamings=false;paraphrase_method=list;"
        "drift_checks=numbers,entities,qualifiers]"
    )
    recorded = _recorded_run(tmp_path, respond, arm)
    assert recorded["details"]["evidence"]["skipped_paraphrases"]  # one agreeing paraphrase settled the vote
    with pytest.raises(ConfigError, match="1 of 1 samples .* left paraphrases unanswered"):
        asyncio.run(revote_run(tmp_path / "run", tmp_path / "m1", {"overrule_margin": 1}, arm=arm))
    with pytest.raises(ConfigError, match="unanswered"):
        asyncio.run(
            revote_run(
                tmp_path / "run",
                tmp_path / "d",
                {"drift_checks": "numbers,entities,qualifiers,asks"},
                arm=arm,
            )
        )
    # the low-vote-share policy only reads the answers the vote had: replayable
    changed = asyncio.run(revote_run(tmp_path / "run", tmp_path / "la", {"low_vote_share": "abstain"}, arm=arm))
    assert changed == []


def test_the_oracle_is_re_voted_with_its_given_wordings_unfiltered(tmp_path: Path) -> None:
    """The oracle's wordings are the dataset's, never drift-checked live: a margin-1 re-vote keeps them all."""
    wordings = [QUESTION, "Which is the largest city of Nigeria?", "Name the most populous Nigerian city."]
    items = [Item(id="ng", gold=["Abuja"], variants=[ItemVariant(id=i, question=q) for i, q in enumerate(wordings)])]
    data = save_items(items, tmp_path / "d.jsonl")
    client = ModelClient(backend=FakeBackend(_responder), retries=0, timeout_s=5)
    config = BenchConfig(dataset=str(data), arms=["oracle[equivalence=exact]"], k=2)
    asyncio.run(run_bench(config, tmp_path / "run", RunOptions(client=client, progress=False)))
    arm = "oracle[equivalence=exact]"
    # live, margin 2: Lagos, Lagos against Abuja is a one-vote lead, so the original keeps Abuja
    changed = asyncio.run(revote_run(tmp_path / "run", tmp_path / "m1", {"overrule_margin": 1}, arm=arm))
    # at margin 1 the two given wordings (which the qualifiers check would reject) outvote it
    assert [(c.variant_id, c.before, c.after, c.dropped) for c in changed] == [(0, "Abuja", "Lagos", [])]
    narrow = "oracle[equivalence=exact;drift_checks=numbers]"
    config = BenchConfig(dataset=str(data), arms=[narrow], k=2)
    asyncio.run(run_bench(config, tmp_path / "narrow", RunOptions(client=client, progress=False)))
    with pytest.raises(ConfigError, match="given wordings"):
        asyncio.run(revote_run(tmp_path / "narrow", tmp_path / "d", {"drift_checks": "numbers,qualifiers"}, arm=narrow))


def test_doubt_first_replays_on_an_always_on_run_with_the_raw_arm_s_cost(tmp_path: Path) -> None:
    """A sure original keeps its own answer at the cost of the raw arm's one call; a doubtful one keeps the vote."""
    import math

    from selfpara.pipeline.prompts import JUDGE_MARKER
    from selfpara.result import Completion

    def respond(model: str, messages: list, params: dict) -> Any:
        text = last_user_text(messages)
        if PARAPHRASE_MARKER in text or JUDGE_MARKER in text:
            return default_responder()(model, messages, params)
        if text == "What is the capital of Nigeria?":  # sure and wrong
            return Completion(text="Lagos", logprob=math.log(0.95))
        if text == "What is the capital of Kenya?":  # in doubt and wrong
            return Completion(text="Mombasa", logprob=math.log(0.4))
        return Completion(text="Abuja" if "Nigeria" in text else "Nairobi", logprob=-0.01)

    items = [
        Item(id="ng", gold=["Abuja"], variants=[ItemVariant(id=0, question="What is the capital of Nigeria?")]),
        Item(id="ke", gold=["Nairobi"], variants=[ItemVariant(id=0, question="What is the capital of Kenya?")]),
    ]
    data = save_items(items, tmp_path / "d.jsonl")
    client = ModelClient(backend=FakeBackend(respond), retries=0, timeout_s=5)
    arms = ["raw", "selfpara[overrule_margin=1;renamings=false;equivalence=exact]"]
    config = BenchConfig(dataset=str(data), model="openai/fake", arms=arms, k=3, answers="natural", max_tokens=32)
    asyncio.run(run_bench(config, tmp_path / "run", RunOptions(client=client, progress=False)))
    label = "selfpara[overrule_margin=1;renamings=false;equivalence=exact]"
    asyncio.run(revote_run(tmp_path / "run", tmp_path / "gated", {"sure_probability": 0.9}, arm=label, label="gated"))
    records = {
        (r["arm"], r["item_id"]): r
        for r in map(json.loads, (tmp_path / "gated" / "samples.jsonl").read_text().splitlines())
    }
    voted, gated, raw = records[(label, "ng")], records[("gated", "ng")], records[("raw", "ng")]
    assert voted["answer"] == "Abuja" and voted["calls"] > 1  # the vote corrected it, at several calls
    assert gated["answer"] == "Lagos" and gated["calls"] == raw["calls"] == 1  # sure: no vote, one call
    assert gated["details"]["revote"]["voted"] is False
    kenya = records[("gated", "ke")]
    assert kenya["answer"] == records[(label, "ke")]["answer"] and kenya["calls"] == records[(label, "ke")]["calls"]
    # a vote budget of one call per answer holds back the doubtful one's vote: raw's answer, at one call
    asyncio.run(revote_run(tmp_path / "run", tmp_path / "b", {"sure_probability": 0.9, "vote_budget": 1.0}, arm=label))
    capped = [json.loads(line) for line in (tmp_path / "b" / "samples.jsonl").read_text().splitlines()]
    kenya = next(r for r in capped if r["item_id"] == "ke" and r["arm"] not in ("raw", label))
    assert kenya["answer"] == "Mombasa" and kenya["calls"] == 1 and kenya["details"]["revote"]["voted"] is False
    with pytest.raises(ConfigError, match="voted on every question"):
        asyncio.run(revote_run(tmp_path / "gated", tmp_path / "x", {"sure_probability": 0.5}, arm="gated"))
    samples = tmp_path / "run" / "samples.jsonl"
    samples.write_text("".join(line + "\n" for line in samples.read_text().splitlines() if '"arm":"raw"' not in line))
    with pytest.raises(ConfigError, match="raw arm"):
        asyncio.run(revote_run(tmp_path / "run", tmp_path / "y", {"sure_probability": 0.5}, arm=label))
