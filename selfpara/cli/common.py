"""Helpers every CLI command shares: environment variable names, logging setup, stdout kept
for the command's own output, and turning errors into clean exits.

Settings reach a command in one order, highest first: a flag, then its environment
variable (the `*_ENV` names below, declared with typer's `envvar=` on the option and shown
in --help), then the settings file where the command takes one (`serve --config`), then
the default.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator

import typer
from rich.console import Console
from rich.markup import escape

from selfpara.errors import SelfparaError


def err_console() -> Console:
    """A console on stderr, made at each use so that it reads the terminal width and stream of
    the moment (a console made at import keeps the width of whoever imported it first)."""
    return Console(stderr=True)


MODEL_ENV = "SELFPARA_MODEL"
API_BASE_ENV = "SELFPARA_API_BASE"
K_ENV = "SELFPARA_K"
EQUIVALENCE_ENV = "SELFPARA_EQUIVALENCE"
JUDGE_MODEL_ENV = "SELFPARA_JUDGE_MODEL"
TRANSPORT_ENV = "SELFPARA_TRANSPORT"
ROUTER_CONFIG_ENV = "SELFPARA_ROUTER_CONFIG"
PROXY_KEY_ENV = "SELFPARA_PROXY_KEY"
"""Holds the proxy's own key; `serve` uses it when no other variable is named for the key."""
CACHE_ENV = "SELFPARA_CACHE"
"""The call cache (WrapConfig.cache): memory, off, redis://... or sqlite:///...; replicas name one Redis here."""


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


@contextlib.contextmanager
def clean_errors() -> Iterator[None]:
    """Turn selfpara's own errors into a red one-line message and exit code 1 (no traceback)."""
    try:
        yield
    except SelfparaError as exc:
        err_console().print(f"[red]error:[/red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    except ModuleNotFoundError as exc:
        # A command reached code whose extra is not installed (e.g. `selfpara bench` on the base install).
        from selfpara.extras import missing_message

        message = missing_message(exc.name or "", "this command")
        if message is None:
            raise
        err_console().print(f"[red]error:[/red] {escape(message)}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        err_console().print("[yellow]interrupted[/yellow]")
        raise typer.Exit(130) from None
