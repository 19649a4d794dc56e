"""Doubt first's threshold from a labelled run: what each `sure_probability` would have cost and returned.

A run whose selfpara arm voted on every question (`sure_probability` off) and that has a raw arm holds
everything the gate needs: each original's token probability (in the vote's evidence), the vote's
answer, and what the one call alone cost and returned (the raw arm's record of the same wording: the
same greedy call). At a threshold t a wording whose original is sure keeps the raw record, the others
the vote's (`evaluation.revote.sure`, the same rule the re-vote applies). So one always-on run gives the
whole cost-gain curve, and `fit_gate` chooses the threshold a budget allows:

    fit = fit_gate("runs/dev", budget=1.5)     # at most 1.5x raw's model-seconds per answer
    fit.chosen.threshold, fit.check            # the threshold, and what it did on the questions held out

The questions are split at random (seeded): the threshold is chosen on one part and checked on the other.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import BaseModel

from evaluation.calibrate import split_questions
from evaluation.records import SampleRecord
from evaluation.revote import sure
from evaluation.rundir import SAMPLES_FILE, latest_records, read_samples
from selfpara.errors import ConfigError

Pair = tuple[SampleRecord, SampleRecord]
"""(the raw arm's record, the voting arm's record) of one wording."""


class GatePoint(BaseModel):
    """What the gate at one threshold returned and cost over a set of wordings (threshold None: always vote).

    Attributes:
        threshold: the `sure_probability`; None votes on every wording.
        wordings: wordings counted; voted: the share of them the vote was spent on.
        cost: mean model-seconds per answer relative to raw's (None where a record has none or raw's took none).
        calls: mean calls per answer relative to raw's.
        a_orig: share of originals right; a_strict: share of questions right under every wording (None
            when no question has two).
        gained, lost: wordings right where raw was wrong, and wrong where raw was right.
    """

    threshold: float | None
    wordings: int
    voted: float
    cost: float | None
    calls: float
    a_orig: float
    a_strict: float | None
    gained: int
    lost: int


class GateFit(BaseModel):
    """The threshold chosen under a budget, the curve it was chosen on, and its check on the held-out questions."""

    run: str
    arm: str
    budget: float
    measure: str
    chosen: GatePoint | None
    curve: list[GatePoint]
    questions_choose: int
    questions_check: int
    check: GatePoint | None = None
    always_check: GatePoint | None = None


def pairs_of(records: Iterable[SampleRecord], arm: str) -> dict[tuple[str, int], Pair]:
    """(raw record, `arm` record) by (item, variant) for the wordings both answered without an error."""
    raw: dict[tuple[str, int], SampleRecord] = {}
    voted: dict[tuple[str, int], SampleRecord] = {}
    for r in records:
        if r.error is None and r.arm in ("raw", arm):
            (raw if r.arm == "raw" else voted)[(r.item_id, r.variant_id)] = r
    return {k: (raw[k], voted[k]) for k in sorted(voted) if k in raw}


def gate_point(pairs: dict[tuple[str, int], Pair], threshold: float | None) -> GatePoint:
    """The gate at `threshold` over `pairs` (see the module docstring)."""
    if not pairs:
        raise ConfigError("no wording has both a raw and a voted answer")
    chosen = {k: (raw if sure(voted, threshold) else voted) for k, (raw, voted) in pairs.items()}
    right = {k: r.label == "correct" for k, r in chosen.items()}
    was = {k: raw.label == "correct" for k, (raw, _) in pairs.items()}
    timed = all(raw.model_s is not None and voted.model_s is not None for raw, voted in pairs.values())

    def ratio(field: str) -> float | None:
        base = sum(float(getattr(raw, field) or 0) for raw, _ in pairs.values())
        return sum(float(getattr(r, field) or 0) for r in chosen.values()) / base if base > 0 else None

    by_item: dict[str, list[bool]] = defaultdict(list)
    for (item, _), ok in right.items():
        by_item[item].append(ok)
    multi = [all(v) for v in by_item.values() if len(v) > 1]
    originals = [ok for (_, variant), ok in right.items() if variant == 0]
    return GatePoint(
        threshold=threshold,
        wordings=len(pairs),
        voted=sum(1 for k, r in chosen.items() if r is pairs[k][1]) / len(pairs),
        cost=ratio("model_s") if timed else None,
        calls=ratio("calls") or 0.0,
        a_orig=sum(originals) / len(originals) if originals else float("nan"),
        a_strict=sum(multi) / len(multi) if multi else None,
        gained=sum(right[k] and not was[k] for k in pairs),
        lost=sum(was[k] and not right[k] for k in pairs),
    )


def thresholds_of(pairs: dict[tuple[str, int], Pair], grid: Sequence[float] = ()) -> list[float]:
    """Candidate thresholds, highest first: `grid`, or 0.50 to 0.99 in steps of 0.01."""
    return sorted(grid or [round(0.5 + i / 100, 2) for i in range(50)], reverse=True)


def fit_gate(
    run_dir: str | Path,
    *,
    arm: str = "selfpara",
    budget: float = 1.5,
    measure: str = "model_s",
    split: float = 0.5,
    seed: int = 0,
) -> GateFit:
    """The highest `sure_probability` (the most votes) whose cost on the choosing questions stays within
    `budget` times raw's, checked on the rest; `chosen` None when even the lowest candidate costs more.
    `measure`: what cost is: `model_s` (model-seconds per answer) or `calls`.

    Raises ConfigError when the run has no raw arm, or `arm` did not vote on every question.
    """
    records = latest_records(read_samples(Path(run_dir) / SAMPLES_FILE))
    pairs = pairs_of(records, arm)
    if not any(r.arm == "raw" for r in records):
        raise ConfigError("the run has no raw arm: its records are what one call costs")
    if not pairs:
        raise ConfigError(f"the run has no answers of arm {arm!r} beside raw's")
    if any((v.details.get("evidence") or {}).get("doubt", {}).get("voted") is False for _, v in pairs.values()):
        raise ConfigError(f"arm {arm!r} already skipped votes (sure_probability set): fit on an always-on run")
    choose_ids, check_ids = split_questions(sorted({k[0] for k in pairs}), split, seed)
    choose = {k: p for k, p in pairs.items() if k[0] in choose_ids}
    check = {k: p for k, p in pairs.items() if k[0] in check_ids}
    curve = [gate_point(choose, t) for t in thresholds_of(choose)]
    if measure not in ("model_s", "calls"):
        raise ConfigError(f"the cost is model_s or calls, not {measure!r}")
    if measure == "model_s" and any(p.cost is None for p in curve):
        raise ConfigError("the run recorded no model-seconds for some answers: measure the cost in calls")
    chosen = next((p for p in curve if (p.calls if p.cost is None or measure == "calls" else p.cost) <= budget), None)
    return GateFit(
        run=str(run_dir),
        arm=arm,
        budget=budget,
        measure=measure,
        chosen=chosen,
        curve=[gate_point(choose, None), *curve],
        questions_choose=len(choose_ids),
        questions_check=len(check_ids),
        check=gate_point(check, chosen.threshold) if chosen and check else None,
        always_check=gate_point(check, None) if check else None,
    )
