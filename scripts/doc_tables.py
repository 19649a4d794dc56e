"""Write the tables the docs make from the code: the environment variables
(`selfpara.util.envvars.ENV_VARS`, docs/cli.md) and the defaults that differ by entry point
(`selfpara.cli.presets.PRESETS`, docs/cli.md and docs/library.md). tests/test_settings_source.py
fails while they disagree.

    python scripts/doc_tables.py          # rewrite the docs' generated blocks
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

DOCS = Path(__file__).resolve().parent.parent / "docs"
CLI_DOC = DOCS / "cli.md"
BLOCKS: dict[str, Callable[[], str]] = {"env-vars": env_table, "defaults": defaults_table}
"""Block name (between `<!-- NAME: generated ... -->` and `<!-- /NAME -->`) -> what fills it."""
DOC_BLOCKS: dict[Path, tuple[str, ...]] = {CLI_DOC: ("env-vars", "defaults"), DOCS / "library.md": ("defaults",)}
"""Each doc with generated blocks -> the blocks it must hold."""


def block_pattern(name: str) -> re.Pattern[str]:
    """The generated block `name` of a doc, its markers included (group 1: the opening marker)."""
    return re.compile(rf"(<!-- {name}: generated[^\n]*-->\n).*?(?=<!-- /{name} -->)", re.S)


def render(text: str, blocks: tuple[str, ...] = DOC_BLOCKS[CLI_DOC]) -> str:
    """`text` (a doc) with its generated `blocks` filled from the code."""
    for name in blocks:
        pattern = block_pattern(name)
        if not pattern.search(text):
            raise ValueError(f"the doc has no generated block {name!r}")
        text = pattern.sub(lambda m, make=BLOCKS[name]: m.group(1) + make() + "\n", text)
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check; exit 1 when a doc is stale")
    args = parser.parse_args()
    stale = []
    for doc, blocks in DOC_BLOCKS.items():
        text = doc.read_text(encoding="utf-8")
        fresh = render(text, blocks)
        if fresh != text:
            stale.append(doc)
            if not args.check:
                doc.write_text(fresh, encoding="utf-8")
    if args.check:
        sys.exit(1 if stale else 0)


if __name__ == "__main__":
    main()
