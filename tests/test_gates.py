"""The gates are one list: pre-commit runs exactly what .ci/lint runs, mypy keeps every
function of the packages annotated, and test modules share helpers through tests/helpers, never by
importing one another."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # the proxy's dependency on 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def lint_commands() -> list[str]:
    """The gate commands of .ci/lint, as `python -m ...` (the script runs them with "$PY")."""
    text = (ROOT / ".ci" / "lint").read_text(encoding="utf-8")
    return [f"python -m {m}" for m in re.findall(r'^"\$PY" -m (.+?) \|\| status=1$', text, re.M)]


def test_pre_commit_runs_the_gates_of_ci_lint() -> None:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    hooks = [hook for repo in config["repos"] for hook in repo["hooks"]]
    assert all(repo["repo"] == "local" for repo in config["repos"])  # nothing to download
    assert all(hook["language"] == "system" and hook["pass_filenames"] is False for hook in hooks)
    commands = lint_commands()
    assert len(commands) == 3 and [hook["entry"] for hook in hooks] == commands
    assert "python -m ruff check ." in commands and "python -m ruff format --check ." in commands


def test_mypy_keeps_the_packages_annotated() -> None:
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert mypy["disallow_untyped_defs"] is True and mypy["check_untyped_defs"] is True
    assert set(mypy["files"]) == {"selfpara", "evaluation"}
    assert "python -m mypy selfpara evaluation" in lint_commands()


def cross_test_imports(tests: Path) -> list[str]:
    """`path: module` for each import of a test module by another module under `tests`, and each
    import of the test tree hidden behind `except ImportError` (an import that works one way only)."""
    found = []
    for path in sorted(tests.rglob("*.py")):
        where = path.relative_to(tests.parent).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                last = node.module.split(".")[-1]
                if last.startswith("test_") or node.module in ("fake_upstream", "redis_server"):
                    found.append(f"{where}: {node.module}")
            if isinstance(node, ast.Try) and any(
                isinstance(h.type, ast.Name) and h.type.id == "ImportError" for h in node.handlers
            ):
                modules = [n.module or "" for n in ast.walk(node) if isinstance(n, ast.ImportFrom)]
                found += [f"{where}: {m} (behind except ImportError)" for m in modules if m.startswith("tests")]
    return found


def test_test_modules_share_helpers_through_one_place() -> None:
    assert cross_test_imports(ROOT / "tests") == []


def test_the_check_finds_imports_of_test_modules_and_hidden_imports(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_a.py").write_text(
        "try:\n    from tests.fake_upstream import serve_fake\n"
        "except ImportError:\n    from fake_upstream import serve_fake\n"
    )
    (tests / "test_b.py").write_text("from tests.test_a import helper\nfrom tests.helpers.proxy import post\n")
    assert sorted(cross_test_imports(tests)) == [
        "tests/test_a.py: fake_upstream",
        "tests/test_a.py: tests.fake_upstream (behind except ImportError)",
        "tests/test_b.py: tests.test_a",
    ]


def test_the_lowest_versions_run_pins_the_floors_it_names() -> None:
    import runpy

    floors = runpy.run_path(str(ROOT / "scripts" / "lowest_versions.py"))["floors"]
    pins = dict(pin.split("==") for pin in floors(["bench"]))
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for name in ("typer", "pydantic", "litellm", "fastapi", "jinja2"):
        declared = [
            r for r in project["dependencies"] + project["optional-dependencies"]["bench"] if r.startswith(name)
        ]
        assert declared and pins[name] == re.split(r"[>=,;\s]+", declared[0].split(">=", 1)[1])[0], name
    lowest = (ROOT / ".ci" / "lowest").read_text(encoding="utf-8")
    assert "scripts/lowest_versions.py bench" in lowest and "-m pytest" in lowest
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert 'if [ "${SELFPARA_CI_LOWEST:-}" = 1 ]; then bash .ci/lowest; fi' in run.splitlines()
