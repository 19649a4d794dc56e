"""The gates are one list: pre-commit runs exactly what .ci/lint runs, mypy keeps every function of
the packages annotated, test modules share helpers through tests/helpers, never by importing one
another, and no test sleeps to synchronise or reads the wall clock."""

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


SLEEPS = {"sleep"}  # time.sleep, asyncio.sleep, or either imported by name
CLOCKS = {"time", "monotonic", "perf_counter", "monotonic_ns", "perf_counter_ns", "time_ns"}
SLEEPS_ALLOWED = {
    "tests/fake_upstream.py::FakeUpstream._answer": "delay_s and hang(): a slow server, for the benchmarks "
    "and the few tests whose outcome does not depend on how slow; a test that waits for a call holds it",
    "tests/fake_upstream.py::FakeUpstream._stream": "stream_s spreads a streamed reply's words (the benchmarks)",
    "tests/fake_upstream.py::_scripted": "gap_s between a raw stream's events: a trickling server",
    "tests/fake_upstream.py::ThreadedServer.start": "uvicorn sets a flag, no event, once it listens; the module "
    "also runs alone for the benchmarks, without tests.helpers",
    "tests/redis_server.py::RedisServer.start": "redis-server is another process: it is up when it answers PING",
    "tests/helpers/waiting.py::wait_until": "the one poll, for a condition another thread or process makes true "
    "that offers no event",
}
"""Where a sleep of more than 0 is allowed under tests/, by `path::function`, and why."""


def is_test_module(path: Path) -> bool:
    return path.name.startswith("test_") or path.name == "conftest.py"


def scope_names(tree: ast.AST, prefix: str = "") -> dict[ast.AST, str]:
    """Each node below `tree` -> the dotted name of the function or class it is in ("" at module level)."""
    names: dict[ast.AST, str] = {}
    for child in ast.iter_child_nodes(tree):
        inner = prefix
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            inner = f"{prefix}.{child.name}" if prefix else child.name
        names[child] = inner
        names.update(scope_names(child, inner))
    return names


def clock_uses(tests: Path) -> tuple[dict[str, int], list[str]]:
    """(`path::function` -> count of sleeps of more than 0 in it, for every module under `tests`;
    `path:line` of each reading of the wall clock in a test module).

    A sleep is a call of `sleep` (`time.sleep`, `asyncio.sleep`, or imported by name) whose argument
    is not the literal 0; `asyncio.sleep(0)` only yields to the event loop. A reading of the clock is
    a call of `time.time()`, `time.monotonic()`, `time.perf_counter()` (or their _ns forms), or an
    import of one of them from `time`.
    """
    sleeps: dict[str, int] = {}
    readings: list[str] = []
    for path in sorted(tests.rglob("*.py")):
        where = path.relative_to(tests.parent).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        scopes = scope_names(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
                receiver = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else ""
                if name in SLEEPS:
                    arg = node.args[0] if node.args else None
                    if not (isinstance(arg, ast.Constant) and arg.value == 0):
                        key = f"{where}::{scopes.get(node, '')}"
                        sleeps[key] = sleeps.get(key, 0) + 1
                elif is_test_module(path) and receiver == "time" and name in CLOCKS:
                    readings.append(f"{where}:{node.lineno}")
            elif is_test_module(path) and isinstance(node, ast.ImportFrom) and node.module == "time":
                readings += [f"{where}:{node.lineno}" for alias in node.names if alias.name in CLOCKS]
    return sleeps, readings


def test_no_test_sleeps_to_synchronise_or_reads_the_wall_clock() -> None:
    """Tests wait on events (or yield with `asyncio.sleep(0)`) and move fake clocks; what sleeps is a
    simulated slow server or the one poll, each listed with its reason. Speed is measured under
    benchmarks/, never asserted by a test."""
    sleeps, readings = clock_uses(ROOT / "tests")
    assert sorted(set(sleeps) - set(SLEEPS_ALLOWED)) == [], "sleeps to synchronise: wait on an event instead"
    assert sorted(set(SLEEPS_ALLOWED) - set(sleeps)) == [], "allowed sleeps that are gone: drop them from the list"
    assert readings == [], "test modules reading the wall clock: inject a clock (tests/helpers/clock.py)"


def test_the_clock_check_finds_sleeps_and_clock_readings(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    (tests / "helpers").mkdir(parents=True)
    (tests / "test_a.py").write_text(
        "import asyncio, time\nfrom asyncio import sleep\nfrom time import monotonic\n\n"
        "async def test_x():\n    await asyncio.sleep(0)\n    await asyncio.sleep(0.1)\n    await sleep(DELAY)\n"
        "    time.sleep(0.0)\n\nclass TestY:\n    def test_y(self):\n        started = time.perf_counter()\n"
    )
    (tests / "helpers" / "slow.py").write_text("import time\n\ndef nap():\n    time.sleep(1)\n    time.time()\n")
    sleeps, readings = clock_uses(tests)
    assert sleeps == {"tests/test_a.py::test_x": 2, "tests/helpers/slow.py::nap": 1}
    assert readings == ["tests/test_a.py:3", "tests/test_a.py:13"]  # a helper may read the clock


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
