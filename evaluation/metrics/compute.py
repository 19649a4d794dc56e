"""`compute_metrics`: every metric of every group with bootstrap CIs over questions, and paired comparisons.

See the package docstring (`evaluation.metrics`) for what the estimates and tests are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import numpy as np

from evaluation import stats
from evaluation.metrics.consistency import Agreement, consistency_scores, make_agreement, parse_consistency
from evaluation.metrics.correctness import BASE_METRICS, DERIVED_METRICS, correctness_arrays
from evaluation.metrics.presentation import (
    BINARY_METRICS,
    METRIC_INFO,
    Estimate,
    MetricsTable,
    PairedComparison,
    consistency_info,
)
from evaluation.metrics.rows import LabelRow, VariantSet, build_sets
from selfpara.errors import ConfigError


class _GroupArrays:
    """Per-question (num, den) of every metric of one group."""

    def __init__(self, sets: list[VariantSet], num: np.ndarray, den: np.ndarray, names: list[str]) -> None:
        self.ids = [s.question_id for s in sets]
        self.num, self.den, self.names = num, den, names

    def take(self, ids: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        index = {q: i for i, q in enumerate(self.ids)}
        rows = [index[q] for q in ids]
        return self.num[rows], self.den[rows]


def question_arrays(
    sets: Sequence[VariantSet],
    *,
    include_original: bool = True,
    agreements: Sequence[Agreement] = (),
    consistency_mode: str = "binary",
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Per-question (num, den) arrays and the metric names (base metrics, then consistency)."""
    num, den = correctness_arrays(sets, include_original=include_original)
    names = list(BASE_METRICS)
    extra_num, extra_den = [], []
    answer_sets = [vs.answers(include_original) for vs in sets]
    for agreement in agreements:
        for soft in _modes(consistency_mode):
            values = consistency_scores(answer_sets, agreement, soft=soft)
            defined = ~np.isnan(values)
            extra_num.append(np.where(defined, values, 0.0))
            extra_den.append(defined.astype(np.float64))
            names.append(_cons_name(agreement.name, soft))
    if extra_num:
        num = np.column_stack([num, *extra_num])
        den = np.column_stack([den, *extra_den])
    return num, den, names


def _modes(mode: str) -> list[bool]:
    if mode == "binary":
        return [False]
    if mode == "soft":
        return [True]
    if mode == "both":
        return [False, True]
    raise ConfigError(f"unknown consistency mode {mode!r}; use binary, soft or both")


def _cons_name(name: str, soft: bool) -> str:
    return f"cons_{name}" + ("_soft" if soft else "")


def _with_derived(values: np.ndarray, names: list[str]) -> np.ndarray:
    """Append the derived metric columns (differences of two estimates) to values (… × M)."""
    col = {n: j for j, n in enumerate(names)}
    extra = [values[..., col[a]] - values[..., col[b]] for a, b in DERIVED_METRICS.values()]
    return np.concatenate([values, np.stack(extra, axis=-1)], axis=-1)


def _all_names(names: list[str]) -> list[str]:
    return names[: len(BASE_METRICS)] + list(DERIVED_METRICS) + names[len(BASE_METRICS) :]


def _reorder(values: np.ndarray, names: list[str]) -> np.ndarray:
    """From [base, consistency, derived] column order to [base, derived, consistency]."""
    b, c = len(BASE_METRICS), len(names) - len(BASE_METRICS)
    order = list(range(b)) + list(range(b + c, b + c + len(DERIVED_METRICS))) + list(range(b, b + c))
    return values[..., order]


def _none(x: float) -> float | None:
    return None if x is None or np.isnan(x) else float(x)


def compute_metrics(
    rows: Iterable[LabelRow] | Mapping[str, list[VariantSet]],
    *,
    include_original: bool = True,
    consistency: Sequence[str | Agreement] | str | None = (),
    consistency_mode: str = "binary",
    nli: Any = None,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    compare: Literal["auto"] | tuple[str, str] | Sequence[tuple[str, str]] | None = "auto",
    mcnemar_method: str = "auto",
) -> MetricsTable:
    """The full metrics table of every group, with bootstrap CIs and paired comparisons.

    Args:
        rows: LabelRows (see `load_label_rows`, `rows_from_records`) or prebuilt variant sets per group.
        include_original: A_any / A_strict (and consistency) over {original} ∪ paraphrases
            (True, METHOD's default) or over the paraphrases only (the published factual-QA
            tables). Mismatch and flips always compare the original with the paraphrases.
        consistency: agreement functions for Cons_f (names like "exact", "rouge1@0.6",
            "bertscore", "nli", "noncontra", or Agreement objects). Needs answers in the rows;
            when no row has one, consistency is skipped with a note.
        consistency_mode: "binary" (thresholded f), "soft" (f's score) or "both".
        nli: NLI model for "nli"/"noncontra" (a `selfpara.pipeline.equivalence.nli.NLIModel` or a callable).
        n_boot: bootstrap resamples (and permutations for the permutation test).
        seed: seeds every resample; the same seed gives the same CIs.
        confidence: CI level.
        compare: "auto" (compare the two groups when there are exactly two), a pair
            (a, b), a list of pairs, or None.
        mcnemar_method: "auto", "exact" or "chi2".
    """
    if not 0.0 < confidence < 1.0:
        raise ConfigError(f"confidence must be between 0 and 1, got {confidence}")
    if n_boot < 1:
        raise ConfigError(f"n_boot must be at least 1, got {n_boot}")
    sets_by_group = dict(rows) if isinstance(rows, Mapping) else build_sets(rows)
    if not sets_by_group:
        raise ConfigError("no rows to compute metrics from")
    specs = parse_consistency(consistency) if isinstance(consistency, str) or consistency is None else list(consistency)
    agreements = [make_agreement(s, nli=nli) for s in specs]
    skipped_consistency = bool(agreements) and not any(
        a is not None and str(a).strip() for sets in sets_by_group.values() for vs in sets for a in vs.answers(True)
    )
    if skipped_consistency:
        agreements = []  # nothing to compare: say so in the notes instead of failing the whole table
    _modes(consistency_mode)

    # Questions in id order, so that the resamples (and the CIs) do not depend on row order.
    sets_by_group = {g: sorted(s, key=lambda vs: vs.question_id) for g, s in sets_by_group.items()}
    arrays: dict[str, _GroupArrays] = {}
    for group, sets in sets_by_group.items():
        num, den, names = question_arrays(
            sets, include_original=include_original, agreements=agreements, consistency_mode=consistency_mode
        )
        arrays[group] = _GroupArrays(sets, num, den, names)
    names = next(iter(arrays.values())).names
    table_names = _all_names(names)
    info = {**{k: v for k, v in METRIC_INFO.items() if k in table_names}}
    for agreement in agreements:
        for soft in _modes(consistency_mode):
            info[_cons_name(agreement.name, soft)] = consistency_info(agreement.name, agreement.threshold, soft)

    groups: dict[str, dict[str, Estimate]] = {}
    for group, ga in arrays.items():
        groups[group] = _estimates(ga, names, n_boot, stats.rng_for(seed, group), confidence)

    table = MetricsTable(
        groups=groups,
        metrics=table_names,
        info=info,
        questions={g: len(s) for g, s in sets_by_group.items()},
        variants={g: (float(np.mean([vs.m for vs in s])) if s else 0.0) for g, s in sets_by_group.items()},
        include_original=include_original,
        consistency=[n for n in table_names if n.startswith("cons_")],
        confidence=confidence,
        n_boot=n_boot,
        seed=seed,
    )
    if skipped_consistency:
        table.notes.append("consistency skipped: the rows carry no answer texts")
    no_para = {g: sum(1 for vs in s if vs.m == 0) for g, s in sets_by_group.items()}
    for g, count in no_para.items():
        if count:
            table.notes.append(
                f"{g}: {count} question(s) have no paraphrase; they count toward A_orig"
                + (" and A_any/A_strict" if include_original else "")
                + " only"
            )
    pairs = _pairs(compare, list(sets_by_group))
    for a, b in pairs:
        table.comparisons += compare_groups(
            arrays,
            a,
            b,
            names,
            n_boot=n_boot,
            seed=seed,
            confidence=confidence,
            mcnemar_method=mcnemar_method,
            notes=table.notes,
        )
    return table


def _estimates(
    ga: _GroupArrays, names: list[str], n_boot: int, rng: np.random.Generator, confidence: float
) -> dict[str, Estimate]:
    point, reps = stats.bootstrap_ratios(ga.num, ga.den, n_boot=n_boot, rng=rng)
    point_all = _reorder(_with_derived(point, names), names)
    reps_all = _reorder(_with_derived(reps, names), names)
    lo, hi = stats.percentile_interval(reps_all, confidence)
    defined = (ga.den > 0).sum(axis=0)
    col = {n: j for j, n in enumerate(names)}
    counts = list(defined[: len(BASE_METRICS)])
    for a, b in DERIVED_METRICS.values():
        counts.append(int(((ga.den[:, col[a]] > 0) | (ga.den[:, col[b]] > 0)).sum()))
    counts += list(defined[len(BASE_METRICS) :])
    out = {}
    for j, name in enumerate(_all_names(names)):
        value = _none(point_all[j])
        interval: tuple[float, float] | None = (_none(lo[j]), _none(hi[j])) if value is not None else None  # type: ignore[assignment]
        method: Literal["bootstrap", "wilson", "too_few"] = "bootstrap"
        yes_no = _yes_no(ga, col.get(name)) if name in BINARY_METRICS else None
        if value is not None and yes_no is not None:
            interval, method = stats.wilson_interval(*yes_no, confidence=confidence), "wilson"
        elif value is not None and counts[j] < stats.MIN_BOOTSTRAP_QUESTIONS:
            interval, method = None, "too_few"
        out[name] = Estimate(
            value=value,
            lo=interval[0] if interval else None,
            hi=interval[1] if interval else None,
            n=int(counts[j]),
            interval=method if value is not None else "bootstrap",
        )
    return out


def _yes_no(ga: _GroupArrays, j: int | None) -> tuple[int, int] | None:
    """(yes, outcomes) of a metric that is one yes/no outcome per question where it is defined,
    None when its per-question values are not all 0 or 1."""
    if j is None:
        return None
    defined = ga.den[:, j] > 0
    values = ga.num[defined, j] / ga.den[defined, j]
    if not np.all((values == 0) | (values == 1)):
        return None
    return int(values.sum()), int(defined.sum())


def _pairs(compare: Any, groups: list[str]) -> list[tuple[str, str]]:
    if compare is None:
        return []
    if compare == "auto":
        return [(groups[0], groups[1])] if len(groups) == 2 else []
    if isinstance(compare, tuple) and len(compare) == 2 and all(isinstance(x, str) for x in compare):
        pairs = [compare]
    else:
        pairs = [tuple(p) for p in compare]
    for pair in pairs:
        if len(pair) != 2:
            raise ConfigError(f"a comparison names two groups, got {pair!r}")
        for g in pair:
            if g not in groups:
                raise ConfigError(f"cannot compare {g!r}: no such group; groups are {', '.join(groups)}")
        if pair[0] == pair[1]:
            raise ConfigError(f"cannot compare group {pair[0]!r} with itself")
    return pairs


def compare_groups(
    arrays: Mapping[str, _GroupArrays],
    a: str,
    b: str,
    names: list[str],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    mcnemar_method: str = "auto",
    notes: list[str] | None = None,
) -> list[PairedComparison]:
    """Paired comparison a − b of every metric over the questions both groups hold."""
    ga, gb = arrays[a], arrays[b]
    in_b = set(gb.ids)
    common = [q for q in ga.ids if q in in_b]
    if notes is not None and (len(common) < len(ga.ids) or len(common) < len(gb.ids)):
        notes.append(
            f"{a} vs {b}: compared on the {len(common)} questions both hold "
            f"({len(ga.ids)} in {a}, {len(gb.ids)} in {b})"
        )
    na, da = ga.take(common)
    nb, db = gb.take(common)
    all_names = _all_names(names)
    if not common:
        return [
            PairedComparison(
                metric=m,
                a=a,
                b=b,
                value_a=None,
                value_b=None,
                diff=None,
                lo=None,
                hi=None,
                p_value=None,
                test="none",
                n=0,
            )
            for m in all_names
        ]
    point, reps = stats.paired_bootstrap(na, da, nb, db, n_boot=n_boot, rng=stats.rng_for(seed, a, b, "paired"))
    pa, _ = stats.bootstrap_ratios(na, da, n_boot=1, rng=np.random.default_rng(0))
    pb, _ = stats.bootstrap_ratios(nb, db, n_boot=1, rng=np.random.default_rng(0))
    pvals = stats.permutation_pvalue(na, da, nb, db, n_perm=n_boot, rng=stats.rng_for(seed, a, b, "perm"))
    # derived metrics: differences of differences, from the same resamples
    point_all = _reorder(_with_derived(point, names), names)
    reps_all = _reorder(_with_derived(reps, names), names)
    va_all = _reorder(_with_derived(pa, names), names)
    vb_all = _reorder(_with_derived(pb, names), names)
    lo, hi = stats.percentile_interval(reps_all, confidence)
    perm_all = _reorder(_with_derived_p(pvals, names), names)
    col = {n: j for j, n in enumerate(names)}
    too_few = len(common) < stats.MIN_BOOTSTRAP_QUESTIONS  # a paired bootstrap of 3 questions is no interval
    if too_few and notes is not None:
        notes.append(
            f"{a} − {b}: {len(common)} questions in common, too few for a CI of the differences "
            f"(fewer than {stats.MIN_BOOTSTRAP_QUESTIONS})"
        )
    out = []
    for j, metric in enumerate(all_names):
        diff = _none(point_all[j])
        test: str = "permutation"
        p_value = _none(perm_all[j])
        n = len(common)
        discordant = None
        if metric in BINARY_METRICS:
            k = col[metric]
            both = (da[:, k] > 0) & (db[:, k] > 0)
            p_value, test, n_ab, n_ba = stats.mcnemar(na[both, k] > 0.5, nb[both, k] > 0.5, method=mcnemar_method)
            n, discordant = int(both.sum()), (n_ab, n_ba)
            if n == 0:
                p_value, test = None, "none"
        elif metric in DERIVED_METRICS:
            test, p_value = "none", None  # a difference of gaps has no test of its own here
        if diff is None:
            p_value, test = None, "none"
        out.append(
            PairedComparison(
                metric=metric,
                a=a,
                b=b,
                value_a=_none(va_all[j]),
                value_b=_none(vb_all[j]),
                diff=diff,
                lo=_none(lo[j]) if diff is not None and not too_few else None,
                hi=_none(hi[j]) if diff is not None and not too_few else None,
                p_value=p_value,
                test=test,  # type: ignore[arg-type]  # one of the Literal's values, checked by stats.mcnemar
                n=n,
                discordant=discordant,
            )
        )
    return out


def _with_derived_p(pvals: np.ndarray, names: list[str]) -> np.ndarray:
    return np.concatenate([pvals, np.full(len(DERIVED_METRICS), np.nan)])
