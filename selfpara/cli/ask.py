"""`selfpara ask`: answer one question through the wrapper."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from selfpara.cli import app
from selfpara.cli.choices import LowVoteShare, ParaphraseCheck, ParaphraseMethod, Transport
from selfpara.cli.common import clean_errors, err_console, setup_logging, stdout_to_stderr
from selfpara.cli.conventions import Command
from selfpara.cli.presets import default
from selfpara.config import MAX_K
from selfpara.config.settings import SURE_PROBABILITY
from selfpara.models.names import EMBEDDED_MODEL
from selfpara.pipeline.equivalence import EQUIVALENCE_FUNCTIONS
from selfpara.util.envvars import API_BASE_ENV, EQUIVALENCE_ENV, JUDGE_MODEL_ENV, K_ENV, MODEL_ENV, TRANSPORT_ENV
from selfpara.util.extras import install_note


@app.command(cls=Command)
def ask(
    ctx: typer.Context,
    question: str = typer.Argument(..., help="The question to answer; '-' reads it from stdin."),
    model: Optional[str] = typer.Option(
        None,
        "--model",
        "-m",
        envvar=MODEL_ENV,
        help=f"litellm model string; default: the embedded {EMBEDDED_MODEL}. "
        + escape(install_note("qwen", ("llama_cpp",))),
    ),
    k: int = typer.Option(default("k", "ask"), "--k", "-k", envvar=K_ENV, help=f"Paraphrases to generate (1-{MAX_K})."),
    equivalence: str = typer.Option(
        default("equivalence", "ask"),
        "--equivalence",
        envvar=EQUIVALENCE_ENV,
        help="Answer-equivalence functions (do two answers say the same?), comma-separated, cheapest first: auto or of "
        f"{EQUIVALENCE_FUNCTIONS.help_names()}.",
    ),
    judge_model: Optional[str] = typer.Option(
        None, envvar=JUDGE_MODEL_ENV, help="Model for the LLM judges; default: --model."
    ),
    renamings: bool = typer.Option(
        default("renamings", "ask"),
        "--renamings/--no-renamings",
        help="Fill vote slots first with rewordings made without a model that name what is asked another way "
        "('seat of government' for 'capital').",
    ),
    paraphrase_method: ParaphraseMethod = typer.Option(
        ParaphraseMethod(default("paraphrase_method", "ask")),
        help="How the model writes the other rewordings: forms (one call each, in a named form), list (one "
        "call); auto: forms on embedded models, list on remote ones.",
    ),
    paraphrase_check: ParaphraseCheck = typer.Option(
        ParaphraseCheck(default("paraphrase_check", "ask")),
        help="Check each paraphrase keeps the question (auto: llm, off on embedded models).",
    ),
    nli_model: Optional[str] = typer.Option(None, help="Local NLI model directory (for nli equivalence/check)."),
    temperature: float = typer.Option(default("temperature", "ask"), help="Decoding temperature of the answers."),
    top_up_temperature: Optional[float] = typer.Option(
        None,
        help="Fill each vote slot no kept paraphrase fills by asking the question again at this temperature "
        "(seeded); default: off.",
    ),
    overrule_margin: Optional[float] = typer.Option(
        None,
        help="Votes another answer needs over the original's to overrule it "
        f"(default {default('overrule_margin', 'ask'):g}).",
    ),
    sure_probability: Optional[str] = typer.Option(
        None,
        callback=lambda value: _sure_probability(value),
        help="Doubt first: answer the question first and skip the vote when the answer's token probability "
        "reaches this number; off: vote on every question; auto (default): "
        f"{SURE_PROBABILITY:g} on embedded models, off on remote ones.",
    ),
    max_tokens: int = typer.Option(default("max_tokens", "ask"), help="Max tokens per answer."),
    api_base: Optional[str] = typer.Option(
        None, envvar=API_BASE_ENV, help="Base URL of an OpenAI-compatible/vLLM/Ollama server."
    ),
    transport: Transport = typer.Option(
        Transport(default("transport", "ask")),
        envvar=TRANSPORT_ENV,
        help="How openai/ and hosted_vllm/ models are reached: auto (http when the "
        "base URL is known), litellm or http (lean OpenAI-API client).",
    ),
    low_vote_share: LowVoteShare = typer.Option(
        LowVoteShare(default("low_vote_share", "ask")),
        help="Below --low-vote-share-threshold: flag the answer, abstain (print --abstention-text) or off.",
    ),
    low_vote_share_threshold: float = typer.Option(
        default("low_vote_share_threshold", "ask"), help="Vote share below which --low-vote-share acts."
    ),
    abstention_text: Optional[str] = typer.Option(None, help="What to print when abstaining on a low vote share."),
    adaptive: Optional[bool] = typer.Option(
        default("adaptive", "ask"),
        "--adaptive/--fixed-k",
        help="Adaptive k: answer paraphrases in stages, stop once the answer is settled "
        "(default: on for embedded models, off for remote ones).",
        show_default=False,
    ),
    settings_file: Optional[Path] = typer.Option(
        None,
        "--settings",
        help="TOML or JSON settings file, its \\[upstream] table (the layout `serve --config` reads; a "
        "`selfpara calibrate` file sets a confidence threshold); flags given override it.",
    ),
    system: Optional[str] = typer.Option(None, help="System prompt sent with every wording."),
    show: bool = typer.Option(
        False, "--show", "-s", help="Print a table of variants, answers and clusters (to stderr, also with --json)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the full result as JSON."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log each stage."),
) -> None:
    """Ask QUESTION in several wordings and print the answer they agree on.

    Only the answer (or, with --json, the JSON) goes to stdout; notes, the table and logs go to stderr.
    """
    setup_logging(verbose)
    # without a settings file a failed settings check is always the flags' (exit code 2)
    with clean_errors(ctx, all_from_flags=settings_file is None), stdout_to_stderr():
        from selfpara.config import build_config
        from selfpara.config.file import calibration_mismatch, read_settings_file
        from selfpara.errors import InputError
        from selfpara.models.names import is_embedded
        from selfpara.paraphraser import SelfParaphraser, split_messages

        text = sys.stdin.read() if question == "-" else question
        try:  # an empty or oversized question is the command line's problem: exit code 2
            split_messages(text)
        except InputError as exc:
            raise typer.BadParameter(str(exc), ctx=ctx, param_hint="QUESTION") from None
        given: dict[str, object] = dict(
            model=model or EMBEDDED_MODEL,
            k=k,
            judge_model=judge_model,
            paraphrase_check=paraphrase_check.value,
            renamings=renamings,
            paraphrase_method=paraphrase_method.value,
            nli_model=nli_model,
            temperature=temperature,
            max_tokens=max_tokens,
            api_base=api_base,
            transport=transport.value,
            equivalence=equivalence,
            low_vote_share=low_vote_share.value,
            low_vote_share_threshold=low_vote_share_threshold,
            adaptive=adaptive,
            **({"abstention_text": abstention_text} if abstention_text else {}),
            **({"overrule_margin": overrule_margin} if overrule_margin is not None else {}),
            **({"sure_probability": sure_probability} if sure_probability is not None else {}),
            top_up_temperature=top_up_temperature,
        )
        source = read_settings_file(settings_file) if settings_file else None
        cfg = build_config(**(_over_file(ctx, given, source.upstream) if source else given))
        changed = calibration_mismatch(cfg, source.calibration) if source is not None else []
        if changed:  # one note, naming them (not also the library's log warning of the same)
            err_console().print(
                "[yellow]note: these settings leave the ones the confidence threshold was calibrated under "
                f"({escape('; '.join(changed))}); its error-rate promise does not carry over[/yellow]",
                highlight=False,
            )
        messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": text}]
        paraphraser = SelfParaphraser(cfg)
        status = "loading the embedded model and answering" if is_embedded(cfg.model) else f"asking {cfg.model}"
        with err_console().status(f"[bold]{status}[/bold] (k={cfg.k})…"):
            result = paraphraser.answer(messages)
    if show:  # stderr, so that it goes with --json too: stdout keeps the JSON alone
        from selfpara.cli.render import result_lines, result_table

        stderr = err_console()
        if stderr.is_terminal:
            stderr.print(result_table(result))
        else:
            stderr.print("\n".join(result_lines(result)), markup=False, highlight=False)
    if as_json:
        typer.echo(json.dumps(result.model_dump(mode="json"), indent=2))
        return
    typer.echo(result.answer)
    from selfpara.cli.render import kept_phrase, vote_phrase

    notes = [vote_phrase(result), f"confidence {result.confidence:.2f}"]
    if result.doubt.voted:
        notes.append(kept_phrase(result))
    if result.k_topped_up:
        notes.append(f"{result.k_topped_up} topped up")
    notes += [f.replace("_", " ") for f in result.flags if f not in _WARNINGS]
    err_console().print(f"[dim]{' · '.join(notes)}[/dim]", highlight=False)
    for flag in result.flags:
        if flag in _WARNINGS:
            err_console().print(f"[yellow]warning: {_WARNINGS[flag]}[/yellow]", highlight=False)


def _over_file(ctx: typer.Context, flags: dict[str, object], upstream: dict[str, object]) -> dict[str, object]:
    """The settings file's `upstream` values with the flags given (on the command line or by their
    environment variable) on top; a flag left at its default gives way to the file."""
    out = dict(upstream)
    for name, value in flags.items():
        source = ctx.get_parameter_source(name) if name in ctx.params else None
        given = source is None or source.name in ("COMMANDLINE", "ENVIRONMENT")
        if given or name not in upstream:
            out[name] = value
    return out


_WARNINGS = {
    "low_confidence": "low confidence: below the calibrated threshold, treat this answer as unreliable",
    "low_vote_share": "low vote share: the wordings disagree, treat this answer as unreliable",
    "judge_is_model_under_test": "the answer judge is the small/local model under test itself; its "
    "same/different verdicts are weak (set --judge-model to a stronger model)",
}


def _sure_probability(value: str | None) -> str | float | None:
    """`--sure-probability`: auto, off, or a number from 0 to 1."""
    if value is None or value in ("auto", "off"):
        return value
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if not 0.0 <= number <= 1.0:
        raise typer.BadParameter(f"{value!r}: give a number from 0 to 1, auto or off")
    return number
