"""How every `selfpara` command presents itself in --help, whichever package defined it.

typer prints a type after every option, flags included (`--json <bool>`), and writes a
required argument as `{question}` in the usage line. Command-line users expect a flag to
stand alone and an argument in capitals (`selfpara ask [OPTIONS] QUESTION`), so the CLI's
group and every command use the classes below (`app.command(cls=Command)`, also in packages
that add commands through the `selfpara.commands` entry points).

Only typer's public classes are imported. Up to typer 0.25 its commands are click's
classes; from 0.26 they are those of a private copy of click inside typer (`typer._click`).
Importing either would tie the CLI to one side of that change, so the click types these
methods take and return (contexts, parameters, commands) are annotated `Any`.

Help is typer's rich panels on a terminal wide enough to show every flag whole; otherwise
(piped, redirected, or a narrow screen) plain text that wraps and never cuts a name
(`selfpara.cli.help_text`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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


class Command(TyperCommand):
    """A typer command whose help shows flags without a type and arguments in capitals."""

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


class Group(TyperGroup):
    """The CLI's group, its own options tidied as a `Command`'s, its help as a `Command`'s."""

    def get_params(self, ctx: Any) -> list[Any]:
        params = super().get_params(ctx)
        tidy_params(params)
        return params

    def format_help(self, ctx: Any, formatter: Any) -> None:
        if use_rich_help(self.get_params(ctx), ctx):
            super().format_help(ctx, formatter)
        else:
            write_plain_help(self, ctx, formatter)
