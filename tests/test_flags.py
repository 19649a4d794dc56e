"""The renamed flag low_agreement -> low_vote_share: carried under both names for one release, read either way."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

from evaluation.revote import arm_config
from evaluation.rundir import read_config
from selfpara.result import WrappedAnswer, current_flags, with_deprecated_flags

RUN = Path(__file__).parent / "fixtures" / "run_gsm8k_held5"


def _wrapped(flags: list[str]) -> WrappedAnswer:
    return WrappedAnswer(
        answer="Paris",
        question="Capital of France?",
        model="openai/fake",
        k_requested=1,
        k_kept=0,
        variants=[],
        answers=[],
        clusters=[],
        winner=0,
        vote_share=0.5,
        confidence=0.5,
        entropy=0.0,
        entropy_normalized=0.0,
        original_won=True,
        flags=flags,  # type: ignore[arg-type]
    )


def test_a_flagged_answer_carries_the_new_flag_and_the_old_one_after_it() -> None:
    assert _wrapped(["partial_failure", "low_vote_share"]).flags == [
        "partial_failure",
        "low_vote_share",
        "low_agreement",
    ]
    assert _wrapped(["partial_failure"]).flags == ["partial_failure"]
    dumped = _wrapped(["low_vote_share"]).model_dump(mode="json")
    assert dumped["flags"] == ["low_vote_share", "low_agreement"]
    assert WrappedAnswer.model_validate(dumped).flags == ["low_vote_share", "low_agreement"]  # a round trip adds none


def test_an_answer_recorded_with_the_old_flag_alone_reads_as_the_new_one_too() -> None:
    assert _wrapped(["low_agreement", "original_kept"]).flags == ["low_vote_share", "low_agreement", "original_kept"]
    assert with_deprecated_flags(["low_agreement", "low_vote_share"]) == ["low_vote_share", "low_agreement"]


def test_counted_flags_name_a_renamed_flag_once_as_it_was_recorded() -> None:
    assert current_flags(["low_vote_share", "low_agreement", "no_paraphrases"]) == ["low_vote_share", "no_paraphrases"]
    assert current_flags(["low_agreement", "no_paraphrases"]) == ["low_agreement", "no_paraphrases"]  # an old run


def test_the_recorded_run_s_samples_hold_the_old_flag() -> None:
    # the report fixture (tests/test_eval_report_fixture.py) renders these as "low_agreement 4"
    samples = [json.loads(line) for line in (RUN / "samples.jsonl").read_text(encoding="utf-8").splitlines()]
    flags = [f for s in samples for f in s["details"].get("flags") or []]
    assert "low_agreement" in flags and "low_vote_share" not in flags


def test_a_run_recorded_with_the_old_setting_names_replays_under_the_new_ones_without_a_warning() -> None:
    config = read_config(RUN)
    recorded = next(a["config"] for a in config["arms"] if a["label"] == "oracle")
    assert recorded["low_agreement"] == "flag" and recorded["low_agreement_threshold"] == 0.6
    recorded.update(low_agreement="abstain", low_agreement_threshold=0.45, adaptive_agreement=0.9)  # not defaults
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the recorded names are not the caller's to change
        cfg = arm_config(config, "oracle")
    assert (cfg.low_vote_share, cfg.low_vote_share_threshold, cfg.adaptive_vote_share) == ("abstain", 0.45, 0.9)
