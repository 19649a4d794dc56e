"""selfpara's efficiency: the share of the oracle's A_strict gain over raw that selfpara reaches.

    efficiency = (A_strict(selfpara) − A_strict(raw)) / (A_strict(oracle) − A_strict(raw))

over the questions all three arms answered, with a paired percentile-bootstrap CI: each
resample draws questions once and applies the draw to all three arms (`evaluation.stats`).
The oracle (`evaluation.arms.oracle`) is a measuring instrument: it votes with wordings a
deployed wrapper never has, so it marks the ceiling of the vote on this model.

When the oracle's own gain is not above 0 (its point estimate ≤ 0, or its CI reaches 0)
the ratio is undefined and reported as such, not as a huge or sign-flipped number;
resamples whose oracle gain is ≤ 0 are left out of the ratio's CI (their share is reported).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from evaluation import stats
from evaluation.metrics import rows_from_records
from evaluation.metrics.correctness import BASE_METRICS, correctness_arrays
from evaluation.metrics.rows import build_sets
from evaluation.records import SampleRecord

__all__ = ["efficiency", "efficiency_triples", "strict_by_question"]

UNDEFINED = "undefined: the oracle gains nothing"


def efficiency_triples(arms_cfg: Sequence[dict[str, Any]], labels: Sequence[str]) -> list[tuple[str, str, str]]:
    """(selfpara arm, oracle arm, raw arm) for every selfpara and oracle arm the run holds, beside its first raw arm."""
    present = [a for a in arms_cfg if a["label"] in labels]
    raw = next((a["label"] for a in present if a.get("arm") == "raw"), None)
    if raw is None:
        return []
    ours = [a["label"] for a in present if a.get("arm") == "selfpara"]
    oracles = [a["label"] for a in present if a.get("arm") == "oracle"]
    return [(s, o, raw) for s in ours for o in oracles]


def strict_by_question(
    records: Sequence[SampleRecord], *, include_original: bool = True
) -> dict[str, dict[str, float]]:
    """A_strict per question of every arm: {arm: {question id: 0.0 or 1.0}} (questions where it is defined)."""
    col = BASE_METRICS.index("A_strict")
    out: dict[str, dict[str, float]] = {}
    for arm, sets in build_sets(rows_from_records(records, group_by="arm")).items():
        num, den = correctness_arrays(sets, include_original=include_original)
        out[arm] = {vs.question_id: float(num[i, col]) for i, vs in enumerate(sets) if den[i, col] > 0}
    return out


def _interval(values: np.ndarray, confidence: float) -> tuple[float | None, float | None]:
    lo, hi = stats.percentile_interval(values, confidence)
    return (None if np.isnan(lo[0]) else float(lo[0])), (None if np.isnan(hi[0]) else float(hi[0]))


def efficiency(
    records: Sequence[SampleRecord],
    triples: Sequence[tuple[str, str, str]],
    *,
    include_original: bool = True,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> list[dict[str, Any]]:
    """selfpara's efficiency for each (selfpara arm, oracle arm, raw arm) triple, JSON-ready.

    Each entry: the arms, the questions, A_strict of each arm, the two gains over raw and
    the efficiency, each with its CI; `efficiency` is None and `note` says why when the
    oracle gains nothing.
    """
    strict = strict_by_question(records, include_original=include_original)
    out = []
    for ours, oracle, raw in triples:
        ids = sorted(set(strict.get(ours, {})) & set(strict.get(oracle, {})) & set(strict.get(raw, {})))
        entry: dict[str, Any] = {"selfpara": ours, "oracle": oracle, "raw": raw, "questions": len(ids)}
        if not ids:
            out.append({**entry, "efficiency": None, "note": "no question answered by all three arms"})
            continue
        s, o, r = (np.array([strict[arm][q] for q in ids]) for arm in (ours, oracle, raw))
        counts = stats.bootstrap_counts(len(ids), n_boot, stats.rng_for(seed, ours, oracle, raw, "efficiency"))
        n = float(len(ids))
        gain_s, gain_o = float((s - r).mean()), float((o - r).mean())
        reps_s, reps_o = counts @ (s - r) / n, counts @ (o - r) / n
        lo_s, hi_s = _interval(reps_s, confidence)
        lo_o, hi_o = _interval(reps_o, confidence)
        entry.update(
            A_strict={"selfpara": float(s.mean()), "oracle": float(o.mean()), "raw": float(r.mean())},
            selfpara_gain={"value": gain_s, "lo": lo_s, "hi": hi_s},
            oracle_gain={"value": gain_o, "lo": lo_o, "hi": hi_o},
        )
        if gain_o <= 0 or lo_o is None or lo_o <= 0:
            shown = f"oracle − raw = {gain_o:+.3f} [{lo_o or 0.0:+.3f}, {hi_o or 0.0:+.3f}]"
            out.append({**entry, "efficiency": None, "lo": None, "hi": None, "note": f"{UNDEFINED} ({shown})"})
            continue
        positive = reps_o > 0
        ratios = np.where(positive, reps_s / np.where(positive, reps_o, 1.0), np.nan)
        lo, hi = _interval(ratios, confidence)
        entry.update(
            efficiency=gain_s / gain_o,
            lo=lo,
            hi=hi,
            resamples_left_out=int((~positive).sum()),
            note="",
        )
        out.append(entry)
    return out
