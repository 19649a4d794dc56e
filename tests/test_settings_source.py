"""One settings source: WrapConfig's fields give the defaults of every entry point and
the proxy's per-request block; selfpara/util/envvars.py names every environment variable the project
reads; docs/cli.md's tables are made from both and must match them."""

from __future__ import annotations

import ast
import re
import runpy
from enum import Enum
from pathlib import Path
from typing import Any, Optional

import click
import pytest
import typer.main

from selfpara.cli import app, presets
from selfpara.config import WrapConfig
from selfpara.server.schema import REQUEST_SETTINGS, SelfparaOptions
from selfpara.util import envvars

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("selfpara", "evaluation")


def command_params(name: str) -> dict[str, Any]:
    """The click parameters of `selfpara NAME`, by name."""
    group: Any = typer.main.get_command(app)
    command = group.get_command(click.Context(group), name)  # plugin commands (bench) load on first ask
    if command is None:
        pytest.skip(f"{name} is not installed")
    return {p.name: p for p in command.params}


def plain(value: Any) -> Any:
    return value.value if isinstance(value, Enum) else value


@pytest.mark.parametrize("command", ["ask", "bench"])
def test_each_setting_flag_defaults_to_the_one_source(command: str) -> None:
    params = command_params(command)
    settings = [name for name in params if name in WrapConfig.model_fields]
    assert {"k", "max_tokens", "paraphrase_check"} <= set(settings)
    for name in settings:
        given = plain(params[name].default)
        # None: the command passes nothing, so WrapConfig's default applies (ask's --overrule-margin)
        assert given is None or given == presets.default(name, command), name
        if name == "model":
            assert given is None  # replaced by the embedded model, WrapConfig's default


def test_serve_flags_leave_the_defaults_to_wrapconfig_and_the_settings_file() -> None:
    params = command_params("serve")
    settings = [name for name in params if name in WrapConfig.model_fields]
    assert {"k", "max_tokens", "model", "equivalence"} <= set(settings)
    assert all(params[name].default is None for name in settings)
    assert all(presets.default(name, "serve") == WrapConfig.model_fields[name].default for name in settings)


def test_bench_config_defaults_are_the_bench_presets() -> None:
    pytest.importorskip("numpy")
    from evaluation.bench_config import BenchConfig

    config = BenchConfig()
    for name in ("k", "max_tokens", "paraphrase_check"):
        assert getattr(config, name) == presets.default(name, "bench"), name


def test_where_an_entry_point_differs_it_says_why() -> None:
    # one k everywhere (issue 47): with margin 2, three agreeing rewordings can overrule
    assert presets.default("k") == presets.default("k", "ask") == presets.default("k", "bench") == WrapConfig().k == 3
    assert (presets.default("k", "ask"), presets.default("max_tokens", "ask")) == (3, 128)
    assert (presets.default("k", "bench"), presets.default("max_tokens", "bench")) == (3, 32)
    for entry, settings in presets.PRESETS.items():
        assert entry in presets.ENTRY_POINTS
        for name, preset in settings.items():
            assert name in WrapConfig.model_fields, name
            assert preset.value != WrapConfig.model_fields[name].default, f"{entry}.{name} repeats the default"
            assert len(preset.reason) > 20, f"{entry}.{name} has no reason"
    with pytest.raises(ValueError, match="unknown entry point"):
        presets.default("k", "nosuch")


def test_the_request_block_is_derived_from_wrapconfig() -> None:
    own = {"enabled", "api_base", "api_key"}
    assert set(SelfparaOptions.model_fields) == own | set(REQUEST_SETTINGS)
    for name in REQUEST_SETTINGS:
        field, source = SelfparaOptions.model_fields[name], WrapConfig.model_fields[name]
        assert field.annotation == Optional[source.annotation], name  # noqa: UP045 (the same object pydantic made)
        assert field.default is None and field.description == source.description, name
    block = SelfparaOptions.model_validate({"k": 2, "equivalence": "exact", "paraphrase_check": "off"})
    assert block.overrides() == {"k": 2, "equivalence": "exact", "paraphrase_check": "off"}
    for bad in ({"k": "3"}, {"k": True}, {"nosuch": 1}, {"paraphrase_check": "sometimes"}, {"agreement": "exact"}):
        with pytest.raises(ValueError):
            SelfparaOptions.model_validate(bad)


def test_the_proxy_doc_lists_every_request_setting() -> None:
    doc = (ROOT / "docs" / "proxy.md").read_text(encoding="utf-8")
    section = doc.split("### Per-request settings", 1)[1].split("\n### ", 1)[0]
    keys = {key for row in re.findall(r"^\| (`[^|]*`) \|", section, re.M) for key in re.findall(r"`(\w+)`", row)}
    assert keys == set(SelfparaOptions.model_fields)


def test_docs_tables_are_made_from_the_code() -> None:
    script = runpy.run_path(str(ROOT / "scripts" / "doc_tables.py"))
    for doc, blocks in script["DOC_BLOCKS"].items():
        text = doc.read_text(encoding="utf-8")
        assert script["render"](text, blocks) == text, f"{doc.name} is stale: run python scripts/doc_tables.py"
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert envvars.env_table() in text and presets.defaults_table() in text
    # the library's defaults beside the CLI's, in the library's own page
    assert presets.defaults_table() in (ROOT / "docs" / "library.md").read_text(encoding="utf-8")


def spelled_variables() -> dict[str, set[str]]:
    """Module path -> the environment variable names it writes as string constants: any `SELFPARA_*`,
    and the other tools' variables of ENV_VARS (docstrings are not constants of interest)."""
    names = {v.name for v in envvars.ENV_VARS}
    found: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docstrings = {
                id(node.body[0].value)
                for node in ast.walk(tree)
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and node.body
                and isinstance(node.body[0], ast.Expr)
            }
            for node in ast.walk(tree):
                text = node.value if isinstance(node, ast.Constant) and id(node) not in docstrings else None
                if isinstance(text, str) and (text in names or re.fullmatch(r"SELFPARA_[A-Z_]+", text)):
                    found.setdefault(path.relative_to(ROOT).as_posix(), set()).add(text)
    return found


KNOWN_SPELLED_ELSEWHERE: set[tuple[str, str]] = set()
"""Modules that still spell a variable themselves (none: each imports selfpara.util.envvars)."""


def test_only_envvars_spells_a_variable() -> None:
    declared = {v.name for v in envvars.ENV_VARS}
    assert len(declared) == len(envvars.ENV_VARS)
    found = spelled_variables()
    assert found.pop("selfpara/util/envvars.py") == declared
    elsewhere = {(path, name) for path, names in found.items() for name in names}
    assert {name for _, name in elsewhere} <= declared, "a variable that envvars.ENV_VARS does not name"
    assert elsewhere <= KNOWN_SPELLED_ELSEWHERE, "import the name from selfpara.util.envvars instead"


@pytest.mark.xfail(strict=True, reason="known: spelled in a file another change is rewriting")
@pytest.mark.parametrize("where", sorted(KNOWN_SPELLED_ELSEWHERE))
def test_known_spelling_elsewhere_is_gone(where: tuple[str, str]) -> None:
    path, name = where
    assert name not in spelled_variables().get(path, set())


def test_cache_dir_precedence(tmp_path: Path) -> None:
    home = Path.home()
    assert envvars.cache_dir({}) == home / ".cache" / "selfpara"
    assert envvars.cache_dir({"XDG_CACHE_HOME": str(tmp_path / "xdg")}) == tmp_path / "xdg" / "selfpara"
    both = {"XDG_CACHE_HOME": str(tmp_path / "xdg"), "SELFPARA_CACHE_DIR": str(tmp_path / "own")}
    assert envvars.cache_dir(both) == tmp_path / "own"
    assert envvars.cache_dir({"SELFPARA_CACHE_DIR": "~/x"}) == home / "x"


def test_the_bench_cache_lives_in_the_one_cache_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from evaluation.cache import CACHE_FILE, default_cache_path

    monkeypatch.setenv("SELFPARA_CACHE_DIR", str(tmp_path))
    assert default_cache_path() == envvars.cache_dir() / CACHE_FILE == tmp_path / CACHE_FILE
