"""`selfpara bench`: run arms (raw, selfpara, baselines) over a dataset's variant sets and report."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, cast

import typer

from evaluation.arms import ARMS
from evaluation.datasets import FORMATS
from evaluation.graders.registry import FACTORIES
from selfpara.cli.common import ParaphraseCheck, clean_errors, default, err_console, setup_logging
from selfpara.models import EMBEDDED_MODEL
from selfpara.util import API_BASE_ENV, MODEL_ENV

if TYPE_CHECKING:
    from evaluation.bench_config import BenchConfig

DEFAULT_LIMIT = 20
DEFAULT_MAX_VARIANTS = 2


class Answers(str, Enum):
    """evaluation.arms.templates.AnswerStyle, as the choices of --answers."""

    short = "short"
    worked = "worked"
    natural = "natural"


def bench(
    ctx: typer.Context,
    dataset: str = typer.Option(
        "sample",
        "--dataset",
        "-d",
        help=f"sample (built-in), {FORMATS.help_names()} (NAME:PATH for a file), hf:NAME, or a path.",
    ),
    model: Optional[str] = typer.Option(
        None,
        "--model",
        "-m",
        envvar=MODEL_ENV,
        help=f"litellm model string; default: the embedded {EMBEDDED_MODEL}.",
    ),
    arms: Optional[str] = typer.Option(
        None,
        "--arms",
        "-a",
        help=f"Comma-separated arms: {ARMS.help_names()} (oracle is a measuring instrument: it votes "
        "with the dataset's other wordings); settings in brackets, "
        "e.g. 'raw,sc\\[n=5],selfpara\\[k=5;equivalence=exact,numeric]'. Default: raw,selfpara, and oracle "
        "where the dataset has more than one wording of a question (the built-in set has 4).",
        show_default=False,
    ),
    k: int = typer.Option(
        default("k", "bench"),
        "--k",
        "-k",
        help="Paraphrases per question (selfpara, single_call); sc draws k+1 samples.",
    ),
    variants: str = typer.Option(
        "data",
        "--variants",
        help="data (the dataset's own), generate:N (made by the paraphraser, verified, saved), "
        "or the path of an items JSONL (e.g. another run's items.jsonl).",
    ),
    max_variants: int = typer.Option(
        DEFAULT_MAX_VARIANTS,
        "--max-variants",
        help="Variants per item, original first (0: all).",
    ),
    limit: int = typer.Option(
        DEFAULT_LIMIT, "--limit", "-n", help="Items: a seeded random subset of this many (0: all)."
    ),
    out: Optional[Path] = typer.Option(
        None,
        "--out",
        "-o",
        help="Run directory; default runs/bench-DATE-TIME. Rerun with the same --out and settings to resume.",
    ),
    concurrency: int = typer.Option(16, "--concurrency", "-c", min=1, max=256, help="Samples answered at once."),
    order: str = typer.Option(
        "arm:25",
        "--order",
        help="Order samples start in: item, arm, or arm:N (arm after "
        "arm within blocks of N items; an interrupted run stays balanced across arms).",
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the item subset and of sampling arms."),
    max_tokens: int = typer.Option(default("max_tokens", "bench"), "--max-tokens", help="Max tokens of each answer."),
    shard: str | None = typer.Option(
        None,
        "--shard",
        help="I/N: answer only shard I of N of the items (one process per core); join the runs with "
        "scripts/merge_runs.py.",
    ),
    answers: Answers = typer.Option(
        Answers.short,
        "--answers",
        help="short (the final answer alone), worked (math shows its working, then 'The answer is N.'; "
        "raise --max-tokens to about 256) or natural (the question alone, as `ask` and the proxy send it; "
        "raise --max-tokens to about 128).",
    ),
    grader: str = typer.Option(
        "auto",
        "--grader",
        help=f"How an answer is marked correct against the gold (a grader, not an equivalence function): "
        f"auto (by item kind), {FACTORIES.help_names()}.",
    ),
    grader_model: Optional[str] = typer.Option(
        None, "--grader-model", help="Model of the llm graders; default: --model."
    ),
    nli_model: Optional[str] = typer.Option(None, "--nli-model", help="Local NLI model directory (nli grader)."),
    consistency: str = typer.Option(
        "exact,rouge1",
        "--consistency",
        help="Consistency measures for the report: how far the answers to one question's wordings agree "
        "(see `selfpara report --help`).",
    ),
    paraphrase_check: ParaphraseCheck = typer.Option(
        ParaphraseCheck(default("paraphrase_check", "bench")),
        "--paraphrase-check",
        help="Check on generated variants (--variants generate:N).",
    ),
    api_base: Optional[str] = typer.Option(
        None, "--api-base", envvar=API_BASE_ENV, help="Base URL of an OpenAI-compatible server."
    ),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Folder holding the public benchmark files."),
    cache: Optional[Path] = typer.Option(
        None,
        "--cache",
        help="Call cache file (SQLite); default ~/.cache/selfpara/bench-calls-v2.sqlite "
        "($SELFPARA_CACHE_DIR). Arms share identical greedy and seeded calls; usage counts them as spent.",
    ),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not read or write the call cache."),
    overwrite: bool = typer.Option(
        False, "--overwrite", "--force", help="Start over in a run directory that holds another config."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar; print only the table."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log model calls and stages."),
) -> None:
    """Measure what selfpara gains: every arm answers every variant of every item; prints the
    metric table and writes report.json, report.md and report.html into the run directory."""
    setup_logging(verbose)
    with clean_errors(ctx, all_from_flags=True):  # bench has no settings file: a bad setting is a flag's
        import asyncio
        import time

        from evaluation.bench_config import RunOptions
        from evaluation.cache import open_cache
        from evaluation.cli.report import check_consistency
        from evaluation.report import markdown_table, write_reports
        from evaluation.runner import run_bench
        from evaluation.variants import DEFAULT_ARMS, default_arms
        from selfpara.errors import ConfigError
        from selfpara.models import is_embedded

        if arms is None:
            try:
                arms = ",".join(
                    default_arms(dataset, variants, max_variants or None, str(data_dir) if data_dir else None)
                )
            except ConfigError:  # a bad --variants: the check of every flag below names it (exit code 2)
                arms = ",".join(DEFAULT_ARMS)
        config = _config(
            order=order,
            dataset=dataset,
            model=model or EMBEDDED_MODEL,
            api_base=api_base,
            arms=arms,
            k=k,
            variants=variants,
            max_variants=max_variants or None,
            limit=limit or None,
            shard=shard,
            seed=seed,
            max_tokens=max_tokens,
            answers=answers.value,
            grader=grader,
            grader_model=grader_model,
            nli_model=nli_model,
            paraphrase_check=paraphrase_check.value,
        )
        check_consistency(consistency)
        run_dir = out or Path("runs") / f"bench-{datetime.now():%Y%m%d-%H%M%S}"
        options = RunOptions(
            concurrency=concurrency,
            cache=open_cache(cache, enabled=not no_cache),
            progress=not quiet,
            data_dir=str(data_dir) if data_dir else None,
            overwrite=overwrite,
            order=order,
        )
        if not quiet:
            what = "the embedded model (loads on first call)" if is_embedded(config.model) else config.model
            err_console().print(f"[bold]bench[/bold] {config.dataset} on {what} → {run_dir}", highlight=False)
        started = time.perf_counter()
        result = asyncio.run(run_bench(config, run_dir, options))
        report = write_reports(run_dir, consistency=consistency)
        typer.echo(markdown_table(report))
        if not quiet:
            n_items = len(result.items)
            n_var = sum(len(i.variants) for i in result.items)
            err_console().print(
                f"[dim]{n_items} items, {n_var} variants, arms {', '.join(result.config.arms)}; "
                f"{result.new_samples} new samples ({result.skipped} resumed), {result.model_calls} model calls "
                f"made, {result.shared_calls} shared between arms, {result.cached_calls} cached (from earlier runs); "
                f"{time.perf_counter() - started:.0f}s. "
                f"Reports: {run_dir}/report.html, report.md, report.json[/dim]",
                highlight=False,
            )
            if result.failed:
                err_console().print(
                    f"[yellow]{result.failed} samples failed (model errors); rerun the same "
                    f"command to retry them[/yellow]"
                )


def _config(order: str = "arm:25", **values: Any) -> BenchConfig:
    """Build a BenchConfig; validation problems become one ConfigError whose problems name the
    fields (the CLI names their flags)."""
    from pydantic import ValidationError

    from evaluation.arms import parse_arm_list
    from evaluation.arms.spec import make_arm
    from evaluation.bench_config import BenchConfig
    from evaluation.graders.registry import check_grader_name
    from evaluation.runner import job_order
    from evaluation.variants import parse_variants
    from selfpara.errors import ConfigError, config_error

    def checked(field: str, check: Callable[[], object]) -> None:
        try:
            check()
        except ConfigError as exc:
            raise ConfigError(str(exc), problems=((field, str(exc)),)) from None

    # Flags whose values are parsed by the code that uses them are parsed now, so that a bad
    # one is a usage error naming its flag before any work starts.
    specs: list[Any] = []
    checked("arms", lambda: specs.extend(parse_arm_list(str(values["arms"]))))
    checked("grader", lambda: check_grader_name(str(values["grader"])))
    checked("variants", lambda: parse_variants(str(values["variants"])))
    checked("order", lambda: job_order([], [], order))
    values["arms"] = [s.label for s in specs]
    try:
        config = BenchConfig(**values)
    except ValidationError as exc:
        raise config_error(exc, "bench settings", name=lambda loc: "--" + loc.replace("_", "-")) from None
    # each arm built (with no client: nothing is called), so that its own settings are checked too
    checked("arms", lambda: [make_arm(spec, cast(Any, None), config.model, k=config.k) for spec in specs])
    return config
