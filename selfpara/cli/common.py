"""Helpers every CLI command shares: environment variable names, logging setup, stdout kept
for the command's own output, and turning errors into clean exits.

Settings reach a command in one order, highest first: a flag, then its environment
variable (the `*_ENV` names of `selfpara.util.envvars`, declared with typer's `envvar=` on the
option and shown in --help), then the settings file where the command takes one (`serve --config`), then
the default.

It is also what another package's commands use of the CLI (the evaluation's `bench`, `report`, ...),
beside `selfpara.cli.conventions.Command` (the conventions every command follows): `default` (a flag's
preset default), the shared choices (`ParaphraseCheck`), the error handling and the consoles.
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
import sys
from collections.abc import Iterator, Mapping
from typing import Any, TextIO

import typer
from rich.console import Console
from rich.markup import escape

from selfpara.cli.choices import ParaphraseCheck
from selfpara.cli.presets import default
from selfpara.errors import ConfigError, MissingCredential, SelfparaError

__all__ = ["EXIT_FAILED", "ParaphraseCheck", "clean_errors", "default", "err_console", "setup_logging"]


def console(stderr: bool = False, *, highlight: bool = True) -> Console:
    """A console on stdout (or stderr), made at each use so that it reads the terminal width and
    stream of the moment (a console made at import keeps the width of whoever imported it first).

    When the stream is not a terminal (piped, redirected, in CI) lines are not wrapped at all
    (rich would break them at 80 columns, inside paths and numbers): a reader's pager or
    terminal wraps them. rich writes no colours or other escape codes there.
    """
    made = Console(stderr=stderr, highlight=highlight)
    made.soft_wrap = not made.is_terminal
    return made


def err_console() -> Console:
    """`console` on stderr: where every command writes its notes, progress and errors."""
    return console(stderr=True)


class NoteFormatter(logging.Formatter):
    """`warning: message` on one line, as the CLI writes its own notes beside `error: ...` (no
    time, no logger name: those are for --verbose); control characters escaped."""

    def format(self, record: logging.LogRecord) -> str:
        from selfpara.server.logs import printable

        return printable(f"{record.levelname.lower()}: {super().format(record)}")


def setup_logging(verbose: bool) -> None:
    """Log to stderr; INFO with --verbose, WARNING otherwise.

    With --verbose, records are drawn by rich on a terminal, and otherwise (redirected, piped,
    in CI) each is one timestamped line, tracebacks included, so log readers can split on
    newlines. Without it, the few warnings are notes like the CLI's own: `warning: ...`.
    """
    handler: logging.Handler
    stderr = err_console()
    if not verbose:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(NoteFormatter())
    elif stderr.is_terminal:
        from rich.logging import RichHandler

        handler = RichHandler(console=stderr, show_path=False)
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
    from selfpara.models.litellm_import import litellm_debug_wanted

    quiet = ("httpx", "transformers") if litellm_debug_wanted() else ("LiteLLM", "litellm", "httpx", "transformers")
    for noisy in quiet:
        logging.getLogger(noisy).setLevel(logging.WARNING)


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class _PlainWriter(io.TextIOBase):
    """A text stream that writes to `target` with ANSI escape codes removed."""

    def __init__(self, target: TextIO) -> None:
        self.target = target

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.target.write(_ANSI.sub("", text))
        return len(text)

    def flush(self) -> None:
        self.target.flush()


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send whatever libraries print while a command works to stderr, keeping stdout for the
    command's own output (litellm prints a "Provider List" line for an unknown provider); its
    colour codes are removed when stderr is not a terminal."""
    target: TextIO = sys.stderr if sys.stderr.isatty() else _PlainWriter(sys.stderr)  # type: ignore[assignment]
    with contextlib.redirect_stdout(target):
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
    settings check that failed on flags into click's usage error naming them, and a missing
    credential into a message naming its variable (exit code 2).

    Args:
        ctx: the command's context, to name its flags; None: every error is exit code 1.
        fields, all_from_flags: see `flag_error`.
    """
    try:
        yield
    except MissingCredential as exc:  # the environment the command runs in cannot be used: as a flag's problem
        err_console().print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_USAGE) from None
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
