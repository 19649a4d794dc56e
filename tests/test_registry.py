"""One registry shape (`selfpara.util.registry.Registry`) behind every pick-by-name choice: the generic
rules, and that a new dataset format is one new module plus its registration."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from evaluation.arms import ARMS, register_arm
from evaluation.arms.raw import RawArm
from evaluation.datasets import FORMATS, dataset_names, load_dataset
from evaluation.graders import register_grader
from evaluation.graders.registry import FACTORIES
from selfpara.errors import ConfigError
from selfpara.pipeline.equivalence import EQUIVALENCE_FUNCTIONS
from selfpara.util.registry import Registry
from tests.helpers.registries import restored


def test_a_registry_keeps_entries_by_name_in_order_and_resolves_aliases() -> None:
    reg: Registry[int] = Registry("colour", normalize=str.lower)

    @reg.register("Red", "rouge")
    def red() -> int:
        return 1

    reg.add("blue", 2)
    assert red() == 1 and reg["red"] is red  # the decorator returns what it decorated
    assert list(reg) == reg.names() == ["red", "blue"] and len(reg) == 2
    assert reg.canonical(" ROUGE ") == "red" and reg.get_entry("Blue") == 2
    assert reg.knows("rouge") and not reg.knows("green")
    assert reg.help_names() == "red, blue"  # what an option's --help lists; aliases are not listed


def test_a_taken_name_or_alias_is_rejected_with_both_owners_named() -> None:
    reg: Registry[int] = Registry("colour")
    reg.add("red", 1, "rouge")
    with pytest.raises(ValueError, match="colour name 'red' is taken by 'red'"):
        reg.add("red", 2)
    with pytest.raises(ValueError, match="colour name 'rouge' is taken by 'red'"):
        reg.add("crimson", 3, "rouge")
    with pytest.raises(ValueError, match="names itself twice"):
        reg.add("green", 4, "green")
    assert reg.names() == ["red"] and not reg.knows("crimson")  # a rejected entry leaves nothing behind


def test_an_unknown_name_is_a_config_error_listing_the_names() -> None:
    reg: Registry[int] = Registry("colour")
    reg.add("red", 1)
    reg.add("blue", 2)
    with pytest.raises(ConfigError, match="unknown colour 'green'; choose from red, blue"):
        reg.get_entry("green")


def test_restored_puts_the_registry_back() -> None:
    reg: Registry[int] = Registry("colour")
    reg.add("red", 1)
    with restored(reg):
        reg.add("blue", 2, "azure")
        assert reg.knows("azure")
    assert reg.names() == ["red"] and not reg.knows("azure")


def test_every_registry_is_the_one_shape() -> None:
    for registry in (EQUIVALENCE_FUNCTIONS, ARMS, FACTORIES, FORMATS):
        assert isinstance(registry, Registry)
    assert FORMATS.names() == ["truthfulqa", "math500", "simpleqa", "gsm8k", "nqopen", "comqa"]
    assert ARMS.names() == ["raw", "selfpara", "sc", "single_call", "rar", "oracle", "se", "hybrid"]


def test_arms_and_graders_reject_a_name_that_is_taken() -> None:
    with restored(ARMS), pytest.raises(ValueError, match="arm name 'raw' is taken"):
        register_arm("raw")(type("Other", (RawArm,), {}))
    assert ARMS["raw"] is RawArm and RawArm.name == "raw"  # the decorator named it
    with restored(FACTORIES), pytest.raises(ValueError, match="grader name 'exact' is taken"):
        register_grader("exact")(lambda **_: None)
    with restored(FACTORIES), pytest.raises(ValueError, match="taken by the per-kind default"):
        register_grader("auto")(lambda **_: None)


# --------------------------------------------------------------------------- a new dataset format

TOY_FORMAT = '''
"""A toy dataset format: one `ask` / `expect` pair per line."""

from evaluation.datasets.readers import read_rows
from evaluation.datasets.registry import register_format
from evaluation.records import Item, ItemVariant


@register_format("toy", detect=lambda columns, rows: {"ask", "expect"} <= columns, files=("toy.jsonl",))
def load_toy(path, *, limit=None):
    rows = read_rows(path)[:limit]
    return [
        Item(id=f"toy-{i}", kind="factual", gold=[r["expect"]], variants=[ItemVariant(id=0, question=r["ask"])])
        for i, r in enumerate(rows)
    ]
'''


def _import_file(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def toy_format(tmp_path: Path) -> Iterator[ModuleType]:
    """The toy format's module, written as its own file and imported, registered until the test ends."""
    source = tmp_path / "toy_format.py"
    source.write_text(textwrap.dedent(TOY_FORMAT), encoding="utf-8")
    with restored(FORMATS):
        yield _import_file(source, "toy_format")
    sys.modules.pop("toy_format", None)


def test_a_new_dataset_format_is_one_module_and_its_registration(
    toy_format: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "toy.jsonl").write_text(
        '{"ask": "2+2?", "expect": "4"}\n{"ask": "Capital of France?", "expect": "Paris"}\n'
    )
    monkeypatch.setenv("SELFPARA_DATA_DIR", str(data))
    assert "toy" in dataset_names()
    by_name = load_dataset("toy")  # found in the data folder under its file name
    by_path = load_dataset(f"toy:{data / 'toy.jsonl'}")
    detected = load_dataset(str(data / "toy.jsonl"))  # recognised by its columns
    for items in (by_name, by_path, detected):
        assert [(i.id, i.variants[0].question, i.gold) for i in items] == [
            ("toy-0", "2+2?", ["4"]),
            ("toy-1", "Capital of France?", ["Paris"]),
        ]
    assert len(load_dataset("toy", limit=1)) == 1


def test_the_toy_format_is_gone_after_its_test(tmp_path: Path) -> None:
    assert "toy" not in FORMATS
    with pytest.raises(ConfigError, match="unknown dataset 'toy'"):
        load_dataset("toy", data_dir=tmp_path)


# --------------------------------------------------------------------------- --help lists the registries


@pytest.mark.parametrize(
    ("command", "option", "registry"),
    [
        ("ask", "--equivalence", EQUIVALENCE_FUNCTIONS),
        ("serve", "--equivalence", EQUIVALENCE_FUNCTIONS),
        ("bench", "--dataset", FORMATS),
        ("bench", "--arms", ARMS),
        ("bench", "--grader", FACTORIES),
    ],
)
def test_help_lists_what_is_registered(command: str, option: str, registry: Registry[object]) -> None:
    from typer.testing import CliRunner

    from selfpara.cli import app

    text = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "400"}).output
    lines = " ".join(line.strip(" │") for line in text.splitlines())  # the help column, unwrapped
    assert option in text and registry.help_names() in " ".join(lines.split())
