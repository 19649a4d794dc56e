"""Bootstrap confidence intervals over questions, paired comparisons, McNemar's test.

Every estimate here is a ratio of per-question sums, Σ num_i / Σ den_i: a plain mean
over questions has den_i = 1 where the question counts and 0 where the metric is
undefined for it; a conditional rate (the C→W flip rate, say) has den_i = 1 only for
questions in the condition. Resampling questions with replacement then reads as a
matrix of resample counts W (n_boot × n): the resampled estimates are W·num / W·den,
all metrics and all resamples at once.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence

import numpy as np

__all__ = [
    "bootstrap_counts",
    "bootstrap_ratios",
    "mcnemar",
    "paired_bootstrap",
    "permutation_pvalue",
    "percentile_interval",
    "rng_for",
    "wilson_interval",
    "MIN_BOOTSTRAP_QUESTIONS",
]

MIN_BOOTSTRAP_QUESTIONS = 10
"""Fewest questions a percentile-bootstrap interval is given for. Below it the resamples are a
handful of distinct values (3 questions all right resample to 1.0 every time: [1.000, 1.000]),
so a metric that is not one yes/no per question gets no interval, said as "too few questions"."""

_CHUNK_CELLS = 4_000_000  # resample-count cells held at once (32 MB of float64)


def rng_for(seed: int, *keys: str) -> np.random.Generator:
    """A generator seeded by `seed` and string keys (a group name, a pair of groups), stable across runs."""
    return np.random.default_rng([int(seed) & 0xFFFFFFFF, *(zlib.crc32(k.encode("utf-8")) for k in keys)])


def bootstrap_counts(n: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """How often each of n questions is drawn in each of n_boot resamples (n_boot × n, rows sum to n)."""
    if n == 0:
        return np.zeros((n_boot, 0))
    draws = rng.integers(0, n, size=(n_boot, n))
    flat = (draws + (np.arange(n_boot) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=n_boot * n).reshape(n_boot, n).astype(np.float64)


def _chunks(n: int, n_boot: int) -> list[int]:
    per = max(1, _CHUNK_CELLS // max(n, 1))
    sizes = [per] * (n_boot // per)
    if n_boot % per:
        sizes.append(n_boot % per)
    return sizes


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def percentile_interval(samples: np.ndarray, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of bootstrap samples along axis 0 (NaN samples ignored; NaN if all are)."""
    alpha = (1.0 - confidence) / 2.0
    samples = np.asarray(samples, dtype=np.float64)
    if samples.ndim == 1:
        samples = samples[:, None]
    lo = np.full(samples.shape[1], np.nan)
    hi = np.full(samples.shape[1], np.nan)
    for j in range(samples.shape[1]):
        column = samples[:, j]
        column = column[~np.isnan(column)]
        if column.size:
            lo[j], hi[j] = np.quantile(column, [alpha, 1.0 - alpha])
    return lo, hi


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """Wilson's score interval for `successes` of `n` yes/no outcomes; None when n is 0.

    Unlike a percentile bootstrap it is never zero-width at 0 or n of n (3 of 3: [0.44, 1] at 95%),
    and it keeps close to its level down to a few outcomes.

    Args:
        successes: outcomes that are yes (0..n).
        n: outcomes.
        confidence: the interval's level.
    """
    if n <= 0:
        return None
    from statistics import NormalDist

    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def binomial_cdf(k: int, n: int, p: float) -> float:
    """P(X ≤ k) for X ~ Binomial(n, p), summed exactly in log space."""
    if k < 0:
        return 0.0
    if k >= n or p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    log_p, log_q = math.log(p), math.log1p(-p)
    terms = [
        math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * log_p + (n - i) * log_q
        for i in range(k + 1)
    ]
    top = max(terms)
    return min(1.0, math.exp(top) * sum(math.exp(t - top) for t in terms))


def clopper_pearson_upper(failures: int, n: int, confidence: float = 0.95) -> float:
    """One-sided Clopper–Pearson upper bound on a rate seen as `failures` of `n`.

    The largest p at which seeing `failures` or fewer would still have had a chance of at least
    1 − `confidence`: P(X ≤ failures; n, p) = 1 − confidence. The true rate lies below it with
    probability at least `confidence` (exact, conservative; no normal approximation). 1.0 when
    every outcome failed or n is 0.
    """
    if not 0 <= failures <= n:
        raise ValueError(f"failures ({failures}) must be between 0 and n ({n})")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    if failures == n:
        return 1.0
    alpha = 1.0 - confidence
    lo, hi = failures / n, 1.0
    for _ in range(100):  # bisection: the CDF falls as p rises
        mid = (lo + hi) / 2
        if binomial_cdf(failures, n, mid) > alpha:
            lo = mid
        else:
            hi = mid
    return hi


def clopper_pearson_interval(failures: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Two-sided Clopper–Pearson interval of a rate seen as `failures` of `n` (each tail (1 − confidence) / 2)."""
    tail = (1.0 + confidence) / 2.0
    upper = clopper_pearson_upper(failures, n, tail)
    lower = 1.0 - clopper_pearson_upper(n - failures, n, tail) if failures > 0 else 0.0
    return lower, upper


def bootstrap_ratios(
    num: np.ndarray,
    den: np.ndarray,
    *,
    n_boot: int = 1000,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Point estimates Σnum/Σden (per column) and their bootstrap replicates (n_boot × M).

    Args:
        num, den: n questions × M metrics. A column whose den is all zero gives NaN.
        n_boot: resamples of the questions.
    """
    num = np.atleast_2d(np.asarray(num, dtype=np.float64).T).T
    den = np.atleast_2d(np.asarray(den, dtype=np.float64).T).T
    point = _ratio(num.sum(axis=0), den.sum(axis=0))
    n = num.shape[0]
    reps = []
    for size in _chunks(n, n_boot):
        counts = bootstrap_counts(n, size, rng)
        reps.append(_ratio(counts @ num, counts @ den))
    return point, (np.vstack(reps) if reps else np.empty((0, num.shape[1])))


def paired_bootstrap(
    num_a: np.ndarray,
    den_a: np.ndarray,
    num_b: np.ndarray,
    den_b: np.ndarray,
    *,
    n_boot: int = 1000,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Difference a − b of ratio estimates over the SAME questions (rows aligned) and its replicates.

    Each resample draws questions once and applies the draw to both arms.
    """
    n = num_a.shape[0]
    point = _ratio(num_a.sum(0), den_a.sum(0)) - _ratio(num_b.sum(0), den_b.sum(0))
    reps = []
    for size in _chunks(n, n_boot):
        counts = bootstrap_counts(n, size, rng)
        reps.append(_ratio(counts @ num_a, counts @ den_a) - _ratio(counts @ num_b, counts @ den_b))
    return point, (np.vstack(reps) if reps else np.empty((0, num_a.shape[1])))


def permutation_pvalue(
    num_a: np.ndarray,
    den_a: np.ndarray,
    num_b: np.ndarray,
    den_b: np.ndarray,
    *,
    n_perm: int = 1000,
    rng: np.random.Generator,
) -> np.ndarray:
    """Two-sided p-values of a paired permutation test, one per metric column.

    Under the null hypothesis the two arms are exchangeable within a question, so each
    permutation swaps the arms' (num, den) on a random half of the questions; p is the
    share of permutations whose |difference| reaches the observed one, (1 + hits) / (1 + n_perm).
    """
    num_a, den_a, num_b, den_b = (np.asarray(x, dtype=np.float64) for x in (num_a, den_a, num_b, den_b))
    n = num_a.shape[0]
    observed = np.abs(_ratio(num_a.sum(0), den_a.sum(0)) - _ratio(num_b.sum(0), den_b.sum(0)))
    dn, dd = num_b - num_a, den_b - den_a
    sa_n, sa_d, sb_n, sb_d = num_a.sum(0), den_a.sum(0), num_b.sum(0), den_b.sum(0)
    hits = np.zeros(num_a.shape[1])
    valid = np.zeros(num_a.shape[1])
    for size in _chunks(n, n_perm):
        swap = rng.integers(0, 2, size=(size, n)).astype(np.float64)
        moved_n, moved_d = swap @ dn, swap @ dd
        diff = np.abs(_ratio(sa_n + moved_n, sa_d + moved_d) - _ratio(sb_n - moved_n, sb_d - moved_d))
        ok = ~np.isnan(diff)
        hits += ((diff >= observed - 1e-12) & ok).sum(0)
        valid += ok.sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = (1.0 + hits) / (1.0 + valid)
    return np.where(np.isnan(observed), np.nan, np.minimum(p, 1.0))


def mcnemar(
    a: Sequence[bool] | np.ndarray, b: Sequence[bool] | np.ndarray, *, method: str = "auto"
) -> tuple[float, str, int, int]:
    """McNemar's test on paired binary outcomes. Returns (p_value, test, n_ab, n_ba).

    n_ab counts pairs with a true and b false, n_ba the reverse. `method`: "exact"
    (two-sided binomial test on the discordant pairs), "chi2" (with continuity
    correction) or "auto" (exact below 25 discordant pairs, chi2 from there).
    """
    a_arr = np.asarray(a, dtype=bool)
    b_arr = np.asarray(b, dtype=bool)
    if a_arr.shape != b_arr.shape:
        raise ValueError("McNemar needs paired outcomes of equal length")
    n_ab = int((a_arr & ~b_arr).sum())
    n_ba = int((~a_arr & b_arr).sum())
    discordant = n_ab + n_ba
    if method == "auto":
        method = "exact" if discordant < 25 else "chi2"
    if method not in ("exact", "chi2"):
        raise ValueError(f"unknown McNemar method {method!r}")
    if discordant == 0:
        return 1.0, f"mcnemar-{method}", n_ab, n_ba
    if method == "exact":
        k = min(n_ab, n_ba)
        tail = sum(math.comb(discordant, i) for i in range(k + 1))
        p = min(1.0, 2.0 * tail / 2.0**discordant) if discordant < 1000 else min(1.0, 2.0 * _binom_tail(k, discordant))
        return float(p), "mcnemar-exact", n_ab, n_ba
    stat = (abs(n_ab - n_ba) - 1.0) ** 2 / discordant
    return float(math.erfc(math.sqrt(stat / 2.0))), "mcnemar-chi2", n_ab, n_ba


def _binom_tail(k: int, n: int) -> float:
    """P(X ≤ k) for X ~ Binomial(n, 1/2), in log space (large n)."""
    logs = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) - n * math.log(2) for i in range(k + 1)]
    top = max(logs)
    return math.exp(top) * sum(math.exp(v - top) for v in logs)
