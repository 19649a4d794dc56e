"""The import rules of docs/architecture.md, read from the source with `ast` (nothing is imported).

- the core (`selfpara`) never imports the evaluation package, at any level;
- inside `selfpara`, only the CLI imports `selfpara.cli`, and only the CLI and the
  server import `selfpara.server` (the server never imports the CLI);
- folder rules: `selfpara.models` (the door to models) never reaches the settings, the
  pipeline or what runs it; `selfpara.util` reaches none of those either;
  `selfpara.pipeline` never reaches the paraphraser, the server or the CLI;
- no import cycle between modules of `selfpara` and `evaluation`; importing a module also runs
  its packages' `__init__`, so that counts as importing them.

Every import counts, also one inside a function (the documented way to defer a slow import
such as torch or litellm): a deferred import cannot deadlock a load, but it is still a
dependency, and a cycle hidden in a function is still two modules that cannot be understood
apart. Imports under `if TYPE_CHECKING:` never run, so they cannot break a load, but a type
from a module is still a dependency on it: the cycle check counts them as well (`types=True`),
and finds none.

"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("selfpara", "evaluation")

MAX_MODULE_LINES = 500
"""The longest a module of the packages may be: past it, split it by what it holds."""

MAX_TOP_LEVEL_ENTRIES = 12
"""Modules and folders at selfpara's top level: past it, the method no longer reads from the tree."""

# (folder, what nothing inside it may reach): the model door never depends on the settings or the
# pipeline (the settings validate names against registries that type the client); the shared
# helpers depend on none of those; the stages never depend on what runs them.
FOLDER_RULES: dict[str, tuple[str, ...]] = {
    "selfpara.models": ("selfpara.config", "selfpara.pipeline", "selfpara.paraphraser", "selfpara.server"),
    "selfpara.util": ("selfpara.config", "selfpara.pipeline", "selfpara.models", "selfpara.paraphraser"),
    "selfpara.pipeline": ("selfpara.paraphraser", "selfpara.server", "selfpara.cli"),
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


MODULES = all_modules()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.Module, module_level: bool, types: bool = False) -> Iterator[ast.Import | ast.ImportFrom]:
    """Import statements of a module, skipping `if TYPE_CHECKING:` blocks unless `types`; with
    `module_level`, also skipping everything inside functions (classes and try/if blocks count)."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if not types and isinstance(child, ast.If) and _is_type_checking(child):
                stack.extend(child.orelse)
                continue
            if module_level and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child
            stack.append(child)


def _resolve(name: str) -> str | None:
    """The longest known module that `name` is or lies in (None outside our packages)."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def imports_of(module: str, module_level: bool, types: bool = False) -> set[str]:
    """Modules of our packages that `module` imports (with `types`, type-only imports too)."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in _import_nodes(tree, module_level, types):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            # `from pkg import sub` imports the submodule when there is one, else a name of pkg.
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        for target in targets:
            resolved = _resolve(target)
            if resolved is not None and resolved != module:
                found.add(resolved)
    return found | {p for dep in found for p in _parents(dep) if p != module and not _in(module, p)}


def _parents(module: str) -> list[str]:
    """The packages Python initialises before `module` (within our packages)."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts)) if ".".join(parts[:i]) in MODULES]


def edges(module_level: bool, types: bool = False) -> set[tuple[str, str]]:
    return {(m, dep) for m in MODULES for dep in imports_of(m, module_level, types)}


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def core_to_evaluation() -> set[tuple[str, str]]:
    return {(a, "evaluation") for a, b in edges(module_level=False) if _in(a, "selfpara") and _in(b, "evaluation")}


def layer_violations() -> set[tuple[str, str]]:
    """Edges into selfpara.cli / selfpara.server from parts of selfpara that may not use them."""
    bad = set()
    for a, b in edges(module_level=False):
        if not _in(a, "selfpara"):
            continue  # the evaluation package registers its commands into the CLI
        cli_side = _in(a, "selfpara.cli") or a == "selfpara.__main__"
        if _in(b, "selfpara.cli") and not cli_side:
            bad.add((a, "selfpara.cli"))
        if _in(b, "selfpara.server") and not (cli_side or _in(a, "selfpara.server")):
            bad.add((a, "selfpara.server"))
    return bad


def cycles(module_level: bool = False, types: bool = False) -> list[frozenset[str]]:
    """Strongly connected components (more than one module) of the import graph (with `types`,
    type-only imports count too)."""
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for a, b in edges(module_level, types):
        graph[a].add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm; the graph is small enough to recurse
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_walk_sees_the_packages() -> None:
    # guards the test itself: a broken walk would find no edges and pass everything
    assert {"selfpara.pipeline", "selfpara.cli", "selfpara.server.app", "evaluation.runner"} <= set(MODULES)
    assert "selfpara.config" in imports_of("selfpara.paraphraser", module_level=True)
    assert ("selfpara.pipeline.vote", "selfpara.pipeline.equivalence") in edges(module_level=True)
    # a submodule's import runs its package's __init__: an edge to the package too
    assert "selfpara.pipeline" in imports_of("selfpara.config.settings", module_level=True)


def test_core_never_imports_evaluation() -> None:
    assert core_to_evaluation() == set()


def test_only_the_cli_uses_the_cli_and_only_cli_and_server_use_the_server() -> None:
    assert layer_violations() == set()


def test_no_import_cycle() -> None:
    assert cycles(module_level=True) == []  # no exception at all: such a cycle can break a load
    assert cycles() == []


def test_no_import_cycle_counting_type_only_imports() -> None:
    # a type named from another module is a dependency on it: no cycle through those either
    assert cycles(types=True) == []


def reachable(module: str, types: bool = True) -> set[str]:
    """Every module `module` depends on, directly or through others (imports at any level)."""
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for a, b in edges(module_level=False, types=types):
        graph[a].add(b)
    seen: set[str] = set()
    todo = [module]
    while todo:
        for dep in graph[todo.pop()] - seen:
            seen.add(dep)
            todo.append(dep)
    return seen


@pytest.mark.parametrize("folder", sorted(FOLDER_RULES))
def test_folder_rules(folder: str) -> None:
    inside = [m for m in MODULES if _in(m, folder)]
    assert inside, folder
    bad = {(m, f) for m in inside for dep in reachable(m) for f in FOLDER_RULES[folder] if _in(dep, f)}
    assert bad == set()
    assert "selfpara.config" in reachable("selfpara.paraphraser")  # the walk sees the one that does


def test_the_top_level_is_short() -> None:
    entries = [p.name for p in (ROOT / "selfpara").iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()]
    assert 5 < len(entries) <= MAX_TOP_LEVEL_ENTRIES, sorted(entries)


def test_a_requests_state_gets_what_it_needs_not_the_pipeline() -> None:
    assert "selfpara.paraphraser" not in reachable("selfpara.pipeline.request")
    assert not any(_in(m, "selfpara.paraphraser") for m in reachable("selfpara.pipeline.gather"))


EVALUATION_SURFACE = {
    # the public API
    "selfpara",
    "selfpara.config",
    "selfpara.errors",
    "selfpara.result",
    "selfpara.testing",
    # what measuring needs below it, each documented where it is defined
    "selfpara.pipeline.offline",  # the method's parts that run on recorded answers
    "selfpara.models",  # the model door, its call cache and model names
    "selfpara.cli.common",  # what a command of another package uses of the CLI
    "selfpara.cli.conventions",  # the conventions every command follows (`Command`)
    "selfpara.util",  # the registry shape, environment variables, extras
}


def test_the_evaluation_package_reaches_selfpara_through_its_surface_only() -> None:
    reached: dict[str, set[str]] = {}
    for module in (m for m in MODULES if _in(m, "evaluation")):
        tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
        for node in _import_nodes(tree, module_level=False, types=True):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for name in names:
                if _in(name, "selfpara"):
                    reached.setdefault(name, set()).add(module)
    assert "selfpara.pipeline.offline" in reached  # guards the walk
    assert {name: sorted(by) for name, by in reached.items() if name not in EVALUATION_SURFACE} == {}


def module_lengths() -> dict[str, int]:
    return {m: len(p.read_text(encoding="utf-8").splitlines()) for m, p in MODULES.items()}


def test_no_module_is_over_the_line_limit() -> None:
    lengths = module_lengths()
    assert max(lengths.values()) > 100  # guards the count itself
    assert {m: n for m, n in lengths.items() if n > MAX_MODULE_LINES} == {}


def test_the_model_naming_helpers_are_a_leaf() -> None:
    # the transports, the config, the server and the evaluation read model names from it
    assert imports_of("selfpara.models.names", module_level=False, types=True) == set()
    assert "selfpara.config" not in imports_of("selfpara.models.http_backend", module_level=False, types=True)


def test_the_checks_catch_violations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a cycle and a forbidden edge written into a throwaway tree are found
    pkg = tmp_path / "selfpara"
    (pkg / "cli").mkdir(parents=True)
    (tmp_path / "evaluation").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from selfpara import b\nfrom selfpara.cli import x\n")
    (pkg / "b.py").write_text("import selfpara.a\n\ndef later():\n    import evaluation.runner\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from selfpara import d\n")
    (pkg / "d.py").write_text("from . import c\n")
    (pkg / "cli" / "__init__.py").write_text("")
    (pkg / "cli" / "x.py").write_text("")
    (tmp_path / "evaluation" / "__init__.py").write_text("")
    (tmp_path / "evaluation" / "runner.py").write_text("")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "MODULES", all_modules())
    assert cycles() == [frozenset({"selfpara.a", "selfpara.b"})]
    assert imports_of("selfpara.b", module_level=True) == {"selfpara.a"}  # the deferred import is not module-level
    assert imports_of("selfpara.c", module_level=False) == set()  # TYPE_CHECKING imports never run
    assert imports_of("selfpara.c", module_level=False, types=True) == {"selfpara.d"}  # but are dependencies
    assert sorted(cycles(types=True), key=sorted) == [
        frozenset({"selfpara.a", "selfpara.b"}),
        frozenset({"selfpara.c", "selfpara.d"}),
    ]
    assert core_to_evaluation() == {("selfpara.b", "evaluation")}
    assert layer_violations() == {("selfpara.a", "selfpara.cli")}


def test_importing_selfpara_has_no_side_effects() -> None:
    # In a fresh interpreter without the variable: `import selfpara` sets nothing, the
    # litellm importer sets it (offline price list) and keeps a value the user chose.
    import os
    import subprocess

    code = (
        "import os, sys\n"
        "import selfpara, selfpara.paraphraser, selfpara.cli\n"
        "assert 'LITELLM_LOCAL_MODEL_COST_MAP' not in os.environ, 'set on import'\n"
        "assert 'litellm' not in sys.modules, 'litellm imported eagerly'\n"
        "from selfpara.models.litellm_import import import_litellm\n"
        "import_litellm()\n"
        "assert os.environ['LITELLM_LOCAL_MODEL_COST_MAP'] == 'True'\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def private_imports() -> set[tuple[str, str]]:
    """(module, imported) pairs where one of our modules imports another package's private
    module (a dotted path with a part starting with `_`, such as `typer._click`)."""
    found = set()
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in _import_nodes(tree, module_level=False):
            if isinstance(node, ast.ImportFrom) and node.level:
                continue  # our own package
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for name in names:
                top, *rest = name.split(".")
                if top not in PACKAGES and top != "__future__" and any(p.startswith("_") for p in rest):
                    found.add((module, name))
    return found


def test_no_private_module_of_a_dependency_is_imported() -> None:
    # A private module is no part of a dependency's floor: typer 0.26 added `typer._click`, and
    # importing it broke every command on typer 0.12-0.25, which pyproject.toml allows.
    assert private_imports() == set()
