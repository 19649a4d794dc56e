"""The evaluation package sits on top of selfpara: imports run one way, without cycles, and its
commands reach the CLI through the entry-point group, not through an import in the core."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import typer

ROOT = Path(__file__).resolve().parents[1]


def _modules(package: str) -> dict[str, Path]:
    out = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(path: Path, known: set[str]) -> set[str]:
    """Modules `path` imports anywhere (top level or inside functions), resolved to known modules."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in known else node.module)
    return found


def test_the_core_imports_nothing_from_evaluation() -> None:
    offenders = []
    for name, path in _modules("selfpara").items():
        for target in _imports(path, set()):
            if target == "evaluation" or target.startswith("evaluation."):
                offenders.append(f"{name} imports {target}")
    assert offenders == []


def test_no_import_cycle_inside_evaluation() -> None:
    modules = _modules("evaluation")
    known = set(modules)
    graph = {name: {t for t in _imports(path, known) if t in known and t != name} for name, path in modules.items()}
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name)
    assert cycles == []


def test_the_entry_point_registers_the_evaluation_commands() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    target = project["entry-points"]["selfpara.commands"]["evaluation"]
    module, _, func = target.partition(":")
    import importlib

    register = getattr(importlib.import_module(module), func)
    app = typer.Typer()
    register(app)
    assert [c.callback.__name__ for c in app.registered_commands] == ["bench", "metrics", "report"]


def test_the_selfpara_cli_lists_the_evaluation_commands() -> None:
    from typer.testing import CliRunner

    from selfpara.cli import app

    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    for command in ("ask", "serve", "bench", "metrics", "report"):
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
