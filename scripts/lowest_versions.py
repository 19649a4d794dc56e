"""Print pip pins of the lowest versions pyproject.toml declares, to check that its floors are true.

    python scripts/lowest_versions.py > /tmp/floors.txt             # the base dependencies
    python scripts/lowest_versions.py eval > /tmp/floors.txt        # and those of an extra
    python3 -m venv /tmp/low && /tmp/low/bin/pip install -c /tmp/floors.txt -e . 'pytest>=8' pytest-asyncio
    /tmp/low/bin/python -m pytest -q tests/test_cli_conventions.py ...

Each `NAME>=X` becomes `NAME==X` (a constraint: pip must install exactly the floor). A
requirement with no floor, or one whose marker does not hold on this Python, is left out.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def floors(extras: list[str]) -> list[str]:
    """`NAME==FLOOR` for every base requirement and those of `extras` that has a `>=` floor.

    Args:
        extras: names of optional-dependency groups of pyproject.toml to include.
    """
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = list(project["dependencies"])
    for extra in extras:
        requirements += [r for r in project["optional-dependencies"][extra] if not r.startswith("selfpara")]
    pins = []
    for req in requirements:
        spec, _, marker = req.partition(";")
        if marker and not _marker_holds(marker):
            continue
        found = re.match(r"\s*([A-Za-z0-9_.\-]+)\s*>=\s*([0-9][^,\s]*)", spec)
        if found:
            pins.append(f"{found.group(1)}=={found.group(2)}")
    return pins


def _marker_holds(marker: str) -> bool:
    found = re.fullmatch(r"\s*python_version\s*<\s*'(\d+)\.(\d+)'\s*", marker)
    if not found:
        return True
    return sys.version_info[:2] < (int(found.group(1)), int(found.group(2)))


if __name__ == "__main__":
    print("\n".join(floors(sys.argv[1:])))
