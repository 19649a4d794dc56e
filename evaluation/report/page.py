"""The report as one self-contained HTML page, rendered from `evaluation/templates/report.html.j2`.

This module turns the report dict into formatted rows; the template only lays them out.
"""

from __future__ import annotations

import functools
from typing import Any

from evaluation.report.data import HEADLINE_METRICS, fmt_number, metric_rows, metric_title, metrics_table
from evaluation.report.plots import FIGURES, figures

TEMPLATE = "report.html.j2"

TABLES = {
    "tbl-metrics": "Metrics per arm",
    "tbl-comparisons": "Paired comparisons",
    "tbl-totals": "Calls, tokens, cost and latency per arm",
    "tbl-diagnostics": "What the voting arms did",
    "tbl-categories": "Share of correct answers by category",
    "tbl-config": "Run configuration",
}
"""Table ids of the HTML report and their captions."""


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
    return _environment().get_template(TEMPLATE).render(
        title=f"selfpara bench: {bench['dataset']} on {bench['model']}",
        run=report["run"],
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
        comparison_rows=_comparison_rows(report, table),
        totals_rows=_totals_rows(report, arms),
        diagnostics_rows=_diagnostics_rows(report),
        category_rows=_category_rows(report, arms),
        notes=table.notes,
    )


def _metric_rows(report: dict[str, Any], table: Any, arms: list[str]) -> list[dict[str, Any]]:
    rows = []
    for metric in metric_rows(report):
        info = table.info.get(metric)
        estimates = [table.groups[a].get(metric) for a in arms]
        rows.append({
            "title": metric_title(table, metric),
            "estimates": [e.fmt(3) if e is not None else "–" for e in estimates],
            "description": info.description if info else "",
        })
    return rows


def _comparison_rows(report: dict[str, Any], table: Any) -> list[dict[str, Any]]:
    """Metrics × pairs: difference [95% CI] and p, classed where the CI excludes 0 (good: better for a)."""
    pairs = [tuple(p) for p in report.get("pairs", [])]
    rows = []
    for metric in metric_rows(report):
        if metric not in HEADLINE_METRICS and not metric.startswith("cons_"):
            continue
        info = table.info.get(metric)
        cells = []
        for a, b in pairs:
            c = table.comparison(metric, a, b)
            if c is None or c.diff is None:
                cells.append({"cls": "", "text": "–"})
                continue
            cls = ""
            directed = c.lo is not None and c.hi is not None and info and info.higher_is_better is not None
            if directed and (c.lo > 0 or c.hi < 0):  # the CI excludes 0
                cls = "good" if (c.lo > 0) == info.higher_is_better else "bad"
            p = "" if c.p_value is None else f" (p={c.p_value:.2g})"
            text = f"{c.diff:+.3f} [{fmt_number(c.lo, 3, True)}, {fmt_number(c.hi, 3, True)}]{p}"
            cells.append({"cls": cls, "text": text})
        rows.append({"title": metric_title(table, metric), "cells": cells})
    return rows


def _totals_rows(report: dict[str, Any], arms: list[str]) -> list[list[Any]]:
    rows = []
    for a in arms:
        t = report["totals"][a]
        rows.append([
            a, t["samples"], t["errors"], t["calls"], fmt_number(t["calls_per_answer"], 2), t["prompt_tokens"],
            t["completion_tokens"], fmt_number(t["tokens_per_answer"], 0), f"{t['cost']:.4f}",
            fmt_number(t["latency_mean_s"], 2), fmt_number(t["latency_p50_s"], 2),
        ])
    return rows


def _diagnostics_rows(report: dict[str, Any]) -> list[list[Any]]:
    return [
        [arm, d["answers"], fmt_number(d.get("mean_vote_share")), fmt_number(d.get("mean_k_kept"), 2),
         fmt_number(d.get("no_paraphrases")), fmt_number(d.get("original_won")),
         fmt_number(d.get("samples_per_answer"), 1)]
        for arm, d in report["diagnostics"].items()
    ]


def _category_rows(report: dict[str, Any], arms: list[str]) -> list[list[Any]]:
    return [
        [cat, by_arm["samples"], *(fmt_number(by_arm.get(a)) for a in arms)]
        for cat, by_arm in report["categories"].items()
    ]
