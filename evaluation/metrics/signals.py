"""Confidence as a predictor of correctness, and scoring in which abstaining beats a wrong answer.

    auroc([0.9, 0.5, 0.5], [True, False, True])          # 0.75 (Mann–Whitney, ties count one half)
    accuracy_at_coverage(scores, correct, 0.5)           # answer only the most confident half
    abstention_scores(correct=6, incorrect=2, not_attempted=2)

The unit is one answer (one sample of the per-sample log); bootstrap CIs resample
QUESTIONS, each with all of its answers, like every other CI of the evaluation. A
confidence signal is "higher means surer": the vote share as it is, semantic entropy
negated. AUROC, coverage and the risk–coverage curve are over the *attempted* answers
(correct vs incorrect): an answer the model itself declined is neither right nor wrong
and is counted apart, in the abstention scores.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from evaluation import stats
from evaluation.metrics.rows import LabelRow
from evaluation.metrics.selective import (
    expected_calibration_error,
    is_probability,
    prediction_rejection_ratio,
    score_arrays,
)
from evaluation.records import Label
from selfpara.errors import ConfigError

__all__ = [
    "COVERAGES",
    "PENALTIES",
    "THRESHOLDS",
    "abstention_scores",
    "accuracy_at_coverage",
    "auroc",
    "auroc_interval",
    "confidence_by_group",
    "confidence_summary",
    "risk_coverage",
    "threshold_policy",
]

COVERAGES = (0.5, 0.8, 0.9, 1.0)
"""Default coverages of `accuracy_at_coverage` (selective accuracy) in reports."""

THRESHOLDS = (0.5, 0.6, 0.75, 1.0)
"""Default vote-share thresholds of the low-vote-share policy in reports."""

PENALTIES = (0.5, 0.75, 0.9)
"""Default SimpleQA-style penalty thresholds p: a wrong answer costs p/(1−p) correct ones."""


def _weighted_auroc(s: np.ndarray, c: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """AUROC of scores `s` for labels `c`, one value per row of `weights` (R × n; a row weighs each answer).

    Mann–Whitney U over distinct score values: a positive above a negative counts 1, a tie 1/2
    (the midrank rule); NaN where a row has no positive or no negative weight.
    """
    values, inverse = np.unique(s, return_inverse=True)  # ascending distinct scores
    groups = np.zeros((s.size, values.size))
    groups[np.arange(s.size), inverse] = 1.0
    pos = (weights * c) @ groups  # R × U: positive weight at each distinct score
    neg = (weights * ~c) @ groups
    below = np.cumsum(neg, axis=1) - neg  # negative weight strictly below each score
    u = (pos * (below + 0.5 * neg)).sum(axis=1)
    total = pos.sum(axis=1) * neg.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, u / np.where(total > 0, total, 1.0), np.nan)


def auroc(scores: Sequence[float], correct: Sequence[bool]) -> float | None:
    """Area under the ROC curve of `scores` for `correct` (None without both a correct and a wrong answer).

    The probability that a random correct answer scores above a random wrong one, ties
    counting one half (Mann–Whitney U with midranks / (n_pos · n_neg)).
    """
    s, c = score_arrays(scores, correct)
    if s.size == 0:
        return None
    value = float(_weighted_auroc(s, c, np.ones((1, s.size)))[0])
    return None if math.isnan(value) else value


def _question_weights(question_ids: Sequence[str], n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """n_boot × n_answers weights: how often each answer's question is drawn in each resample."""
    order = {q: i for i, q in enumerate(dict.fromkeys(question_ids))}
    index = np.array([order[q] for q in question_ids], dtype=np.int64)
    counts = stats.bootstrap_counts(len(order), n_boot, rng)
    return counts[:, index]


def auroc_interval(
    scores: Sequence[float],
    correct: Sequence[bool],
    question_ids: Sequence[str],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    key: str = "",
    confidence: float = 0.95,
) -> tuple[float | None, float | None]:
    """Percentile bootstrap CI of `auroc`, resampling questions (each with all its answers)."""
    s, c = score_arrays(scores, correct)
    if len(question_ids) != s.size:
        raise ConfigError(f"{len(question_ids)} question ids for {s.size} scores")
    if s.size == 0:
        return None, None
    reps = _weighted_auroc(s, c, _question_weights(question_ids, n_boot, stats.rng_for(seed, "auroc", key)))
    lo, hi = stats.percentile_interval(reps, confidence)
    return (None, None) if math.isnan(lo[0]) else (float(lo[0]), float(hi[0]))


def accuracy_at_coverage(scores: Sequence[float], correct: Sequence[bool], coverage: float) -> float | None:
    """Accuracy over the most confident `coverage` fraction of the answers (None if that is no answer).

    ⌈coverage · n⌉ answers are kept (at least the asked fraction). Answers tied at the cut are taken
    in a random order: the value is the expected accuracy over those orders (the tied
    block counts at its mean accuracy), so it does not depend on the order of the input.
    """
    if not 0.0 < coverage <= 1.0:
        raise ConfigError(f"coverage must be in (0, 1], got {coverage}")
    s, c = score_arrays(scores, correct)
    if s.size == 0:
        return None
    keep = max(1, math.ceil(coverage * s.size - 1e-9))
    cut = np.sort(s)[::-1][keep - 1]
    above = s > cut
    tied = s == cut
    slots = keep - int(above.sum())
    value = c[above].sum() + slots * c[tied].mean()
    return float(value / keep)


def risk_coverage(scores: Sequence[float], correct: Sequence[bool]) -> list[dict[str, float]]:
    """The risk–coverage curve: one point per distinct score t, answering every answer with score ≥ t.

    Points run from the surest answers (lowest coverage) to all of them (coverage 1):
    {"threshold": t, "coverage": share answered, "accuracy": accuracy among them,
    "risk": 1 − accuracy}. Empty for no answers.
    """
    s, c = score_arrays(scores, correct)
    points = []
    for t in np.unique(s)[::-1]:
        kept = s >= t
        accuracy = float(c[kept].mean())
        points.append(
            {"threshold": float(t), "coverage": float(kept.mean()), "accuracy": accuracy, "risk": 1.0 - accuracy}
        )
    return points


def abstention_scores(
    correct: int, incorrect: int, not_attempted: int, penalties: Sequence[float] = PENALTIES
) -> dict[str, Any]:
    """SimpleQA-style scores of answer counts, in which abstaining beats a wrong answer.

    - `overall_correct` = correct / all answers;
    - `correct_given_attempted` = correct / (correct + incorrect);
    - `f_score`: harmonic mean of the two (SimpleQA's F);
    - `score@p` = (correct − incorrect · p/(1−p)) / all answers for each penalty threshold p:
      answering pays only when the chance of being right is above p.
    Values are None where their denominator is 0.
    """
    if min(correct, incorrect, not_attempted) < 0:
        raise ConfigError("answer counts cannot be negative")
    for p in penalties:
        if not 0.0 <= p < 1.0:
            raise ConfigError(f"a penalty threshold must be in [0, 1), got {p}")
    n = correct + incorrect + not_attempted
    attempted = correct + incorrect
    overall = correct / n if n else None
    given = correct / attempted if attempted else None
    f_score = None
    if overall is not None and given is not None:
        f_score = 0.0 if overall + given == 0 else 2 * overall * given / (overall + given)
    out: dict[str, Any] = {
        "answers": n,
        "attempted": attempted,
        "not_attempted": not_attempted,
        "correct": correct,
        "incorrect": incorrect,
        "attempted_rate": attempted / n if n else None,
        "overall_correct": overall,
        "correct_given_attempted": given,
        "f_score": f_score,
    }
    for p in penalties:
        out[f"score@{p:g}"] = (correct - incorrect * p / (1.0 - p)) / n if n else None
    return out


def threshold_policy(
    scores: Sequence[float],
    labels: Sequence[Label],
    thresholds: Sequence[float] = THRESHOLDS,
    penalties: Sequence[float] = PENALTIES,
) -> list[dict[str, Any]]:
    """What abstaining below a confidence threshold would do: per threshold, the abstention scores.

    An answer is given when its score ≥ threshold and the model attempted it; every other
    answer counts as not attempted. Each row: {"threshold": t, **abstention_scores(...)},
    so `attempted_rate` is the coverage and `correct_given_attempted` the accuracy answered.
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.size != len(labels):
        raise ConfigError(f"{s.size} scores for {len(labels)} labels")
    lab = np.asarray(labels, dtype=object)
    rows = []
    for t in thresholds:
        given = (s >= t) & (lab != "not_attempted")
        right = int((given & (lab == "correct")).sum())
        wrong = int((given & (lab == "incorrect")).sum())
        rows.append({"threshold": float(t), **abstention_scores(right, wrong, int(s.size) - right - wrong, penalties)})
    return rows


def confidence_summary(
    question_ids: Sequence[str],
    labels: Sequence[Label],
    signals: Mapping[str, Sequence[float]],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    key: str = "",
    confidence: float = 0.95,
    coverages: Sequence[float] = COVERAGES,
    thresholds: Sequence[float] = THRESHOLDS,
    penalties: Sequence[float] = PENALTIES,
    policy_signal: str = "vote_share",
) -> dict[str, Any]:
    """Every confidence figure of one arm, JSON-ready.

    Args:
        question_ids, labels: one entry per answer.
        signals: confidence scores by name, one per answer, higher = surer (negate entropies).
        key: names the arm in the bootstrap seed.
        policy_signal: the signal the low-vote-share policy thresholds (when present).

    Returns {"answers", "attempted", "signals": {name: {"auroc", "lo", "hi", "prr", "ece", "coverage":
    {c: accuracy}, "curve": [...]}}, "policy": [...]} over the attempted answers (policy:
    over all answers). `ece` is None for a signal with values outside [0, 1] (a negated entropy).
    """
    attempted = np.asarray([lab != "not_attempted" for lab in labels], dtype=bool)
    correct = np.asarray([lab == "correct" for lab in labels], dtype=bool)[attempted]
    qids = [q for q, a in zip(question_ids, attempted, strict=True) if a]
    out: dict[str, Any] = {"answers": len(labels), "attempted": int(attempted.sum()), "signals": {}}
    for name, values in signals.items():
        s = np.asarray(values, dtype=np.float64)
        if s.size != len(labels):
            raise ConfigError(f"signal {name!r}: {s.size} scores for {len(labels)} answers")
        sa = s[attempted]
        lo, hi = auroc_interval(sa, correct, qids, n_boot=n_boot, seed=seed, key=f"{key}/{name}", confidence=confidence)
        out["signals"][name] = {
            "auroc": auroc(sa, correct),
            "lo": lo,
            "hi": hi,
            "prr": prediction_rejection_ratio(sa, correct),
            "ece": expected_calibration_error(sa, correct) if is_probability(sa.tolist()) else None,
            "coverage": {f"{c:g}": accuracy_at_coverage(sa, correct, c) for c in coverages},
            "curve": risk_coverage(sa, correct),
        }
    if policy_signal in signals:
        out["policy_signal"] = policy_signal
        out["policy"] = threshold_policy(signals[policy_signal], labels, thresholds, penalties)
    return out


def confidence_by_group(
    rows: Iterable[LabelRow], *, n_boot: int = 1000, seed: int = 0, confidence: float = 0.95
) -> dict[str, dict[str, Any]]:
    """`confidence_summary` of every group whose rows all carry a confidence score (signal "confidence")."""
    by_group: dict[str, list[LabelRow]] = {}
    for row in rows:
        by_group.setdefault(row.group, []).append(row)
    out = {}
    for group, members in by_group.items():
        if not members or any(r.confidence is None for r in members):
            continue
        out[group] = confidence_summary(
            [r.question_id for r in members],
            [r.label for r in members],
            {"confidence": [float(r.confidence) for r in members if r.confidence is not None]},
            n_boot=n_boot,
            seed=seed,
            key=group,
            confidence=confidence,
            policy_signal="confidence",
        )
    return out
