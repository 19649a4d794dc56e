"""Package metadata in its current form: building it raises no deprecation warning."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import selfpara

ROOT = Path(__file__).resolve().parent.parent


def test_metadata_reads_without_deprecation_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("setuptools", minversion="77")  # the build backend pyproject.toml asks for
    from setuptools.config.pyprojecttoml import apply_configuration
    from setuptools.dist import Distribution

    monkeypatch.chdir(ROOT)  # license-files are globbed from the project root
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # setuptools warns (SetuptoolsDeprecationWarning) on the old license table
        dist = apply_configuration(Distribution(), ROOT / "pyproject.toml")
    assert dist.metadata.license_expression == "Apache-2.0"
    assert dist.metadata.license_files == ["LICENSE"] and (ROOT / "LICENSE").read_text().lstrip().startswith(
        "Apache License"
    )
    assert dist.get_version() == selfpara.__version__  # one place holds the version


def _requirements() -> tuple[list[str], dict[str, list[str]]]:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return project["dependencies"], project["optional-dependencies"]


def _names(requirements: list[str], extras: dict[str, list[str]]) -> set[str]:
    """Distribution names the requirements bring, following `selfpara[x,y]` into those extras."""
    import re

    names: set[str] = set()
    for req in requirements:
        name = re.split(r"[\s<>=!~;\[]", req, maxsplit=1)[0].lower().replace("_", "-")
        if name == "selfpara":
            for extra in re.search(r"\[(.*)\]", req).group(1).split(","):  # type: ignore[union-attr]
                names |= _names(extras[extra.strip()], extras)
        else:
            names.add(name)
    return names


def test_extras_bring_the_modules_extras_py_says_and_the_base_none_of_them() -> None:
    from importlib.metadata import packages_distributions

    from selfpara.util.extras import EXTRA_MODULES

    base, extras = _requirements()
    dists = packages_distributions()
    base_names = _names(base, extras)
    for extra, modules in EXTRA_MODULES.items():
        assert extra in extras, f"extras.py names an extra pyproject.toml lacks: {extra}"
        brought = _names(extras[extra], extras)
        for module in modules:
            owners = {d.lower().replace("_", "-") for d in dists.get(module, [])}
            if not owners:
                continue  # not installed here: nothing to check it against
            assert owners & brought, f"{extra} does not bring {module} ({owners})"
            assert not owners & base_names, f"the base install brings {module}, which only {extra} should"
    assert {"torch", "transformers", "llama-cpp-python"}.isdisjoint(base_names)
    # all = every extra
    # (but the default model: `qwen` is its own extra, and brings nothing else `all` lacks)
    assert _names(["selfpara[all]"], extras) >= set().union(
        *(_names(extras[e], extras) for e in EXTRA_MODULES if e != "qwen")
    )
    assert _names(["selfpara[qwen]"], extras) - _names(["selfpara[all]"], extras) == _names(extras["qwen"][1:], extras)
    assert _names(["selfpara[test]"], extras) >= _names(["selfpara[all]"], extras)  # the tests get every feature


def test_the_quick_starts_extra_brings_what_ask_serve_and_bench_need_and_no_torch() -> None:
    _, extras = _requirements()
    qwen = _names(["selfpara[qwen]"], extras)
    assert qwen >= _names(["selfpara[local]", "selfpara[bench]"], extras)
    assert {"torch", "bert-score", "transformers"}.isdisjoint(qwen)
    assert "bert-score" in _names(["selfpara[eval]"], extras)  # BERTScore consistency stays in eval
