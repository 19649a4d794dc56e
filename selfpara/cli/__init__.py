"""The `selfpara` command line. Each command lives in its own module and registers on `app`.

Other installed packages add commands through the `selfpara.commands` entry-point group
(as llm's `register_commands` hook does): each entry is a callable that takes a typer app
and adds its commands to it. The evaluation package adds `bench`, `report` and
`metrics` this way, so the core never imports it. Those commands are loaded the first time
the CLI lists commands or meets a name it does not know, so `selfpara ask` imports no plugin.
"""

from __future__ import annotations

import logging
from typing import Any, Optional

import typer

from selfpara.cli.conventions import Group

COMMANDS_GROUP = "selfpara.commands"
"""Entry-point group of packages that add commands: each entry is a callable taking the typer app."""

log = logging.getLogger(__name__)


class _CommandGroup(Group):
    """The CLI's click group: the core's commands, then those of installed packages, loaded lazily
    (each a `Command`, presented by the CLI's conventions)."""

    _plugins_loaded = False

    def _load_plugins(self) -> None:
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        extra = typer.Typer(rich_markup_mode="rich")  # as the app's: help texts are rich markup
        register_plugins(extra)
        if extra.registered_commands:
            for name, command in typer.main.get_group(extra).commands.items():
                self.commands.setdefault(name, command)  # a core command keeps its name

    def list_commands(self, ctx: Any) -> list[str]:  # click's Context (see cli.conventions)
        self._load_plugins()
        return super().list_commands(ctx)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is None and not self._plugins_loaded:
            self._load_plugins()
            command = super().get_command(ctx, cmd_name)
        return command


app = typer.Typer(
    name="selfpara",
    help="Ask a model several equivalent wordings of a question and return the answer they agree on.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish, PowerShell
    cls=_CommandGroup,
    rich_markup_mode="rich",  # help texts are rich markup (older typer defaulted to plain text)
    context_settings={"help_option_names": ["-h", "--help"]},  # every command's context inherits it
)


def _print_version(value: bool) -> None:
    if value:
        from selfpara import __version__

        typer.echo(f"selfpara {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Optional[bool] = typer.Option(
        None, "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Options of `selfpara` itself, before the command."""


def register_plugins(target: typer.Typer) -> None:
    """Call every `selfpara.commands` entry point on `target`; a broken one is logged and skipped."""
    from importlib.metadata import entry_points

    seen: set[str] = set()
    for entry in entry_points(group=COMMANDS_GROUP):
        if entry.value in seen:  # one package found twice on the path
            continue
        seen.add(entry.value)
        try:
            entry.load()(target)
        except Exception as exc:  # a broken plugin must not take the core commands down with it
            log.warning("commands of %s not loaded: %s", entry.value, exc)


def _register() -> None:
    # Imported for their side effect of adding commands to `app`; each imports its heavy
    # dependencies inside the command so `selfpara --help` stays fast.
    import importlib

    for name in ("ask", "serve", "doctor"):
        importlib.import_module(f"selfpara.cli.{name}")


_register()


def main() -> None:
    """Console-script entry point."""
    app()
