"""`selfpara report RUN_DIR`: rebuild report.json, report.md and report.html from a run directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from selfpara.cli.common import clean_errors, err_console, setup_logging


def check_consistency(value: str | None, flag: str = "--consistency") -> None:
    """Refuse an unknown consistency function or a bad threshold as a usage error naming `flag`
    (exit code 2), before any work starts.

    Args:
        value: the flag's value (`exact,rouge1@0.6`); None: nothing to check.
        flag: the flag's name, for the message.
    """
    from evaluation.metrics import parse_consistency
    from evaluation.metrics.consistency import make_agreement
    from selfpara.errors import ConfigError

    for spec in parse_consistency(value):
        try:
            make_agreement(spec, nli=object())  # whether an NLI model is given is checked where it loads
        except ConfigError as exc:
            raise typer.BadParameter(str(exc), param_hint=f"'{flag}'") from None


def report(
    run_dir: Path = typer.Argument(..., help="A run directory written by `selfpara bench` (holds config.json)."),
    consistency: str = typer.Option(
        "exact,rouge1",
        "--consistency",
        help="Consistency measures (how far the answers to one question's wordings agree; not the equivalence "
        "functions of the same names): exact, math, rouge1[@t], bertscore[@t], nli, noncontra; 'none' for none.",
    ),
    paraphrases_only: bool = typer.Option(
        False,
        "--paraphrases-only",
        help="A_any/A_strict over the paraphrases only (as the published factual-QA tables).",
    ),
    nli_model: Optional[str] = typer.Option(None, "--nli-model", help="Local NLI model directory (nli/noncontra)."),
    n_boot: int = typer.Option(1000, "--n-boot", min=1, help="Bootstrap resamples for the CIs."),
    all_answers: bool = typer.Option(
        False,
        "--all-answers",
        help="For an unfinished run, report every answer so far (default: only the "
        "questions every arm answered in full, so arms are compared on the same questions).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print report.json instead of the Markdown table."),
    verbose: bool = typer.Option(False, "--verbose", "-v"),
) -> None:
    """Recompute the metrics of RUN_DIR and write its reports (the run itself is not touched)."""
    setup_logging(verbose)
    with clean_errors():
        from evaluation.report import markdown_table, write_reports

        check_consistency(consistency)
        nli = None
        if nli_model:
            from selfpara.pipeline.offline import load_nli

            nli = load_nli(nli_model)
        result = write_reports(
            run_dir,
            consistency=consistency,
            include_original=not paraphrases_only,
            n_boot=n_boot,
            nli=nli,
            complete_only=not all_answers,
        )
    if as_json:
        typer.echo(json.dumps(result, indent=2, default=str))
        return
    typer.echo(markdown_table(result))
    err_console().print(f"[dim]wrote {run_dir}/report.json, report.md, report.html[/dim]", highlight=False)
