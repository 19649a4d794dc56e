"""How much a confidence is worth to an application that answers only when sure: PRR and ECE.

    prediction_rejection_ratio([0.9, 0.8, 0.3], [True, True, False])   # 1.0: rejects the wrong one first
    expected_calibration_error([0.9, 0.8, 0.3], [True, True, False])

Both take one score per attempted answer ("higher = surer") and whether it was correct.

- **PRR** (prediction rejection ratio, as lm-polygraph reports it): keep the surest j answers for
  j = 1..n and average their accuracy over j — the area under the rejection curve. A random
  order's area is the overall accuracy; the oracle's (every correct answer first) is the largest
  possible. PRR = (area − random) / (oracle − random): 1 orders answers as well as knowing which
  are right, 0 is no better than chance, below 0 rejects right answers first. Answers tied in
  score are kept in random order (the tied block counts at its mean), so the value never depends
  on the input order.
- **ECE** (expected calibration error): the answers in `bins` equal-width confidence bins, each
  bin's |accuracy − mean confidence| weighted by its share of the answers. Only for a score that
  claims to be a probability of being right (in [0, 1]).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from selfpara.errors import ConfigError

ECE_BINS = 10
"""Equal-width bins of `expected_calibration_error` (the usual 10)."""


def score_arrays(scores: Sequence[float], correct: Sequence[bool]) -> tuple[np.ndarray, np.ndarray]:
    """`scores` and `correct` as arrays; ConfigError unless two flat lists of one length without NaN."""
    s = np.asarray(scores, dtype=np.float64)
    c = np.asarray(correct, dtype=bool)
    if s.shape != c.shape or s.ndim != 1:
        raise ConfigError(f"scores and correct must be two flat lists of one length, got {s.shape} and {c.shape}")
    if np.isnan(s).any():
        raise ConfigError("a confidence score is NaN")
    return s, c


def rejection_curve(scores: Sequence[float], correct: Sequence[bool]) -> np.ndarray:
    """Expected accuracy of the surest j answers, j = 1..n (ties at the cut in random order)."""
    s, c = score_arrays(scores, correct)
    order = np.argsort(-s, kind="stable")
    s, c = s[order], c[order].astype(np.float64)
    # expected correct among the first j: everything above j's tied block, plus its share of that block
    _, start, size = np.unique(-s, return_index=True, return_counts=True)
    block = np.repeat(np.arange(start.size), size)
    before = np.concatenate([[0.0], np.cumsum(c)])[start]  # correct answers above each block
    block_mean = np.add.reduceat(c, start) / size
    j = np.arange(1, s.size + 1)
    expected = before[block] + (j - start[block]) * block_mean[block]
    return expected / j


def _area(curve: np.ndarray) -> float:
    return float(curve.mean())


def prediction_rejection_ratio(scores: Sequence[float], correct: Sequence[bool]) -> float | None:
    """PRR of `scores` for `correct` (see the module doc); None without both a right and a wrong answer."""
    s, c = score_arrays(scores, correct)
    if s.size == 0 or c.all() or not c.any():
        return None
    random = float(c.mean())
    oracle = _area(rejection_curve(c.astype(np.float64).tolist(), c.tolist()))
    return (_area(rejection_curve(s.tolist(), c.tolist())) - random) / (oracle - random)


def expected_calibration_error(scores: Sequence[float], correct: Sequence[bool], bins: int = ECE_BINS) -> float | None:
    """ECE of `scores` as probabilities of `correct`, over `bins` equal-width bins of [0, 1] (the last
    one closed); None for no answers. ConfigError for a score outside [0, 1]."""
    if bins < 1:
        raise ConfigError(f"bins must be at least 1, got {bins}")
    s, c = score_arrays(scores, correct)
    if s.size == 0:
        return None
    if s.min() < 0.0 or s.max() > 1.0:
        raise ConfigError("ECE needs scores in [0, 1] (a probability of being right)")
    index = np.minimum((s * bins).astype(np.int64), bins - 1)
    total = 0.0
    for b in np.unique(index):
        members = index == b
        total += members.sum() * abs(float(c[members].mean()) - float(s[members].mean()))
    return total / s.size


def is_probability(scores: Sequence[float]) -> bool:
    """Whether every score lies in [0, 1], so that ECE applies (negated entropies do not)."""
    return all(0.0 <= x <= 1.0 and not math.isnan(x) for x in scores)
