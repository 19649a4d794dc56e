"""Reports of a run directory: report.json, a Markdown table, and a self-contained HTML page.

    report = write_reports("runs/NAME")      # reads config.json, items.jsonl, samples.jsonl
    print(markdown_table(report))

- `data`: the report as a JSON-ready dict (metrics, comparisons, totals, diagnostics);
- `markdown`: the terminal table and report.md;
- `plots`: the figures as inline SVG;
- `page`: the HTML page, rendered with jinja2 from `evaluation/templates/report.html.j2`;
- `write`: all three files into the run directory.
"""

from __future__ import annotations

from evaluation.report.data import DEFAULT_CONSISTENCY, build_report, comparison_pairs, load_report, records_of
from evaluation.report.markdown import markdown_report, markdown_table
from evaluation.report.page import TABLES, render_html
from evaluation.report.plots import FIGURES, figures
from evaluation.report.write import write_reports

__all__ = [
    "DEFAULT_CONSISTENCY",
    "FIGURES",
    "TABLES",
    "build_report",
    "comparison_pairs",
    "figures",
    "load_report",
    "markdown_report",
    "markdown_table",
    "records_of",
    "render_html",
    "write_reports",
]
