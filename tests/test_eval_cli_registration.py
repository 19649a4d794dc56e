"""The evaluation commands reach the `selfpara` CLI through the `selfpara.commands` entry-point
group, not through an import in the core (tests/test_architecture.py checks the imports)."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer

ROOT = Path(__file__).resolve().parents[1]


def test_the_entry_point_registers_the_evaluation_commands() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    target = project["entry-points"]["selfpara.commands"]["evaluation"]
    module, _, func = target.partition(":")
    import importlib

    register = getattr(importlib.import_module(module), func)
    app = typer.Typer()
    register(app)
    assert [c.callback.__name__ for c in app.registered_commands] == ["bench", "metrics", "report", "calibrate"]


def test_the_selfpara_cli_lists_the_evaluation_commands() -> None:
    from typer.testing import CliRunner

    from selfpara.cli import app

    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in ("ask", "serve", "bench", "metrics", "report", "calibrate"):
        assert command in result.stdout


def test_a_broken_plugin_is_skipped_and_the_core_commands_still_work(monkeypatch, caplog) -> None:
    import importlib.metadata

    from typer.testing import CliRunner

    from selfpara.cli import app

    class Broken:
        value = "nowhere.cli:register"

        def load(self):
            raise ImportError("No module named 'nowhere'")

    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: [Broken()])
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0 and "ask" in result.stdout and "bench" not in result.stdout
    assert "commands of nowhere.cli:register not loaded" in caplog.text
