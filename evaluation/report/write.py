"""Writing a run directory's reports: report.json, report.md and report.html."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from evaluation.report.data import build_report
from evaluation.report.markdown import markdown_report
from evaluation.report.page import render_html


def write_reports(out: str | Path, **options: Any) -> dict[str, Any]:
    """Build the report of `out` (options: those of `build_report`) and write report.json, report.md
    and report.html there. Returns the report."""
    out = Path(out).expanduser()
    report = build_report(out, **options)
    _write(out / "report.json", json.dumps(report, indent=2, default=str) + "\n")
    _write(out / "report.md", markdown_report(report))
    _write(out / "report.html", render_html(report))
    return report


def _write(path: Path, text: str) -> None:
    """Write atomically: a reader never sees half a report."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
