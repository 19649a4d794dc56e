"""Correctness metrics over paraphrase sets (METHOD §4), as per-question (num, den) arrays.

Per question: y_0 the original's label, y_1..y_m the paraphrases' labels,
p_c = share of the m paraphrases with label c, para_label = argmax_c p_c with ties
broken correct > incorrect > not_attempted, mode_share = max_c p_c.

Each metric is Σ_i num_i / Σ_i den_i over questions i: den_i = 1 where the metric is
defined for question i (for the flip rates: where the condition holds), else 0.

Questions with no paraphrase (m = 0): every metric built on p_c (A_exp, A_mv, mismatch,
flip rates, ND, IID mismatch, label entropy) is undefined and the question is left out
of it (den = 0); A_orig counts; A_any / A_strict count when the original is in the set
(the default) and are left out when it is not.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from evaluation.metrics.rows import VariantSet
from evaluation.records import LABELS

__all__ = ["BASE_METRICS", "DERIVED_METRICS", "correctness_arrays", "para_label"]

BASE_METRICS = (
    "A_orig",
    "A_exp",
    "A_mv",
    "A_any",
    "A_strict",
    "mismatch",
    "flip_cw",
    "flip_wc",
    "ND",
    "IID",
    "entropy",
)
"""Metrics computed per question, in table order."""

DERIVED_METRICS = {
    "gap_any_strict": ("A_any", "A_strict"),
    "gap_exp_strict": ("A_exp", "A_strict"),
}
"""Metrics that are differences of two table estimates (bootstrapped jointly)."""

_LN_LABELS = math.log(len(LABELS))


def para_label(counts: Sequence[int]) -> int:
    """Index into LABELS of the most frequent paraphrase label (ties: correct, incorrect, not_attempted)."""
    best = max(counts)
    return next(i for i, c in enumerate(counts) if c == best)


def correctness_arrays(sets: Sequence[VariantSet], *, include_original: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Per-question (num, den), each n × len(BASE_METRICS), columns in BASE_METRICS order."""
    n = len(sets)
    num = np.zeros((n, len(BASE_METRICS)))
    den = np.zeros((n, len(BASE_METRICS)))
    col = {name: j for j, name in enumerate(BASE_METRICS)}
    for i, vs in enumerate(sets):
        y0_correct = vs.original_label == "correct"
        num[i, col["A_orig"]], den[i, col["A_orig"]] = float(y0_correct), 1.0

        members = vs.labels(include_original)
        if members:
            den[i, col["A_any"]] = den[i, col["A_strict"]] = 1.0
            num[i, col["A_any"]] = float(any(y == "correct" for y in members))
            num[i, col["A_strict"]] = float(all(y == "correct" for y in members))

        m = vs.m
        if m == 0:
            continue
        counts = [sum(1 for y in vs.paraphrase_labels if y == label) for label in LABELS]
        p = [c / m for c in counts]
        top = LABELS[para_label(counts)]
        for name in ("A_exp", "A_mv", "mismatch", "ND", "IID", "entropy"):
            den[i, col[name]] = 1.0
        num[i, col["A_exp"]] = p[0]
        num[i, col["A_mv"]] = float(top == "correct")
        num[i, col["mismatch"]] = float(vs.original_label != top)
        num[i, col["ND"]] = float(max(p) < 1.0)
        num[i, col["IID"]] = 1.0 - sum(q * q for q in p)
        num[i, col["entropy"]] = 0.0 - sum(q * math.log(q) for q in p if q > 0) / _LN_LABELS
        if y0_correct:
            den[i, col["flip_cw"]] = 1.0
            num[i, col["flip_cw"]] = float(top != "correct")
        else:
            den[i, col["flip_wc"]] = 1.0
            num[i, col["flip_wc"]] = float(top == "correct")
    return num, den
