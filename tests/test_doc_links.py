"""Every relative link in README.md and docs/ names a file that exists: a page renamed or a results
page replaced leaves no dead link behind (docs/how-it-works.md pointed at a results page that was
never written)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def relative_links(page: Path) -> list[str]:
    """The link targets of `page` that are paths, not web addresses or anchors."""
    return [t for t in LINK.findall(page.read_text(encoding="utf-8")) if not re.match(r"[a-z]+:", t)]


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_relative_link_names_a_file_that_exists(page: Path) -> None:
    assert [t for t in relative_links(page) if not (page.parent / t).exists()] == []


def test_the_link_reader_reads_links() -> None:
    assert relative_links(ROOT / "README.md")  # the README links its docs: a reader finding none is broken
