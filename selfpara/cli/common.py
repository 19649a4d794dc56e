"""Helpers every CLI command shares: environment variable names, logging setup, stdout kept
for the command's own output, and turning errors into clean exits.

Settings reach a command in one order, highest first: a flag, then its environment
variable (the `*_ENV` names of `selfpara.util.envvars`, declared with typer's `envvar=` on the
option and shown in --help), then the settings file where the command takes one (`serve --config`), then
the default.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape

from selfpara.errors import ConfigError, SelfparaError


def err_console() -> Console:
    """A console on stderr, made at each use so that it reads the terminal width and stream of
    the moment (a console made at import keeps the width of whoever imported it first)."""
    return Console(stderr=True)


def setup_logging(verbose: bool) -> None:
    """Log to stderr; INFO with --verbose, WARNING otherwise.

    On a terminal records are drawn by rich; otherwise (redirected, piped, in CI) each
    record is one plain line, tracebacks included, so log readers can split on newlines.
    """
    handler: logging.Handler
    console = err_console()
    if console.is_terminal:
        from rich.logging import RichHandler

        handler = RichHandler(console=console, show_path=False)
    else:
        from selfpara.server.logs import TextFormatter

        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(TextFormatter())
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(message)s",
        handlers=[handler],
        force=True,
    )
    for noisy in ("LiteLLM", "litellm", "httpx", "transformers"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send whatever libraries print while a command works to stderr, keeping stdout for the
    command's own output (litellm prints a "Provider List" line for an unknown provider)."""
    with contextlib.redirect_stdout(sys.stderr):
        yield


EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
"""The exit codes of every command (docs/cli.md, "Exit codes"): done; the command ran and failed;
the command line cannot be used (click's own code for a usage error); interrupted by Ctrl-C."""


def flag_error(
    ctx: Any, exc: ConfigError, fields: Mapping[str, str] | None = None, *, all_from_flags: bool = False
) -> typer.BadParameter | None:
    """The usage error (exit code 2) that names the flags behind a failed settings check, or None
    when a problem is not a flag's (a value from a settings file): then it stays `exc`, exit 1.

    Args:
        ctx: the command's click context (typer.Context).
        exc: the failed check; its `problems` name the fields.
        fields: field name -> the command's parameter name where they differ (`timeout_s` -> `timeout`).
        all_from_flags: every setting came from the command line (no settings file), so a problem
            of the whole object (two flags that cannot go together) is a usage error too.
    """
    if not exc.problems:
        return None
    params = {p.name: p for p in ctx.command.params}
    named = []
    for path, message in exc.problems:
        field = path.split(".")[-1] if path else ""
        param = params.get((fields or {}).get(field, field))
        source = ctx.get_parameter_source(param.name) if param is not None else None
        if param is not None and (all_from_flags or getattr(source, "name", "") in ("COMMANDLINE", "ENVIRONMENT")):
            named.append((param, message))
        elif all_from_flags:
            named.append((None, message))
        else:
            return None
    if len(named) == 1 and named[0][0] is not None:
        return typer.BadParameter(named[0][1], ctx=ctx, param=named[0][0])
    return typer.BadParameter(
        "; ".join(f"{p.get_error_hint(ctx)}: {m}" if p is not None else m for p, m in named), ctx=ctx
    )


@contextlib.contextmanager
def clean_errors(
    ctx: Any = None, fields: Mapping[str, str] | None = None, *, all_from_flags: bool = False
) -> Iterator[None]:
    """Turn selfpara's own errors into a red one-line message and exit code 1 (no traceback); a
    settings check that failed on flags into click's usage error naming them (exit code 2).

    Args:
        ctx: the command's context, to name its flags; None: every error is exit code 1.
        fields, all_from_flags: see `flag_error`.
    """
    try:
        yield
    except ConfigError as exc:
        usage = flag_error(ctx, exc, fields, all_from_flags=all_from_flags) if ctx is not None else None
        if usage is not None:
            raise usage from None
        err_console().print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_FAILED) from None
    except SelfparaError as exc:
        err_console().print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_FAILED) from None
    except ModuleNotFoundError as exc:
        # A command reached code whose extra is not installed (e.g. `selfpara bench` on the base install).
        from selfpara.util.extras import missing_message

        message = missing_message(exc.name or "", "this command")
        if message is None:
            raise
        err_console().print(f"[red]error:[/red] {escape(message)}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_FAILED) from None
    except KeyboardInterrupt:
        err_console().print("[yellow]interrupted[/yellow]")
        raise typer.Exit(EXIT_INTERRUPTED) from None
