"""`selfpara calibrate RUN_DIR --target-error 0.1`: a confidence threshold with a promise, from a labelled run."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Any, Optional

import typer

from selfpara.cli.common import EXIT_FAILED, clean_errors, err_console, setup_logging


class Action(str, Enum):
    flag = "flag"
    abstain = "abstain"


def calibrate(
    run_dir: Path = typer.Argument(..., help="A run directory written by `selfpara bench` (labelled answers)."),
    target_error: Optional[float] = typer.Option(
        None, "--target-error", min=0.0, max=1.0, help="The error rate (wrong / answered) to keep, e.g. 0.1."
    ),
    gate: bool = typer.Option(
        False,
        "--gate",
        help="Fit doubt first's sure_probability instead: the threshold that votes on the most questions while "
        "the run's answers cost at most --budget times raw's (needs a raw arm and an arm that voted on every "
        "question).",
    ),
    budget: float = typer.Option(
        1.5, "--budget", min=1.0, help="With --gate: the cost per answer allowed, as a multiple of raw's."
    ),
    cost: str = typer.Option("model-seconds", "--cost", help="With --gate: what cost is: model-seconds or calls."),
    arm: str = typer.Option("selfpara", "--arm", help="The arm whose confidence to calibrate (its label in the run)."),
    confidence: float = typer.Option(
        0.95, "--confidence", min=0.0, max=1.0, help="The probability with which the target is kept."
    ),
    split: float = typer.Option(
        0.5,
        "--split",
        min=0.0,
        max=1.0,
        help="Share of the questions (seeded shuffle) the threshold is chosen on; the rest check it. "
        "1: choose on every question, check on none.",
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the split."),
    all_wordings: bool = typer.Option(
        False,
        "--all-wordings",
        help="Count the answers to every wording of a question (default: originals only; a question's "
        "wordings are not independent, and the bound assumes they are).",
    ),
    out: Optional[Path] = typer.Option(
        None,
        "--out",
        "-o",
        help="Where to write the settings file (.toml, or .json); default RUN_DIR/calibration.toml. "
        "Read by `ask --settings`, `serve --config` and `selfpara.config_from_file`.",
    ),
    action: Action = typer.Option(
        Action.flag, "--low-vote-share", help="What the written settings do below the threshold: flag or abstain."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the calibration as JSON."),
    verbose: bool = typer.Option(False, "--verbose", "-v"),
) -> None:
    """Choose the lowest confidence threshold whose answers keep --target-error with --confidence (a one-sided
    Clopper–Pearson bound on the error of the answers at or above it), check it on the questions held out,
    print the coverage it expects, and write it where ask, the library and the proxy read it. With --gate,
    choose doubt first's sure_probability under a cost budget instead."""
    setup_logging(verbose)
    if gate:
        measure = {"model-seconds": "model_s", "calls": "calls"}.get(cost)
        if measure is None:
            raise typer.BadParameter(f"--cost is model-seconds or calls, not {cost!r}")
        _calibrate_gate(run_dir, arm, budget, measure, split, seed, out, as_json)
        return
    if target_error is None:
        raise typer.BadParameter("give --target-error (a confidence threshold) or --gate (doubt first's threshold)")
    with clean_errors():
        from evaluation.calibrate import calibrate_run
        from evaluation.calibration_file import DEPLOYABLE_ARMS, write_calibration

        if not 0.0 < target_error < 1.0 or not 0.0 < confidence < 1.0 or split <= 0.0:
            raise typer.BadParameter(
                "--target-error and --confidence must lie strictly between 0 and 1, --split above 0"
            )
        result = calibrate_run(
            run_dir,
            target_error=target_error,
            arm=arm,
            confidence=confidence,
            split=split,
            seed=seed,
            all_wordings=all_wordings,
        )
        written: Path | None = None
        if result.choice.threshold is not None and result.arm_kind in DEPLOYABLE_ARMS:
            written = write_calibration(out or run_dir / "calibration.toml", result, low_vote_share=action.value)
        elif out is not None and result.choice.threshold is not None:
            write_calibration(out, result, low_vote_share=action.value)  # raises: says why it cannot
    if as_json:
        typer.echo(json.dumps({**result.model_dump(mode="json"), "written": str(written) if written else None}))
    else:
        for line in summary_lines(result.model_dump(mode="json")):
            typer.echo(line)
        if written:
            typer.echo(f"written to {written}")
    if result.choice.threshold is None:
        raise typer.Exit(EXIT_FAILED)
    if result.check is not None and result.check.within_target is False:
        err_console().print("[yellow]warning: on the held-out questions the error exceeded the target[/yellow]")


def summary_lines(result: dict[str, Any]) -> list[str]:
    """What `calibrate` prints: the split, the threshold with its bound and coverage, and the check."""
    choice, check = result["choice"], result["check"]
    target, conf = result["target_error"], result["confidence"]
    lines = [
        f"arm {result['arm']} of {result['run']}: {result['questions_choose']} questions choose, "
        f"{result['questions_check']} check ({result['wordings']} wordings); target error {target:g} "
        f"at {100 * conf:g}% confidence"
    ]
    if result.get("left_out"):
        used = result["questions_choose"] + result["questions_check"]
        reasons = ", ".join(f"{n} {_LEFT_OUT[reason]}" for reason, n in result["left_out"].items())
        lines.append(f"{used} of the run's {result['questions_in_run']} questions have an answer to calibrate on; "
                     f"left out: {reasons}")  # fmt: skip
    if choice["threshold"] is None:
        bound = "" if choice["bound"] is None else f"; the surest answers' error bound is {choice['bound']:.3f}"
        lines.append(
            f"no threshold keeps error ≤ {target:g} with {100 * conf:g}% confidence on {choice['attempted']} "
            f"answers{bound} (a higher target, a lower confidence or more questions may)"
        )
        return lines
    lines.append(
        f"threshold {choice['threshold']:.4f}: answers {choice['covered']} of {choice['attempted']} "
        f"(expected coverage {100 * choice['coverage']:.1f}%), {choice['errors']} wrong; error ≤ "
        f"{choice['bound']:.3f} with {100 * conf:g}% confidence"
    )
    if check is None:
        lines.append("no question held out: the promise is unchecked (use --split below 1)")
    elif check["error"] is None:
        lines.append(f"held out: none of {check['attempted']} answers reached the threshold")
    else:
        verdict = "within the target" if check["within_target"] else "ABOVE the target"
        lines.append(
            f"held out: answers {check['covered']} of {check['attempted']} (coverage {100 * check['coverage']:.1f}%), "
            f"{check['errors']} wrong: error {check['error']:.3f} [{check['lo']:.3f}, {check['hi']:.3f}], {verdict}"
        )
    return lines


_LEFT_OUT = {
    "not_run": "not answered yet (an interrupted or partial run: rerun bench to finish it)",
    "failed": "whose answer call failed",
    "not_attempted": "the arm declined to answer",
}
"""How `calibrate` says why a question dropped out, by the reasons of `Calibration.left_out`."""


def _calibrate_gate(
    run_dir: Path, arm: str, budget: float, measure: str, split: float, seed: int, out: Path | None, as_json: bool
) -> None:
    """`calibrate --gate`: fit sure_probability on the run, print the choice and its check, write the file."""
    with clean_errors():
        from evaluation.calibration_file import write_gate
        from evaluation.gate import fit_gate
        from evaluation.rundir import read_config

        fit = fit_gate(run_dir, arm=arm, budget=budget, measure=measure, split=split, seed=seed)
        written = write_gate(out or run_dir / "gate.toml", fit, read_config(run_dir)) if fit.chosen else None
    if as_json:
        typer.echo(json.dumps({**fit.model_dump(mode="json"), "written": str(written) if written else None}))
    else:
        for line in gate_lines(fit.model_dump(mode="json")):
            typer.echo(line)
        if written:
            typer.echo(f"written to {written}")
    if fit.chosen is None:
        raise typer.Exit(EXIT_FAILED)


def gate_lines(fit: dict[str, Any]) -> list[str]:
    """What `calibrate --gate` prints: the budget, the threshold chosen with what it did, and its check."""

    def point(p: dict[str, Any]) -> str:
        strict = "" if p["a_strict"] is None else f", A_strict {p['a_strict']:.3f}"
        seconds = "" if p["cost"] is None else f"{p['cost']:.2f}x raw's model-seconds, "
        return (
            f"voted on {100 * p['voted']:.0f}% of {p['wordings']} wordings, {seconds}{p['calls']:.2f}x its calls, "
            f"A_orig {p['a_orig']:.3f}{strict}, {p['gained']} gained, {p['lost']} lost"
        )

    lines = [
        f"arm {fit['arm']} of {fit['run']}: {fit['questions_choose']} questions choose, {fit['questions_check']} "
        f"check; budget {fit['budget']:g}x raw's {_MEASURES[fit['measure']]} per answer",
        f"always voting: {point(fit['curve'][0])}",
    ]
    if fit["chosen"] is None:
        lines.append(f"no threshold from 0.50 up keeps the budget (at 0.50: {point(fit['curve'][-1])})")
        return lines
    lines.append(f"sure_probability {fit['chosen']['threshold']:.2f}: {point(fit['chosen'])}")
    if fit["check"] is not None:
        lines.append(f"held out: {point(fit['check'])}")
        lines.append(f"held out, always voting: {point(fit['always_check'])}")
    return lines


_MEASURES = {"model_s": "model-seconds", "calls": "calls"}
