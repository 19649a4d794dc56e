"""Metrics over variant sets (METHOD §3–§4) with bootstrap CIs and paired comparisons.

    rows = load_label_rows("labels.csv")[0]            # or rows_from_records(records)
    table = compute_metrics(rows, consistency=["exact", "rouge1"])
    table.groups["raw"]["A_strict"]                     # Estimate(value, lo, hi, n)
    table.comparisons                                   # [PairedComparison, ...]

Values are fractions in [0, 1] (not percentages). Every estimate carries a percentile
bootstrap CI from resampling QUESTIONS (`n_boot` resamples, seeded); comparisons of two
groups use the same resampled questions for both (paired bootstrap of the difference)
and a p-value: McNemar's test for metrics that are one 0/1 outcome per question
(A_orig, A_mv, A_any, A_strict, mismatch, ND), a paired permutation test otherwise.
"""

from __future__ import annotations

from evaluation.metrics.compute import compare_groups, compute_metrics, question_arrays
from evaluation.metrics.consistency import (
    AGREEMENTS,
    Agreement,
    consistency_scores,
    make_agreement,
    parse_consistency,
)
from evaluation.metrics.presentation import (
    BINARY_METRICS,
    METRIC_INFO,
    Estimate,
    MetricInfo,
    MetricsTable,
    PairedComparison,
)
from evaluation.metrics.rows import (
    DEFAULT_GROUP,
    LabelRow,
    VariantSet,
    build_sets,
    load_label_rows,
    parse_label,
    rows_from_records,
)

__all__ = [
    "AGREEMENTS",
    "Agreement",
    "BINARY_METRICS",
    "DEFAULT_GROUP",
    "METRIC_INFO",
    "Estimate",
    "LabelRow",
    "MetricInfo",
    "MetricsTable",
    "PairedComparison",
    "VariantSet",
    "build_sets",
    "compare_groups",
    "compute_metrics",
    "consistency_scores",
    "load_label_rows",
    "make_agreement",
    "parse_consistency",
    "parse_label",
    "question_arrays",
    "rows_from_records",
]
