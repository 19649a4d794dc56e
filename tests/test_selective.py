"""Selective prediction by hand: PRR, ECE, the Clopper–Pearson bound and the threshold it picks, on small
cases worked out on paper (the fractions in the comments)."""

from __future__ import annotations

import itertools
import math

import pytest

from evaluation import stats
from evaluation.calibrate import check_threshold, choose_threshold, fewest_to_promise, split_questions
from evaluation.metrics.selective import expected_calibration_error, prediction_rejection_ratio, rejection_curve
from evaluation.metrics.signals import confidence_summary
from selfpara.errors import ConfigError

SCORES = [1.0, 0.75, 0.75, 0.5, 0.5]
CORRECT = [True, True, False, False, True]


def test_the_rejection_curve_counts_a_tied_block_at_its_mean() -> None:
    # surest 1 (right); then the two .75s, one right: 1.5 of 2, 2 of 3; then the .5s, one right
    assert rejection_curve(SCORES, CORRECT).tolist() == pytest.approx([1, 3 / 4, 2 / 3, 5 / 8, 3 / 5])


def test_prr_of_the_hand_table() -> None:
    # area (1 + 3/4 + 2/3 + 5/8 + 3/5) / 5 = 437/600; random 3/5 = 360/600; oracle (1+1+1+3/4+3/5)/5 = 522/600
    assert prediction_rejection_ratio(SCORES, CORRECT) == pytest.approx(77 / 162)


def test_prr_is_1_for_the_oracle_order_0_for_no_order_and_negative_when_reversed() -> None:
    assert prediction_rejection_ratio([0.9, 0.8, 0.3], [True, True, False]) == pytest.approx(1.0)
    assert prediction_rejection_ratio([0.5] * 4, [True, False, True, False]) == pytest.approx(0.0)
    # reversed: area (0 + 1/2 + 2/3)/3 = 7/18, random 12/18, oracle 16/18: (7 − 12) / (16 − 12)
    assert prediction_rejection_ratio([0.1, 0.2, 0.9], [True, True, False]) == pytest.approx(-5 / 4)


def test_prr_does_not_depend_on_the_order_of_the_input() -> None:
    values = {
        round(prediction_rejection_ratio([SCORES[i] for i in p], [CORRECT[i] for i in p]) or 0.0, 12)
        for p in itertools.permutations(range(5))
    }
    assert values == {round(77 / 162, 12)}


def test_prr_is_undefined_without_both_a_right_and_a_wrong_answer() -> None:
    assert prediction_rejection_ratio([0.9, 0.1], [True, True]) is None
    assert prediction_rejection_ratio([0.9, 0.1], [False, False]) is None
    assert prediction_rejection_ratio([], []) is None


def test_ece_of_the_hand_table() -> None:
    # bins 9, 8, 3, 3: |1 − .95| + |0 − .85| + 2·|½ − .325| = .05 + .85 + .35, over 4 answers
    assert expected_calibration_error([0.95, 0.85, 0.35, 0.3], [True, False, False, True]) == pytest.approx(0.3125)
    assert expected_calibration_error([0.5, 0.5], [True, False]) == pytest.approx(0.0)
    assert expected_calibration_error([1.0, 0.9], [True, True]) == pytest.approx(0.05)  # 1.0 is in the last bin
    assert expected_calibration_error([], []) is None
    with pytest.raises(ConfigError, match=r"ECE needs scores in \[0, 1\]"):
        expected_calibration_error([-0.3], [True])


def test_the_summary_gives_prr_and_ece_and_no_ece_for_a_negated_entropy() -> None:
    summary = confidence_summary(
        ["a", "b", "c", "d", "e"],
        ["correct", "correct", "incorrect", "incorrect", "correct"],
        {"confidence": SCORES, "-entropy": [-s for s in SCORES]},
        n_boot=50,
    )
    confidence = summary["signals"]["confidence"]
    assert confidence["prr"] == pytest.approx(77 / 162) and confidence["ece"] is not None
    assert set(confidence["coverage"]) == {"0.5", "0.8", "0.9", "1"}
    assert summary["signals"]["-entropy"]["ece"] is None


def test_the_clopper_pearson_upper_bound_of_hand_cases() -> None:
    assert stats.clopper_pearson_upper(0, 10, 0.95) == pytest.approx(1 - 0.05 ** (1 / 10))  # (1 − p)^10 = .05
    upper = stats.clopper_pearson_upper(1, 20, 0.95)
    assert (1 - upper) ** 20 + 20 * upper * (1 - upper) ** 19 == pytest.approx(0.05)  # P(X ≤ 1) = .05 there
    assert upper == pytest.approx(0.2161, abs=1e-4)
    assert stats.clopper_pearson_upper(4, 4, 0.95) == 1.0
    assert stats.clopper_pearson_interval(0, 10, 0.95) == pytest.approx((0.0, 1 - 0.025 ** (1 / 10)))
    lo, hi = stats.clopper_pearson_interval(3, 20, 0.95)
    assert 1 - stats.binomial_cdf(2, 20, lo) == pytest.approx(0.025) and stats.binomial_cdf(3, 20, hi) == pytest.approx(
        0.025
    )
    with pytest.raises(ValueError, match="between 0 and n"):
        stats.clopper_pearson_upper(5, 4)


def test_the_fewest_answers_that_can_keep_a_promise() -> None:
    assert fewest_to_promise(0.1, 0.95) == 29  # 1 − .05^(1/29) = .098; with 28, .101
    assert fewest_to_promise(0.5, 0.8) == 3  # 1 − .2^(1/3) = .415; with 2, .553


def test_the_threshold_is_the_lowest_reached_before_the_bound_first_fails() -> None:
    # target .5 at 80%: at least 3 answers. From the top: .9 covers 2 (too few, passed over); .8 covers 3,
    # no error, bound .415: kept; .7 covers 4 with 1 error, bound .58: fails, and the search stops there.
    scores = [0.9, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    correct = [True, True, True, False, True, False, False]
    choice = choose_threshold(scores, correct, target_error=0.5, confidence=0.8)
    assert (choice.threshold, choice.covered, choice.errors, choice.attempted) == (0.8, 3, 0, 7)
    assert choice.bound == pytest.approx(1 - 0.2 ** (1 / 3)) and choice.coverage == pytest.approx(3 / 7)
    assert choice.tested == 2
    # .6 alone would pass (1 error in 5, bound .49): taking it after a failure would spend the confidence twice
    assert stats.clopper_pearson_upper(1, 5, 0.8) <= 0.5


def test_no_threshold_when_even_the_surest_answers_fail() -> None:
    choice = choose_threshold([0.9, 0.9, 0.9, 0.2], [False, True, True, True], target_error=0.5, confidence=0.8)
    assert choice.threshold is None and choice.bound == pytest.approx(stats.clopper_pearson_upper(1, 3, 0.8))
    assert choose_threshold([0.9], [True], target_error=0.1).threshold is None  # too few answers to test
    with pytest.raises(ConfigError, match="target error"):
        choose_threshold([0.9], [True], target_error=0.0)


def test_the_check_counts_the_held_out_answers_at_or_above_the_threshold() -> None:
    check = check_threshold([0.9, 0.2, 0.8], [True, False, False], 0.8, target_error=0.4, confidence=0.95)
    assert (check.covered, check.errors, check.error, check.within_target) == (2, 1, 0.5, False)
    assert check.coverage == pytest.approx(2 / 3) and check.lo is not None and check.lo < 0.5 < check.hi  # type: ignore[operator]
    empty = check_threshold([0.1], [True], 0.8, target_error=0.4, confidence=0.95)
    assert empty.covered == 0 and empty.error is None and empty.within_target is None


def test_the_split_is_seeded_disjoint_and_whole() -> None:
    ids = [f"q{i}" for i in range(11)] * 2  # a question's answers go together
    choose, check = split_questions(ids, 0.5, seed=3)
    assert (len(choose), len(check)) == (6, 5) and not choose & check and choose | check == set(ids)
    assert split_questions(list(reversed(ids)), 0.5, seed=3) == (choose, check)  # the order given does not matter
    assert split_questions(ids, 0.5, seed=4) != (choose, check)
    assert split_questions(ids, 1.0, seed=3) == (set(ids), set())
    with pytest.raises(ConfigError, match="split"):
        split_questions(ids, 0.0, seed=0)
    assert math.isclose(len(split_questions(ids, 0.3, seed=0)[0]), 3)
