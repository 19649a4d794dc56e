"""--help shows every flag's name whole at any width: typer's rich panels on a terminal wide
enough for them, plain wrapped text otherwise (a narrow terminal, a pipe)."""

from __future__ import annotations

import re

import pytest
import typer
import typer.rich_utils  # noqa: F401  (it reads FORCE_COLOR once, at import: not inside shown()'s environment)
from typer.testing import CliRunner

from selfpara.cli import app

runner = CliRunner()
COMMANDS = [[], ["ask"], ["serve"], ["doctor"], ["bench"], ["report"], ["metrics"], ["calibrate"]]


def names_of(command: list[str]) -> list[str]:
    """Every option name of `command` (`--top-up-temperature`, `-k`, `--no-renamings`, ...)."""
    group = typer.main.get_command(app)
    ctx = typer.Context(group)
    cmd = group.get_command(ctx, command[0]) if command else group
    if cmd is None:
        pytest.skip(f"{command[0]} is not installed")
    return [n for p in cmd.get_params(typer.Context(cmd)) for n in (*p.opts, *p.secondary_opts) if n.startswith("-")]


def shown(command: list[str], width: int, terminal: bool) -> str:
    env = {"COLUMNS": str(width), "FORCE_COLOR": "1" if terminal else ""}
    result = runner.invoke(app, [*command, "--help"], env=env, color=False)
    assert result.exit_code == 0, result.output
    return re.sub(r"\x1b\[[0-9;]*m", "", result.output)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "selfpara")
def test_help_off_a_terminal_is_plain_and_cuts_no_name(command: list[str]) -> None:
    names = names_of(command)
    text = shown(command, 80, terminal=False)
    assert "…" not in text and "╭" not in text  # nothing cut, no panels drawn into a pipe
    words = set(re.split(r"[\s,/]+", text))
    assert all(name in words for name in names), [n for n in names if n not in words]
    assert max(len(line) for line in text.splitlines()) <= 80


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "selfpara")
def test_help_on_a_terminal_of_any_width_cuts_no_name(command: list[str]) -> None:
    names = names_of(command)
    layouts = set()
    for width in (60, 80, 100, 120, 160, 220):
        text = shown(command, width, terminal=True)
        assert "…" not in text, (width, [line for line in text.splitlines() if "…" in line])
        words = set(re.split(r"[\s,/│]+", text))
        assert all(name in words for name in names), (width, [n for n in names if n not in words])
        layouts.add("╭" in text)
    assert True in layouts  # rich's panels where they fit (at 220 columns at least)


def test_a_help_text_in_brackets_is_shown_not_eaten_as_markup() -> None:
    assert "its [upstream] table" in " ".join(shown(["ask"], 80, terminal=False).split())
