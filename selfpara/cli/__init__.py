"""The `selfpara` command line. Each command lives in its own module and registers on `app`."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="selfpara",
    help="Ask a model several equivalent wordings of a question and return the answer they agree on.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _register() -> None:
    # Imported for their side effect of adding commands to `app`; each imports its heavy
    # dependencies inside the command so `selfpara --help` stays fast.
    import importlib

    for name in ("ask", "serve", "bench", "metrics", "report"):
        try:
            importlib.import_module(f"selfpara.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"selfpara.cli.{name}":
                raise


_register()


def main() -> None:
    """Console-script entry point."""
    app()
