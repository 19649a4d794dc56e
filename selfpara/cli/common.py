"""Helpers every CLI command shares: logging setup and turning errors into clean exits."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

import typer
from rich.console import Console
from rich.markup import escape

from selfpara.errors import SelfparaError

err_console = Console(stderr=True)


def setup_logging(verbose: bool) -> None:
    """Log to stderr; INFO with --verbose, WARNING otherwise."""
    from rich.logging import RichHandler

    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(message)s",
        handlers=[RichHandler(console=err_console, show_path=False)],
        force=True,
    )
    for noisy in ("LiteLLM", "litellm", "httpx", "transformers"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


@contextlib.contextmanager
def clean_errors() -> Iterator[None]:
    """Turn selfpara's own errors into a red one-line message and exit code 1 (no traceback)."""
    try:
        yield
    except SelfparaError as exc:
        err_console.print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        err_console.print("[yellow]interrupted[/yellow]")
        raise typer.Exit(130) from None
