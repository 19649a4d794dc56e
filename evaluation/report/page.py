"""The report as one self-contained HTML page, rendered from `evaluation/templates/report.html.j2`.

This module turns the report dict into formatted rows; the template only lays them out.
"""

from __future__ import annotations

import functools
from typing import Any

from evaluation.report.data import (
    metric_rows,
    metric_title,
    metrics_table,
)
from evaluation.report.headline import headline
from evaluation.report.instrument import INSTRUMENT_TITLES, instrument_sections
from evaluation.report.plots import FIGURES, figures
from evaluation.report.tables import TITLES, comparison_cells, sections

TEMPLATE = "report.html.j2"

TABLES = {
    "tbl-metrics": "Metrics per arm",
    "tbl-comparisons": "Paired comparisons",
    "tbl-config": "Run configuration",
    **INSTRUMENT_TITLES,
    **TITLES,
}
"""Table ids of the HTML report's own tables and their captions (the shared ones: `tables.sections`)."""


@functools.cache
def _environment() -> Any:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("evaluation", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )


def render_html(report: dict[str, Any]) -> str:
    """The self-contained HTML report (inline CSS and SVG; no scripts, no external resources)."""
    table = metrics_table(report)
    arms = report["arms"]
    bench = report["config"]["bench"]
    s = report["summary"]
    return (
        _environment()
        .get_template(TEMPLATE)
        .render(
            title=f"selfpara bench: {bench['dataset']} on {bench['model']}",
            run=report["run"],
            headline=headline(report),
            generated=report["generated"],
            arms=arms,
            bench=bench,
            summary=s,
            questions=s.get("items_reported", s["items"]),
            answers=s.get("samples_reported", s["samples"]),
            n_boot=table.n_boot,
            include_original=table.include_original,
            figure_captions=FIGURES,
            figures=figures(report),
            tables=TABLES,
            metric_rows=_metric_rows(report, table, arms),
            pairs=[tuple(p) for p in report.get("pairs", [])],
            comparison_rows=_comparison_rows(report),
            sections=[*instrument_sections(report), *sections(report)],
            warnings=report.get("warnings", []),
            alpha=1.0 - table.confidence,
            notes=table.notes,
        )
    )


def _metric_rows(report: dict[str, Any], table: Any, arms: list[str]) -> list[dict[str, Any]]:
    rows = []
    for metric in metric_rows(report):
        info = table.info.get(metric)
        estimates = [table.groups[a].get(metric) for a in arms]
        rows.append(
            {
                "title": metric_title(table, metric),
                "estimates": [e.fmt(3) if e is not None else "–" for e in estimates],
                "description": info.description if info else "",
            }
        )
    return rows


def _comparison_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Metrics × pairs: difference [95% CI] and p, classed good/bad only where CI and test agree."""
    return [
        {"title": title, "cells": [{"cls": "" if mark == "mixed" else mark, "text": text} for mark, text in cells]}
        for title, cells in comparison_cells(report)
    ]
