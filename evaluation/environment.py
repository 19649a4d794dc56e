"""The environment a bench run ran in, saved in its config.json so a result can be traced and reproduced."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

PACKAGES = ("selfpara", "torch", "transformers", "llama-cpp-python", "litellm", "numpy", "pydantic")
"""Distributions whose versions change what a run measures."""


def package_version(name: str) -> str | None:
    """The installed version of distribution `name`, None when it is not installed."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def git_commit(path: Path | None = None) -> str | None:
    """The commit of the git checkout whose tracked sources are `path` (default: the selfpara package),
    '+dirty' when it has uncommitted changes; None outside such a checkout or without git."""
    import selfpara

    where = path or Path(selfpara.__file__).resolve().parent
    try:
        # Sources tracked by the checkout only: a wheel installed in a venv inside some other
        # project's repository must not report that project's commit.
        tracked = subprocess.run(
            ["git", "ls-files", "--error-unmatch", "__init__.py"], cwd=where, capture_output=True, text=True, timeout=5
        )
        if tracked.returncode != 0:
            return None
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=5)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("+dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")


def run_environment() -> dict[str, Any]:
    """Commit, Python, platform, CPU count and the versions of the packages that matter (None: not installed)."""
    return {
        "git_commit": git_commit(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "packages": {name: package_version(name) for name in PACKAGES},
    }
