"""Write the tables docs/cli.md makes from the code: the environment variables
(`selfpara.util.envvars.ENV_VARS`) and the defaults that differ by entry point
(`selfpara.cli.presets.PRESETS`). tests/test_settings_source.py fails while they disagree.

    python scripts/doc_tables.py          # rewrite docs/cli.md's generated blocks
    python scripts/doc_tables.py --check  # exit 1 when they are stale
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

from selfpara.cli.presets import defaults_table
from selfpara.util.envvars import env_table

CLI_DOC = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
BLOCKS: dict[str, Callable[[], str]] = {"env-vars": env_table, "defaults": defaults_table}
"""Block name (between `<!-- NAME: generated ... -->` and `<!-- /NAME -->`) -> what fills it."""


def block_pattern(name: str) -> re.Pattern[str]:
    """The generated block `name` of a doc, its markers included (group 1: the opening marker)."""
    return re.compile(rf"(<!-- {name}: generated[^\n]*-->\n).*?(?=<!-- /{name} -->)", re.S)


def render(text: str) -> str:
    """`text` (a doc) with every generated block filled from the code."""
    for name, make in BLOCKS.items():
        pattern = block_pattern(name)
        if not pattern.search(text):
            raise ValueError(f"docs/cli.md has no generated block {name!r}")
        text = pattern.sub(lambda m, make=make: m.group(1) + make() + "\n", text)
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check; exit 1 when docs/cli.md is stale")
    args = parser.parse_args()
    text = CLI_DOC.read_text(encoding="utf-8")
    fresh = render(text)
    if args.check:
        sys.exit(0 if fresh == text else 1)
    CLI_DOC.write_text(fresh, encoding="utf-8")


if __name__ == "__main__":
    main()
