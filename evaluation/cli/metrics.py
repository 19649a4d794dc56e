"""`selfpara metrics FILE`: the metrics table (METHOD §3–§4) from precomputed per-variant labels."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer

from selfpara.cli.common import clean_errors, err_console, setup_logging

if TYPE_CHECKING:
    from evaluation.metrics import MetricsTable, PairedComparison


def metrics(
    file: Path = typer.Argument(..., help="CSV/TSV/JSONL/JSON with one row per answer to one variant."),
    question_col: str = typer.Option("question_id", help="Column with the question id."),
    variant_col: str = typer.Option("variant_id", help="Column with the variant id (unique within a question)."),
    original_col: str = typer.Option("is_original", help="Column that is true on the original wording's row."),
    label_col: str = typer.Option("label", help="Column with the label: correct, incorrect or not_attempted."),
    answer_col: Optional[str] = typer.Option(
        None, help="Column with the answer text (for consistency); default: 'answer' if present."
    ),
    group_col: Optional[str] = typer.Option(
        None,
        help="Grouping column (model, arm, ...); default: the first of group, arm, model, system present; "
        "'none' for one group.",
    ),
    exclude_original: bool = typer.Option(
        False, "--exclude-original", help="Compute A_any/A_strict (and consistency) over the paraphrases only."
    ),
    consistency: Optional[str] = typer.Option(
        None,
        help="Consistency measures (how far the answers to one question's wordings agree), comma-separated: "
        "exact, math, rouge1[@T], bertscore[@T], nli, noncontra; "
        "default: exact when answers are present; 'none' for no consistency.",
    ),
    consistency_mode: str = typer.Option("binary", help="Consistency mode: binary (thresholded), soft, or both."),
    nli_model: Optional[str] = typer.Option(None, help="Local NLI model directory (for nli/noncontra consistency)."),
    confidence_col: Optional[str] = typer.Option(
        None,
        help="Column with a confidence score per answer (higher = surer, e.g. a vote share): adds AUROC for "
        "correctness, PRR, ECE, accuracy at 50/80/90/100% coverage and what abstaining below thresholds would score.",
    ),
    compare: Optional[str] = typer.Option(
        None, help="Paired comparison A,B of two groups (A − B); default: when there are exactly two groups."
    ),
    seed: int = typer.Option(0, help="Seed of the bootstrap resamples."),
    n_boot: int = typer.Option(1000, help="Bootstrap resamples (and permutations)."),
    confidence: float = typer.Option(0.95, help="Confidence level of the intervals."),
    percent: bool = typer.Option(False, "--percent", help="Show values in percent."),
    as_json: bool = typer.Option(False, "--json", help="Print the full result as JSON."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log progress."),
) -> None:
    """Compute A_orig, A_exp, A_mv, A_any, A_strict, mismatch, flips, ND, IID, entropy, consistency, with CIs.

    FILE has one row per (question, variant) and columns question_id, variant_id,
    is_original, label, optionally answer and a grouping column (model/arm): each group
    gets its own column of estimates, and two groups are compared pairwise.
    """
    setup_logging(verbose)
    with clean_errors():
        from evaluation.metrics import compute_metrics, load_label_rows, parse_consistency
        from evaluation.metrics.signals import confidence_by_group
        from selfpara.errors import ConfigError

        group = None if group_col is not None and group_col.lower() == "none" else (group_col or "auto")
        rows, used = load_label_rows(
            file,
            question_col=question_col,
            variant_col=variant_col,
            original_col=original_col,
            label_col=label_col,
            answer_col=answer_col or "auto",
            group_col=group,
            confidence_col=confidence_col,
        )
        if consistency is None:
            specs = ["exact"] if used["answer"] and any(r.answer for r in rows) else []
        else:
            from evaluation.cli.report import check_consistency

            check_consistency(consistency)
            specs = parse_consistency(consistency)
            if specs and not used["answer"]:
                raise ConfigError(f"{file}: consistency needs an answer column (--answer-col)")
        nli = None
        if any(s.split("@")[0].lower() in ("nli", "noncontra", "entail", "non-contradiction") for s in specs):
            if not nli_model:
                raise typer.BadParameter(
                    "nli/noncontra consistency needs --nli-model DIR (a local NLI classifier)",
                    param_hint="'--consistency'",
                )
            from selfpara.pipeline.offline import load_nli

            nli = load_nli(nli_model)
        pair = None
        if compare:
            parts = [p.strip() for p in compare.split(",")]
            if len(parts) != 2 or not all(parts):
                raise typer.BadParameter(f"takes two group names, A,B; got {compare!r}", param_hint="'--compare'")
            pair = (parts[0], parts[1])
        with err_console().status("computing metrics…") if not as_json else _nullcontext():
            table = compute_metrics(
                rows,
                include_original=not exclude_original,
                consistency=specs,
                consistency_mode=consistency_mode,
                nli=nli,
                n_boot=n_boot,
                seed=seed,
                confidence=confidence,
                compare=pair or "auto",
            )
            scores = (
                confidence_by_group(rows, n_boot=n_boot, seed=seed, confidence=confidence) if confidence_col else {}
            )
        table.notes.insert(0, f"{file}: {len(rows)} rows; group column: {used['group'] or 'none'}")
    if as_json:
        data = table.model_dump(mode="json")
        if confidence_col:
            data["confidence_of_correctness"] = scores
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    _print_table(table, percent)
    if confidence_col:
        _print_confidence(scores, confidence_col)


def _print_confidence(scores: dict[str, Any], column: str) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table

    def num(x: float | None) -> str:
        return "–" if x is None else f"{x:.3f}"

    out = Table(title=f"{column} as a predictor of correctness (attempted answers)", box=box.SIMPLE_HEAD)
    for name in ("group", "attempted", "AUROC [CI]", "PRR", "acc@50%", "acc@80%", "acc@90%", "acc@100%", "ECE"):
        out.add_column(name, justify="left" if name == "group" else "right")
    policy = Table(title=f"abstaining below a {column} threshold", box=box.SIMPLE_HEAD)
    for name in ("group", "threshold", "coverage", "accuracy answered", "F", "score p=0.75"):
        policy.add_column(name, justify="left" if name == "group" else "right")
    for group, c in scores.items():
        s = c["signals"]["confidence"]
        ci = f" [{num(s['lo'])}, {num(s['hi'])}]" if s["lo"] is not None else ""
        coverage = (num(s["coverage"].get(k)) for k in ("0.5", "0.8", "0.9", "1"))
        out.add_row(group, str(c["attempted"]), num(s["auroc"]) + ci, num(s.get("prr")), *coverage, num(s.get("ece")))
        for p in c.get("policy", []):
            policy.add_row(
                group,
                f"{p['threshold']:g}",
                num(p["attempted_rate"]),
                num(p["correct_given_attempted"]),
                num(p["f_score"]),
                num(p.get("score@0.75")),
            )
    if not scores:
        err_console().print("no group has a confidence score on every row")
        return
    Console().print(out)
    Console().print(policy)


class _nullcontext:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _print_table(table: MetricsTable, percent: bool) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console()
    level = f"{table.confidence:.0%}"
    scope = "original + paraphrases" if table.include_original else "paraphrases only"
    out = Table(
        title=f"metrics, {level} CI over questions: Wilson for yes/no metrics, bootstrap otherwise "
        f"(A_any/A_strict over {scope})",
        box=box.SIMPLE_HEAD,
    )
    out.add_column("metric", style="bold", no_wrap=True)
    for group in table.groups:
        out.add_column(Text(f"{group}\n(n={table.questions[group]}, m̄={table.variants[group]:.1f})"), justify="right")
    for metric in table.metrics:
        cells = [Text(table.groups[g][metric].fmt(3, percent=percent)) for g in table.groups]
        out.add_row(Text(table.info[metric].title if metric in table.info else metric), *cells)
    console.print(out)
    if table.comparisons:
        scale, d = (100.0, 1) if percent else (1.0, 3)

        pairs: dict[tuple[str, str], list[PairedComparison]] = {}
        for c in table.comparisons:
            pairs.setdefault((c.a, c.b), []).append(c)
        for (a, b), rows in pairs.items():
            comp = Table(title=f"paired comparison {a} − {b} over the same questions", box=box.SIMPLE_HEAD)
            comp.add_column("metric", style="bold", no_wrap=True)
            comp.add_column(f"a − b [{level} CI]", justify="right", no_wrap=True)
            comp.add_column("p", justify="right")
            comp.add_column("test")
            for c in rows:
                diff = c.fmt(d, scale)
                p = "–" if c.p_value is None else f"{c.p_value:.3g}"
                test = {"mcnemar-exact": "McNemar", "mcnemar-chi2": "McNemar χ²", "permutation": "perm.", "none": ""}[
                    c.test
                ]
                title = table.info[c.metric].title if c.metric in table.info else c.metric
                comp.add_row(Text(title), Text(diff), p, test)
            console.print(comp)
    for note in table.notes:
        err_console().print(Text(note, style="dim"))
    if table.comparisons:
        err_console().print(
            Text(
                "p: McNemar's test for one-outcome-per-question metrics, paired permutation test otherwise", style="dim"
            )
        )
    if not percent:
        err_console().print(Text("values are fractions of 1 (--percent shows percent)", style="dim"))
