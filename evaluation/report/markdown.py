"""The report as Markdown: the terminal table and report.md (every table the HTML page has, as text)."""

from __future__ import annotations

from typing import Any

from evaluation.report.data import metric_rows, metric_title, metrics_table
from evaluation.report.headline import headline
from evaluation.report.instrument import instrument_sections
from evaluation.report.tables import (
    abstention_section,
    comparison_cells,
    markdown_section,
    sections,
    selective_section,
    totals_section,
)

_MARKS = {"good": " **▲**", "bad": " **▼**", "significant": " **◆**"}


def _head_lines(report: dict[str, Any], table: Any) -> list[str]:
    s = report["summary"]
    return [
        f"{s.get('items_reported', s['items'])} questions, {s.get('samples_reported', s['samples'])} answers"
        + ("" if s["complete"] else f" (incomplete run: {s['samples']} of {s['samples_expected']} answers so far)")
        + f"; values are fractions with {100 * table.confidence:.0f}% CIs over questions (Wilson's for yes/no "
        "metrics, a bootstrap for the others; none from fewer than 10 questions)",
        "",
    ]


def _metric_lines(report: dict[str, Any], table: Any, digits: int) -> list[str]:
    arms = report["arms"]
    lines = ["| metric | " + " | ".join(arms) + " |", "|---|" + "---|" * len(arms)]
    for metric in metric_rows(report):
        cells = [table.groups[a][metric].fmt(digits) for a in arms]
        lines.append(f"| {metric_title(table, metric)} | " + " | ".join(cells) + " |")
    return lines


def _comparison_lines(report: dict[str, Any], table: Any, digits: int) -> list[str]:
    pairs = [tuple(p) for p in report.get("pairs", [])]
    if not (table.comparisons and pairs):
        return []
    lines = [
        "",
        f"Paired differences a − b over the same questions: diff [{100 * table.confidence:.0f}% CI] (p). "
        f"▲/▼ (better/worse for a) only where the CI excludes 0 and p < {1.0 - table.confidence:.2g}.",
        "",
        "| metric | " + " | ".join(f"{a} − {b}" for a, b in pairs) + " |",
        "|---|" + "---|" * len(pairs),
    ]
    for title, cells in comparison_cells(report, digits):
        lines.append(f"| {title} | " + " | ".join(text + _MARKS.get(mark, "") for mark, text in cells) + " |")
    return lines


def _headline_lines(report: dict[str, Any]) -> list[str]:
    said = headline(report)
    return [f"**{said}**", ""] if said else []


def _warning_lines(report: dict[str, Any]) -> list[str]:
    return [f"> **Warning:** {w}" for w in report.get("warnings", [])] + ([""] if report.get("warnings") else [])


def markdown_table(report: dict[str, Any], digits: int = 3) -> str:
    """The terminal table: warnings, metrics × arms with CIs, paired differences, abstentions and totals."""
    table = metrics_table(report)
    lines = _headline_lines(report) + _warning_lines(report) + _head_lines(report, table)
    lines += _metric_lines(report, table, digits)
    lines += _comparison_lines(report, table, digits) + [""]
    # only where the run has an oracle, a voting arm, a confidence
    shown = [s for s in (*instrument_sections(report), selective_section(report)) if s.rows]
    for section in (*shown, abstention_section(report), totals_section(report)):
        lines += markdown_section(section)
    lines += [f"note: {note}" for note in table.notes]
    return "\n".join(lines).rstrip() + "\n"


def markdown_report(report: dict[str, Any]) -> str:
    """report.md: everything report.html shows, as Markdown tables (the figures' data as tables)."""
    bench = report["config"]["bench"]
    table = metrics_table(report)
    lines = [
        f"# selfpara bench: {bench['dataset']} on {bench['model']}",
        "",
        f"Run `{report['run']}`, arms {', '.join(report['arms'])}, k={bench['k']}, variants {bench['variants']}, "
        f"seed {bench['seed']}. Generated {report['generated']}.",
        "",
        *_headline_lines(report),
        *_warning_lines(report),
        *_head_lines(report, table),
        "## Metrics per arm",
        "",
        *_metric_lines(report, table, 3),
        *_comparison_lines(report, table, 3),
        "",
    ]
    for section in (*instrument_sections(report), *sections(report)):
        lines += markdown_section(section)
    lines += ["## Run configuration", ""] + [f"- {k}: {v}" for k, v in bench.items()] + [""]
    lines += [f"note: {note}" for note in table.notes]
    return "\n".join(lines).rstrip() + "\n"
