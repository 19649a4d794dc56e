"""Confidence metrics against values computed by hand."""

from __future__ import annotations

import math

import pytest

from evaluation.metrics.signals import (
    abstention_scores,
    accuracy_at_coverage,
    auroc,
    auroc_interval,
    confidence_summary,
    risk_coverage,
    threshold_policy,
)
from evaluation.records import SampleRecord
from evaluation.report.data import confidence_signals
from selfpara.errors import ConfigError

# The hand table (five attempted answers and one abstention):
#
#   answer  score  label           correct
#   a       1.00   correct         yes
#   b       0.75   correct         yes
#   c       0.75   incorrect       no
#   d       0.50   incorrect       no
#   e       0.50   correct         yes
#   f       1.00   not_attempted   (left out of AUROC / coverage)
SCORES = [1.0, 0.75, 0.75, 0.5, 0.5]
CORRECT = [True, True, False, False, True]
LABELS = ["correct", "correct", "incorrect", "incorrect", "correct", "not_attempted"]


def test_auroc_counts_ties_as_one_half() -> None:
    """Pairs (correct, wrong): (a,c)=1 (a,d)=1 (b,c)=½ tie (b,d)=1 (e,c)=0 (e,d)=½ tie → 4/6."""
    assert auroc(SCORES, CORRECT) == pytest.approx(4 / 6)


def test_auroc_extremes_and_undefined() -> None:
    """Perfect ranking 1, reversed 0, all tied ½; no wrong answer: undefined (None)."""
    assert auroc([3, 2, 1], [True, True, False]) == 1.0
    assert auroc([1, 2, 3], [True, True, False]) == 0.0
    assert auroc([1, 1, 1, 1], [True, False, True, False]) == 0.5
    assert auroc([0.2, 0.9], [True, True]) is None
    assert auroc([], []) is None


def test_auroc_does_not_depend_on_input_order() -> None:
    order = [4, 2, 0, 3, 1]
    assert auroc([SCORES[i] for i in order], [CORRECT[i] for i in order]) == pytest.approx(4 / 6)


def test_accuracy_at_coverage_takes_ties_at_their_mean() -> None:
    """40%: keep 2 = a (right) + one of the tied b/c (½ right on average) → 1.5/2 = 0.75.
    50%: keep ⌈2.5⌉ = 3 = a + both tied (b right, c wrong) → 2/3.  100%: 3/5."""
    assert accuracy_at_coverage(SCORES, CORRECT, 0.4) == pytest.approx(0.75)
    assert accuracy_at_coverage(SCORES, CORRECT, 0.5) == pytest.approx(2 / 3)
    assert accuracy_at_coverage(SCORES, CORRECT, 1.0) == pytest.approx(0.6)
    assert accuracy_at_coverage(SCORES, CORRECT, 0.01) == pytest.approx(1.0)  # at least one answer: a
    with pytest.raises(ConfigError):
        accuracy_at_coverage(SCORES, CORRECT, 0.0)


def test_risk_coverage_curve() -> None:
    """t=1: a only (cov 1/5, acc 1); t=.75: a,b,c (3/5, 2/3); t=.5: all (1, 3/5)."""
    curve = risk_coverage(SCORES, CORRECT)
    assert [p["threshold"] for p in curve] == [1.0, 0.75, 0.5]
    assert [p["coverage"] for p in curve] == pytest.approx([0.2, 0.6, 1.0])
    assert [p["accuracy"] for p in curve] == pytest.approx([1.0, 2 / 3, 0.6])
    assert [p["risk"] for p in curve] == pytest.approx([0.0, 1 / 3, 0.4])


def test_abstention_scores_by_hand() -> None:
    """6 right, 2 wrong, 2 abstained: overall .6, given-attempted .75, F = 2·.6·.75/1.35 = 2/3;
    score@.5 = (6−2)/10, score@.75 = (6−2·3)/10 = 0, score@.9 = (6−2·9)/10 = −1.2."""
    s = abstention_scores(6, 2, 2)
    assert s["overall_correct"] == pytest.approx(0.6)
    assert s["correct_given_attempted"] == pytest.approx(0.75)
    assert s["f_score"] == pytest.approx(2 / 3)
    assert s["attempted_rate"] == pytest.approx(0.8)
    assert s["score@0.5"] == pytest.approx(0.4)
    assert s["score@0.75"] == pytest.approx(0.0)
    assert s["score@0.9"] == pytest.approx(-1.2)


def test_abstaining_beats_a_wrong_answer() -> None:
    """Turning a wrong answer into an abstention raises the score and leaves overall accuracy alone."""
    wrong = abstention_scores(5, 5, 0)
    abstain = abstention_scores(5, 4, 1)
    assert abstain["score@0.5"] > wrong["score@0.5"]
    assert abstain["overall_correct"] == wrong["overall_correct"]
    none = abstention_scores(0, 0, 4)
    assert none["correct_given_attempted"] is None and none["f_score"] is None and none["overall_correct"] == 0.0


def test_threshold_policy_by_hand() -> None:
    """Score f=1.0 is a model abstention, never counted as given. At t=.75 a,b,c are given
    (2 right, 1 wrong), 3 of 6 abstained: coverage .5, accuracy 2/3, overall 1/3,
    F = 2·(1/3)(2/3)/1 = 4/9, score@.5 = (2−1)/6."""
    rows = threshold_policy([*SCORES, 1.0], LABELS, thresholds=[0.75, 1.01, 0.0])
    t75 = rows[0]
    assert (t75["correct"], t75["incorrect"], t75["not_attempted"]) == (2, 1, 3)
    assert t75["attempted_rate"] == pytest.approx(0.5)
    assert t75["correct_given_attempted"] == pytest.approx(2 / 3)
    assert t75["f_score"] == pytest.approx(4 / 9)
    assert t75["score@0.5"] == pytest.approx(1 / 6)
    assert rows[1]["attempted"] == 0 and rows[1]["correct_given_attempted"] is None
    assert (rows[2]["correct"], rows[2]["incorrect"]) == (3, 2)


def test_auroc_interval_resamples_questions() -> None:
    """One question holding every answer: every resample is the sample itself, so lo = hi = AUROC.
    One question per answer: the CI brackets the point and repeats with the seed."""
    lo, hi = auroc_interval(SCORES, CORRECT, ["q"] * 5, n_boot=50)
    assert lo == pytest.approx(4 / 6) and hi == pytest.approx(4 / 6)
    ids = ["q1", "q2", "q3", "q4", "q5"]
    lo, hi = auroc_interval(SCORES, CORRECT, ids, n_boot=300, seed=3)
    assert lo is not None and hi is not None and lo <= 4 / 6 <= hi and lo < hi
    assert auroc_interval(SCORES, CORRECT, ids, n_boot=300, seed=3) == (lo, hi)


def test_confidence_summary_leaves_abstentions_out_of_auroc() -> None:
    ids = ["q1", "q1", "q2", "q2", "q3", "q3"]
    summary = confidence_summary(ids, LABELS, {"vote_share": [*SCORES, 1.0]}, n_boot=100)
    assert summary["answers"] == 6 and summary["attempted"] == 5
    vs = summary["signals"]["vote_share"]
    assert vs["auroc"] == pytest.approx(4 / 6)
    assert vs["coverage"]["0.5"] == pytest.approx(2 / 3)
    assert vs["coverage"]["1"] == pytest.approx(0.6)
    assert len(vs["curve"]) == 3
    assert [row["threshold"] for row in summary["policy"]] == [0.5, 0.6, 0.75, 1.0]
    with pytest.raises(ConfigError):
        confidence_summary(ids, LABELS, {"vote_share": [1.0]})


def _record(details: dict[str, float]) -> SampleRecord:
    return SampleRecord(
        item_id="q", variant_id=0, is_original=True, arm="selfpara", answer="a", label="correct", details=details
    )


def test_the_report_scores_the_confidence_where_every_answer_carries_one() -> None:
    both = [_record({"vote_share": 1.0, "confidence": 0.6}), _record({"vote_share": 0.5, "confidence": 0.4})]
    assert confidence_signals(both) == {"vote_share": [1.0, 0.5], "confidence": [0.6, 0.4]}
    older = [both[0], _record({"vote_share": 0.5})]  # a run saved before the confidence existed
    assert confidence_signals(older) == {"vote_share": [1.0, 0.5]}


def test_runs_saved_before_the_confidence_get_it_from_their_evidence() -> None:
    evidence = {
        "winner": 1,
        "clusters": [{"id": 0, "members": [0]}, {"id": 1, "members": [1, 2], "mean_logprob": math.log(0.8)}],
    }
    old = _record({"vote_share": 2 / 3, "evidence": evidence})
    assert confidence_signals([old])["confidence"] == [pytest.approx(3 / 5 * 0.8)]
    assert confidence_signals([_record({"vote_share": 1.0})]) == {"vote_share": [1.0]}  # no evidence: none
