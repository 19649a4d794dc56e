"""How every `selfpara` command presents itself, whichever package defined it (`app.command(cls=Command)`):
a flag stands alone (typer prints `--json <bool>`), an argument in capitals (typer: `{question}`);
help and usage errors as docs/cli.md#output says.

Only typer's public classes are imported: up to typer 0.25 its commands are click's classes, from
0.26 a private copy's (`typer._click`), so the click types these methods take are annotated `Any`.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import sys
from collections.abc import Sequence
from typing import Any

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

from selfpara.cli.help_text import use_rich_help, write_plain_help


def tidy_params(params: Sequence[Any]) -> None:
    """Give flags an empty metavar (no `<bool>` after them) and arguments their name in capitals.

    Args:
        params: a command's parameters, changed in place; a metavar set by the command is kept.
    """
    for param in params:
        if isinstance(param, TyperOption) and param.is_flag and not param.count and param.metavar is None:
            param.metavar = ""
        elif isinstance(param, TyperArgument) and param.metavar is None:
            param.metavar = (param.name or "arg").upper()


def usage_pieces(command: TyperCommand, ctx: Any) -> list[str]:
    """The usage line's pieces: `[OPTIONS]`, then each argument as NAME (required) or [NAME]."""
    pieces = [command.options_metavar] if command.options_metavar else []
    for param in command.get_params(ctx):
        if isinstance(param, TyperArgument):
            name = (param.metavar or param.name or "arg") + ("..." if param.nargs != 1 else "")
            pieces.append(name if param.required else f"[{name}]")
        else:
            pieces.extend(param.get_usage_pieces(ctx))
    return pieces


def reflowed(help_text: str | None) -> str | None:
    """A docstring's help with the line breaks inside each paragraph made spaces.

    typer's rich markup keeps a docstring's single line breaks, so a description written over
    several source lines was drawn broken mid-sentence in the panels ("prints the" / "metric
    table"); paragraphs (a blank line) and click's `\\b` blocks stay as written.
    """
    if not help_text:
        return help_text
    paragraphs = inspect.cleandoc(help_text).split("\n\n")
    return "\n\n".join(p if p.startswith("\b") else " ".join(p.split()) for p in paragraphs)


class Command(TyperCommand):
    """A typer command whose help shows flags without a type and arguments in capitals, and whose
    description is one paragraph per paragraph, however its docstring was wrapped."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.help, self.short_help = reflowed(self.help), reflowed(self.short_help)

    def get_params(self, ctx: Any) -> list[Any]:
        params = super().get_params(ctx)
        tidy_params(params)  # the help option is made here, so it is tidied here too
        return params

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return usage_pieces(self, ctx)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        if use_rich_help(self.get_params(ctx), ctx):
            super().format_help(ctx, formatter)
        else:
            write_plain_help(self, ctx, formatter)


def _click_class(name: str) -> type[Exception]:
    """A class of click's exceptions, found from typer's public `BadParameter` (click's own up to typer
    0.25, typer's private copy from 0.26), so that neither module is imported."""
    return next(c for c in typer.BadParameter.__mro__ if c.__name__ == name)


CLOSE_NAME = 0.7
"""How alike (difflib's ratio, the leading dashes left out) an unknown flag and a flag must be for the
flag to be suggested: `--jsno` for `--json` (0.75), not `--model` for `--nope` (0.44)."""


def close_names(name: str, possibilities: Sequence[str]) -> list[str]:
    """The flags among `possibilities` close enough to the unknown `name` to be a typo of it."""
    bare = name.lstrip("-")
    return [p for p in possibilities if difflib.SequenceMatcher(None, bare, p.lstrip("-")).ratio() >= CLOSE_NAME]


def usage_line(error: Any) -> str:
    """A usage error as the one line the CLI writes off a terminal: `error: MESSAGE (see 'PROG -h')`."""
    message = " ".join(error.format_message().split())
    ctx = getattr(error, "ctx", None)
    hint = f" (see '{ctx.command_path} -h')" if ctx is not None else ""
    return f"error: {message}{hint}"


def _on_terminal() -> bool:
    from selfpara.cli.common import err_console

    return err_console().is_terminal


class Group(TyperGroup):
    """The CLI's group, its own options tidied as a `Command`'s, its help as a `Command`'s, its usage
    errors one line off a terminal."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.help, self.short_help = reflowed(self.help), reflowed(self.short_help)

    def get_params(self, ctx: Any) -> list[Any]:
        params = super().get_params(ctx)
        tidy_params(params)
        return params

    def format_help(self, ctx: Any, formatter: Any) -> None:
        if use_rich_help(self.get_params(ctx), ctx):
            super().format_help(ctx, formatter)
        else:
            write_plain_help(self, ctx, formatter)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        """Run the CLI; in standalone mode (the `selfpara` program) its usage errors are written here."""
        run = functools.partial(
            super().main,
            args=args,
            prog_name=prog_name,
            complete_var=complete_var,
            windows_expand_args=windows_expand_args,
            **extra,
        )
        if not standalone_mode:
            return run(standalone_mode=False)
        try:
            code = run(standalone_mode=False)
        except _click_class("ClickException") as error:
            sys.exit(self._show(error))
        except typer.Abort:
            typer.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)

    def _show(self, error: Any) -> int:
        """Write `error` (a usage error, or click's other errors) and return its exit code."""
        if type(error).__name__ == "NoArgsIsHelpError":  # `selfpara` alone: the help, then exit code 2
            help_text = error.format_message().strip()  # empty when the rich help was drawn on the terminal
            if help_text:
                typer.echo(help_text, err=True)
            return int(error.exit_code)
        if type(error).__name__ == "NoSuchOption" and getattr(error, "possibilities", None):
            close = close_names(error.option_name, error.possibilities)
            error.possibilities = []
            if close:
                error.message += f" (did you mean {' or '.join(sorted(close))}?)"
        if _on_terminal():
            from typer import rich_utils

            rich_utils.rich_format_error(error)
        else:
            typer.echo(usage_line(error), err=True)
        return int(error.exit_code)
