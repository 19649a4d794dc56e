"""A confidence threshold that keeps its promise, chosen on one part of a labelled run and checked on the other.

    result = calibrate_run("runs/held200", target_error=0.1, arm="selfpara", confidence=0.95)
    write_calibration("calibration.toml", result)      # what ask --settings, serve --config and
                                                       # selfpara.config_from_file read

The promise: among the answers whose confidence is at or above the threshold, the error rate
(wrong / attempted) is at most `target_error`, with probability at least `confidence` over the
draw of questions. It rests on a one-sided Clopper–Pearson upper bound on the error of the covered
answers, not on the error seen. Thresholds are tested from the highest down, in a fixed order, and
the search stops at the first whose bound exceeds the target (fixed-sequence testing, as in
Learn-then-Test): so the whole search, not just one threshold, keeps the stated confidence.
Thresholds that cover too few answers for any bound to reach the target are passed over; which
those are depends on the scores alone, never on the labels.

The questions are split at random (seeded) into a part that chooses and a part that checks; the
check reports the error the threshold kept on questions it never saw. Answers to one question's
several wordings are not independent, so only the originals count unless told otherwise.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from evaluation import stats
from evaluation.arms.evidence import recorded_confidence
from evaluation.records import SampleRecord
from evaluation.rundir import SAMPLES_FILE, latest_records, read_config, read_samples
from selfpara.errors import ConfigError


class ThresholdChoice(BaseModel):
    """The threshold chosen on the choosing part, and what it covered there.

    Attributes:
        threshold: the lowest confidence answered; None when no threshold keeps the promise.
        covered, errors: attempted answers at or above it, and the wrong ones among them.
        attempted: attempted answers in the choosing part.
        bound: the Clopper–Pearson upper bound on the error of the covered answers (≤ the target);
            with no threshold, the lowest bound any tested threshold reached (None if none was tested).
        coverage: covered / attempted, the share of answers it expects to give.
        tested: thresholds tested, highest first, up to and including the first that failed.
    """

    threshold: float | None
    covered: int = 0
    errors: int = 0
    attempted: int = 0
    bound: float | None = None
    coverage: float = 0.0
    tested: int = 0


class ThresholdCheck(BaseModel):
    """What the threshold did on the checking part: covered answers, their error with a two-sided
    Clopper–Pearson interval, and whether the error stayed within the target."""

    attempted: int
    covered: int
    errors: int
    error: float | None
    lo: float | None
    hi: float | None
    coverage: float | None
    within_target: bool | None


class Calibration(BaseModel):
    """A calibrated threshold with where it came from (what `write_calibration` records).

    `questions_in_run` is the run's question count; `left_out` says why the questions that neither
    choose nor check dropped out, by reason: `not_run` (the arm has no answer to the question yet: an
    interrupted or partial run), `failed` (its answer call failed), `not_attempted` (the arm declined to
    answer: no error to count).
    """

    run: str
    arm: str
    arm_kind: str
    target_error: float
    confidence: float
    split: float
    seed: int
    wordings: str
    questions_choose: int
    questions_check: int
    questions_in_run: int = 0
    left_out: dict[str, int] = {}
    choice: ThresholdChoice
    check: ThresholdCheck | None
    arm_config: dict[str, Any] | None
    bench: dict[str, Any]


def fewest_to_promise(target_error: float, confidence: float) -> int:
    """The fewest answers whose bound can reach `target_error`: n with no error and bound ≤ target."""
    # with no error the bound is 1 − (1 − confidence)^(1/n): solved for n, then checked exactly
    n = max(1, math.ceil(math.log(1.0 - confidence) / math.log1p(-target_error)) - 1)
    while stats.clopper_pearson_upper(0, n, confidence) > target_error:
        n += 1
    return n


def choose_threshold(
    scores: Sequence[float], correct: Sequence[bool], target_error: float, confidence: float = 0.95
) -> ThresholdChoice:
    """The lowest threshold reached, from the highest score down, while every threshold's covered answers
    have an error bound (one-sided Clopper–Pearson at `confidence`) at most `target_error`.

    Args:
        scores: one confidence per attempted answer (higher = surer).
        correct: whether each answer was right.
        target_error: the error rate to keep, in (0, 1).
        confidence: the probability with which it is kept, in (0, 1).
    """
    if not 0.0 < target_error < 1.0:
        raise ConfigError(f"the target error must be between 0 and 1, got {target_error}")
    if not 0.0 < confidence < 1.0:
        raise ConfigError(f"the confidence must be between 0 and 1, got {confidence}")
    if len(scores) != len(correct):
        raise ConfigError(f"{len(scores)} scores for {len(correct)} answers")
    n = len(scores)
    pairs = sorted(zip(scores, correct, strict=True), key=lambda p: -p[0])
    least = fewest_to_promise(target_error, confidence)
    chosen = ThresholdChoice(threshold=None, attempted=n)
    covered = errors = 0
    for i, (score, right) in enumerate(pairs):
        covered += 1
        errors += not right
        if i + 1 < n and pairs[i + 1][0] == score:
            continue  # a threshold covers its whole tied block
        if covered < least:
            continue  # too few answers for any bound to reach the target: not a test
        bound = stats.clopper_pearson_upper(errors, covered, confidence)
        chosen.tested += 1
        if bound > target_error:
            if chosen.threshold is None:
                chosen.bound = bound  # the highest threshold already fails: say by how much
            break
        chosen = ThresholdChoice(
            threshold=float(score),
            covered=covered,
            errors=errors,
            attempted=n,
            bound=bound,
            coverage=covered / n,
            tested=chosen.tested,
        )
    return chosen


def check_threshold(
    scores: Sequence[float], correct: Sequence[bool], threshold: float, target_error: float, confidence: float
) -> ThresholdCheck:
    """The error and coverage of answering only at or above `threshold` on answers it was not chosen on."""
    kept = [right for score, right in zip(scores, correct, strict=True) if score >= threshold]
    errors = sum(1 for right in kept if not right)
    lo, hi = stats.clopper_pearson_interval(errors, len(kept), confidence) if kept else (None, None)
    error = errors / len(kept) if kept else None
    return ThresholdCheck(
        attempted=len(scores),
        covered=len(kept),
        errors=errors,
        error=error,
        lo=lo,
        hi=hi,
        coverage=len(kept) / len(scores) if scores else None,
        within_target=None if error is None else error <= target_error,
    )


def split_questions(question_ids: Sequence[str], split: float, seed: int) -> tuple[set[str], set[str]]:
    """(questions that choose, questions that check): a seeded shuffle of the sorted ids, the first
    round(split · n) choosing. `split` 1 chooses on every question and checks on none."""
    if not 0.0 < split <= 1.0:
        raise ConfigError(f"the split must be in (0, 1], got {split}")
    ids = sorted(set(question_ids))
    random.Random(seed).shuffle(ids)
    cut = round(split * len(ids))
    return set(ids[:cut]), set(ids[cut:])


def _answers(records: list[SampleRecord], questions: set[str]) -> tuple[list[float], list[bool]]:
    chosen = [r for r in records if r.item_id in questions]
    return [float(recorded_confidence(r.details) or 0.0) for r in chosen], [r.label == "correct" for r in chosen]


def calibrate_run(
    run: str | Path,
    *,
    target_error: float,
    arm: str = "selfpara",
    confidence: float = 0.95,
    split: float = 0.5,
    seed: int = 0,
    all_wordings: bool = False,
) -> Calibration:
    """Choose a threshold on `split` of the questions of run directory `run` and check it on the rest.

    The arm's attempted answers (correct or incorrect; failed samples and answers the arm itself
    declined are left out) and their recorded confidence; the originals only unless `all_wordings`.
    Raises ConfigError for an unknown arm, one that records no confidence, or nothing to choose on.
    """
    out = Path(run).expanduser()
    config = read_config(out)
    arms = {a["label"]: a for a in config.get("arms") or []}
    if arm not in arms:
        raise ConfigError(f"{out}: no arm {arm!r} in this run; it has {', '.join(arms) or 'none'}")
    recorded = [r for r in latest_records(read_samples(out / SAMPLES_FILE)) if r.arm == arm]
    if not all_wordings:
        recorded = [r for r in recorded if r.is_original]
    records = [r for r in recorded if not r.error and r.label != "not_attempted"]
    in_run = max(int(config.get("items") or 0), len({r.item_id for r in recorded}))
    left_out = _left_out(recorded, {r.item_id for r in records}, in_run)
    if not records:
        raise ConfigError(f"{out}: arm {arm!r} has no attempted answer to calibrate on")
    if any(recorded_confidence(r.details) is None for r in records):
        raise ConfigError(f"{out}: arm {arm!r} records no confidence for its answers (raw needs log-probabilities)")
    choose, check = split_questions([r.item_id for r in records], split, seed)
    choice = choose_threshold(*_answers(records, choose), target_error, confidence)
    checked = None
    if check and choice.threshold is not None:
        checked = check_threshold(*_answers(records, check), choice.threshold, target_error, confidence)
    return Calibration(
        run=str(run),
        arm=arm,
        arm_kind=str(arms[arm].get("arm", arm)),
        target_error=target_error,
        confidence=confidence,
        split=split,
        seed=seed,
        wordings="all" if all_wordings else "original",
        questions_choose=len(choose),
        questions_check=len(check),
        questions_in_run=in_run,
        left_out=left_out,
        choice=choice,
        check=checked,
        arm_config=arms[arm].get("config"),
        bench=config.get("bench", {}),
    )


def _left_out(recorded: list[SampleRecord], used: set[str], in_run: int) -> dict[str, int]:
    """Why the run's questions without an answer to calibrate on dropped out, by reason (see `Calibration`)."""
    dropped = {r.item_id: r for r in recorded if r.item_id not in used}
    failed = sum(1 for r in dropped.values() if r.error)
    declined = len(dropped) - failed
    counts = {"not_run": in_run - len(used) - len(dropped), "failed": failed, "not_attempted": declined}
    return {reason: n for reason, n in counts.items() if n}
