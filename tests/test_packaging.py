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
