"""The report's figures as inline SVG (no scripts, no network, no plotting library)."""

from __future__ import annotations

import html
import math
from typing import Any

from evaluation.report.data import (
    ACCURACY_METRICS,
    FLIP_METRICS,
    HEADLINE_METRICS,
    headline_signal,
    metric_title,
    metrics_table,
    sorted_comparisons,
)

FIGURES = {
    "fig-accuracy": "Accuracy per arm (95% CI: Wilson's interval over questions)",
    "fig-consistency": "Answer consistency across the variants of a question (95% CI)",
    "fig-flips": "Flip rates, mismatch and conflicting sets (lower is steadier)",
    "fig-cost": "Accuracy against model calls per answered question",
    "fig-diffs": "Paired differences: selfpara minus each baseline (95% CI)",
    "fig-risk-coverage": "Risk–coverage: accuracy when answering only the surest answers (by each arm's confidence)",
}
"""Figure ids of the HTML report and their captions."""

ARM_COLORS = {
    "raw": "#8C8C8C",
    "selfpara": "#4C72B0",
    "sc": "#DD8452",
    "oracle": "#55A868",
    "se": "#C44E52",
    "hybrid": "#8172B3",
    "single_call": "#937860",
    "rar": "#DA8BC3",
}
"""One colour per arm, the same in every figure of every report (the first arm of each kind in a run)."""

PALETTE = ["#64B5CD", "#CCB974", "#2F4F4F", "#E377C2", "#17BECF", "#BCBD22", "#7F3C8D", "#11A579"]
"""Colours of further arms of a kind already drawn (selfpara[k=6] beside selfpara), in turn."""


def _esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def arm_colors(report: dict[str, Any]) -> dict[str, str]:
    """Each arm label of `report` to its colour: its kind's in ARM_COLORS for the first of a kind, else the
    next of PALETTE."""
    kinds = {a["label"]: a.get("arm", a["label"]) for a in report["config"].get("arms") or []}
    out: dict[str, str] = {}
    spare = iter(PALETTE * (1 + len(report["arms"]) // len(PALETTE)))
    for label in report["arms"]:
        color = ARM_COLORS.get(kinds.get(label, label))
        out[label] = color if color is not None and color not in out.values() else next(spare)
    return out


def _color(colors: dict[str, str], name: str, i: int) -> str:
    return colors.get(name) or PALETTE[i % len(PALETTE)]


def _legend(series: list[str], x: float, y: float, colors: dict[str, str]) -> list[str]:
    parts, cx = [], x
    for i, name in enumerate(series):
        parts.append(f'<rect x="{cx:.1f}" y="{y - 10:.1f}" width="12" height="12" fill="{_color(colors, name, i)}"/>')
        parts.append(f'<text x="{cx + 16:.1f}" y="{y:.1f}" font-size="12">{_esc(name)}</text>')
        cx += 28 + 7.2 * len(name)
    return parts


def _y_title(mid: float, text: str) -> str:
    """A y axis's title, written upwards along the left edge, centred at height `mid`."""
    return (
        f'<text x="14" y="{mid:.1f}" font-size="12" text-anchor="middle" transform="rotate(-90 14 {mid:.1f})">'
        f"{_esc(text)}</text>"
    )


def _nice_max(values: list[float]) -> float:
    top = max([v for v in values if v is not None] + [0.0])
    if top <= 0:
        return 1.0
    for step in (0.05, 0.1, 0.2, 0.25, 0.5, 1.0):
        if top <= step * 5:
            return min(1.0, math.ceil(top / step) * step) if top <= 1.0 else math.ceil(top / step) * step
    return math.ceil(top)


def fitted_axis(values: list[float]) -> tuple[float, float, float]:
    """A y axis for accuracies spanning `values`: (low, high, tick step) within [0, 1], ticks at a
    round step, 5 or 6 of them, the data filling most of it (0.94 against 0.96 must be told apart,
    not drawn flat on a 0–1 axis), a step of room below the lowest value where 0 allows."""
    if not values:
        return 0.0, 1.0, 0.2
    low, high = min(values), max(values)
    for step in (0.02, 0.05, 0.1, 0.2):
        lo = max(0.0, math.floor(round(low / step, 6)) * step - (step if low > 0 else 0.0))
        hi = min(1.0, math.ceil(round(high / step, 6)) * step)
        if hi - lo < 5 * step:  # too short an axis reads as a difference: five steps at least
            lo = max(0.0, hi - 5 * step)
            hi = min(1.0, lo + 5 * step)
        if hi - lo <= 6 * step + 1e-9:
            return round(lo, 6), round(hi, 6), step
    return 0.0, 1.0, 0.2


def bar_chart(
    fig_id: str,
    categories: list[str],
    series: list[str],
    values: dict[tuple[str, str], tuple[float | None, float | None, float | None]],
    *,
    y_title: str,
    empty: str,
    y_max: float | None = None,
    width: int = 760,
    height: int = 300,
    colors: dict[str, str] | None = None,
) -> str:
    """Grouped bars: one group per category, one bar per series, CI whiskers; inline SVG.

    Args:
        colors: series name -> colour (`arm_colors`); others take the palette in turn.
        y_title: the y axis's title (what a bar's height is).
        empty: the sentence shown instead of the chart when every bar is 0 or missing (an
            empty plot would read as a drawing error).
    """
    colors = colors or {}
    if all((v[0] or 0.0) == 0.0 and (v[2] or 0.0) == 0.0 for v in values.values()):
        return f'<p class="empty-chart" id="{fig_id}-empty">{_esc(empty)}</p>'
    left, right, top, bottom = 64, 12, 30, 46
    plot_w, plot_h = width - left - right, height - top - bottom
    tops = [v[2] if v[2] is not None else (v[0] or 0.0) for v in values.values()]
    ymax = y_max if y_max is not None else _nice_max(tops)
    y = lambda v: top + plot_h * (1 - min(max(v, 0.0), ymax) / ymax)  # noqa: E731
    out = [
        f'<svg id="{fig_id}-svg" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" font-family="sans-serif">'
    ]
    for i in range(6):
        v = ymax * i / 5
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#e3e3e3"/>')
        out.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" font-size="11" text-anchor="end">{v:.2f}</text>')
    out.append(_y_title(top + plot_h / 2, y_title))
    group_w = plot_w / max(1, len(categories))
    bar_w = min(42.0, group_w * 0.8 / max(1, len(series)))
    for gi, cat in enumerate(categories):
        gx = left + gi * group_w + (group_w - bar_w * len(series)) / 2
        for si, name in enumerate(series):
            value, lo, hi = values.get((cat, name), (None, None, None))
            x = gx + si * bar_w
            if value is None:
                out.append(
                    f'<text x="{x + bar_w / 2:.1f}" y="{y(0) - 4:.1f}" font-size="10" text-anchor="middle">–</text>'
                )
                continue
            out.append(
                f'<rect x="{x + 1:.1f}" y="{y(value):.1f}" width="{bar_w - 2:.1f}" height="{y(0) - y(value):.1f}" '
                f'fill="{_color(colors, name, si)}"><title>{_esc(name)} {_esc(cat)}: {value:.3f}'
                + (f" [{lo:.3f}, {hi:.3f}]" if lo is not None and hi is not None else "")
                + "</title></rect>"
            )
            if lo is not None and hi is not None:
                cx = x + bar_w / 2
                out.append(f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{y(lo):.1f}" y2="{y(hi):.1f}" stroke="#222"/>')
                for yy in (lo, hi):
                    out.append(
                        f'<line x1="{cx - 4:.1f}" x2="{cx + 4:.1f}" y1="{y(yy):.1f}" y2="{y(yy):.1f}" stroke="#222"/>'
                    )
            label_y = y(hi if hi is not None else value) - 4
            out.append(
                f'<text x="{x + bar_w / 2:.1f}" y="{label_y:.1f}" font-size="11" '
                f'text-anchor="middle">{value:.2f}</text>'
            )
        out.append(
            f'<text x="{left + gi * group_w + group_w / 2:.1f}" y="{height - bottom + 16:.1f}" font-size="12" '
            f'text-anchor="middle">{_esc(cat)}</text>'
        )
    out.append(f'<line x1="{left}" x2="{width - right}" y1="{y(0):.1f}" y2="{y(0):.1f}" stroke="#444"/>')
    out += _legend(series, left, height - 8, colors)
    out.append("</svg>")
    return "".join(out)


def scatter_chart(
    fig_id: str,
    points: list[tuple[str, float, float | None, float | None, float | None, float | None]],
    *,
    width: int = 760,
    height: int = 320,
    colors: dict[str, str] | None = None,
) -> str:
    """Accuracy (y, with CI) against calls per answer (x): (name, x, A_exp, lo, hi, A_strict)."""
    colors = colors or {}
    left, right, top, bottom = 64, 20, 24, 58
    plot_w, plot_h = width - left - right, height - top - bottom
    xmax = max([p[1] for p in points] + [1.0]) * 1.15
    ys = [v for p in points for v in (p[2], p[4], p[5]) if v is not None]
    ymax = _nice_max(ys)
    X = lambda v: left + plot_w * v / xmax  # noqa: E731
    Y = lambda v: top + plot_h * (1 - v / ymax)  # noqa: E731
    out = [
        f'<svg id="{fig_id}-svg" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" font-family="sans-serif">'
    ]
    for i in range(6):
        v = ymax * i / 5
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{Y(v):.1f}" y2="{Y(v):.1f}" stroke="#e3e3e3"/>')
        out.append(f'<text x="{left - 6}" y="{Y(v) + 4:.1f}" font-size="11" text-anchor="end">{v:.2f}</text>')
    step = max(1, math.ceil(xmax / 8))
    for t in range(0, int(xmax) + 1, step):
        out.append(f'<line x1="{X(t):.1f}" x2="{X(t):.1f}" y1="{top}" y2="{top + plot_h}" stroke="#f0f0f0"/>')
        out.append(f'<text x="{X(t):.1f}" y="{top + plot_h + 14}" font-size="11" text-anchor="middle">{t}</text>')
    out.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 26}" font-size="12" text-anchor="middle">'
        "model calls per answered question (mean)</text>"
    )
    out.append(_y_title(top + plot_h / 2, "accuracy (share of questions)"))
    seen_x: dict[float, int] = {}
    for i, (name, x, acc, lo, hi, strict) in enumerate(points):
        if acc is None:
            continue
        c = _color(colors, name, i)
        stack = seen_x.get(round(x, 1), 0)  # arms with the same cost: stack their labels
        seen_x[round(x, 1)] = stack + 1
        if lo is not None and hi is not None:
            out.append(
                f'<line x1="{X(x):.1f}" x2="{X(x):.1f}" y1="{Y(lo):.1f}" y2="{Y(hi):.1f}" '
                f'stroke="{c}" stroke-width="2"/>'
            )
        out.append(
            f'<circle cx="{X(x):.1f}" cy="{Y(acc):.1f}" r="6" fill="{c}"><title>{_esc(name)}: A_exp {acc:.3f} '
            f"at {x:.2f} calls</title></circle>"
        )
        if strict is not None:
            out.append(
                f'<rect x="{X(x) - 5:.1f}" y="{Y(strict) - 5:.1f}" width="10" height="10" fill="none" '
                f'stroke="{c}" stroke-width="2"><title>{_esc(name)}: A_strict {strict:.3f}</title></rect>'
            )
        out.append(
            f'<text x="{X(x) + 9:.1f}" y="{Y(acc) - 8 - 13 * stack:.1f}" font-size="11" fill="{c}">{_esc(name)}</text>'
        )
    out.append(f'<line x1="{left}" x2="{width - right}" y1="{top + plot_h}" y2="{top + plot_h}" stroke="#444"/>')
    out.append(f'<text x="{left}" y="{height - 6}" font-size="11">● A_exp with 95% CI   □ A_strict</text>')
    out.append("</svg>")
    return "".join(out)


def diff_chart(
    fig_id: str, rows: list[tuple[str, float | None, float | None, float | None, bool | None]], *, width: int = 760
) -> str:
    """Forest plot of paired differences: (label, diff, lo, hi, higher_is_better)."""
    row_h, left, right, top = 22, 300, 30, 20
    height = top + row_h * max(1, len(rows)) + 40
    spans = [abs(v) for r in rows for v in r[1:4] if v is not None] + [0.05]
    lim = max(spans) * 1.1
    plot_w = width - left - right
    X = lambda v: left + plot_w * (v + lim) / (2 * lim)  # noqa: E731
    out = [
        f'<svg id="{fig_id}-svg" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" font-family="sans-serif">'
    ]
    out.append(f'<line x1="{X(0):.1f}" x2="{X(0):.1f}" y1="{top - 6}" y2="{height - 34}" stroke="#444"/>')
    for t in (-lim, -lim / 2, lim / 2, lim):
        out.append(f'<text x="{X(t):.1f}" y="{height - 20}" font-size="10" text-anchor="middle">{t:+.2f}</text>')
    out.append(f'<text x="{X(0):.1f}" y="{height - 20}" font-size="10" text-anchor="middle">0</text>')
    out.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 5}" font-size="11" text-anchor="middle">'
        "difference (a − b); green: better for a, red: worse, grey: CI crosses 0 or no direction</text>"
    )
    for i, (label, diff, lo, hi, better) in enumerate(rows):
        cy = top + i * row_h + row_h / 2
        out.append(f'<text x="{left - 8}" y="{cy + 4:.1f}" font-size="11" text-anchor="end">{_esc(label)}</text>')
        if diff is None:
            continue
        color = "#888"
        if lo is not None and hi is not None and better is not None and (lo > 0 or hi < 0):
            good = (lo > 0) == better
            color = "#2a8a3e" if good else "#c0392b"
        if lo is not None and hi is not None:
            out.append(
                f'<line x1="{X(lo):.1f}" x2="{X(hi):.1f}" y1="{cy:.1f}" y2="{cy:.1f}" '
                f'stroke="{color}" stroke-width="2"/>'
            )
        out.append(
            f'<circle cx="{X(diff):.1f}" cy="{cy:.1f}" r="4.5" fill="{color}"><title>{_esc(label)}: {diff:+.3f}'
            + (f" [{lo:+.3f}, {hi:+.3f}]" if lo is not None and hi is not None else "")
            + "</title></circle>"
        )
    out.append("</svg>")
    return "".join(out)


def risk_coverage_chart(
    fig_id: str,
    curves: list[tuple[str, list[tuple[float, float]]]],
    *,
    width: int = 760,
    height: int = 320,
    colors: dict[str, str] | None = None,
) -> str:
    """Accuracy (y) against coverage (x), one step line per arm: (name, [(coverage, accuracy), ...]).

    The y axis is fitted to the accuracies drawn (`fitted_axis`), its range written on it."""
    colors = colors or {}
    left, right, top, bottom = 64, 20, 24, 58
    plot_w, plot_h = width - left - right, height - top - bottom
    lo, hi, step = fitted_axis([acc for _, points in curves for _, acc in points])
    X = lambda v: left + plot_w * v  # noqa: E731
    Y = lambda v: top + plot_h * (1 - (v - lo) / (hi - lo))  # noqa: E731
    out = [
        f'<svg id="{fig_id}-svg" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" font-family="sans-serif">'
    ]
    ticks = round((hi - lo) / step)
    for i in range(ticks + 1):
        v = lo + i * step
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{Y(v):.1f}" y2="{Y(v):.1f}" stroke="#e3e3e3"/>')
        out.append(f'<text x="{left - 6}" y="{Y(v) + 4:.1f}" font-size="11" text-anchor="end">{v:.2f}</text>')
    for i in range(6):
        out.append(
            f'<text x="{X(i / 5):.1f}" y="{top + plot_h + 14}" font-size="11" text-anchor="middle">{20 * i}%</text>'
        )
    out.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 26}" font-size="12" text-anchor="middle">'
        "coverage (share of attempted answers given, surest first)</text>"
    )
    fitted = "" if (lo, hi) == (0.0, 1.0) else " (axis fitted)"
    out.append(_y_title(top + plot_h / 2, "accuracy of the answers given" + fitted))
    if not curves:
        out.append(
            f'<text x="{left + plot_w / 2:.1f}" y="{top + plot_h / 2:.1f}" font-size="12" '
            'text-anchor="middle">no arm in this run reports a confidence</text>'
        )
    for i, (name, points) in enumerate(curves):
        c = _color(colors, name, i)
        path, prev = [], None
        for cov, acc in sorted(points):
            if prev is None:
                path.append(f"M{X(0):.1f},{Y(acc):.1f}")  # the surest answers hold their accuracy down to 0
            path.append(f"L{X(cov):.1f},{Y(acc):.1f}")
            prev = acc
        out.append(f'<path d="{" ".join(path)}" fill="none" stroke="{c}" stroke-width="2"/>')
        for cov, acc in points:
            out.append(
                f'<circle cx="{X(cov):.1f}" cy="{Y(acc):.1f}" r="3.5" fill="{c}"><title>{_esc(name)}: '
                f"accuracy {acc:.3f} at {100 * cov:.0f}% coverage</title></circle>"
            )
    out.append(f'<line x1="{left}" x2="{width - right}" y1="{Y(lo):.1f}" y2="{Y(lo):.1f}" stroke="#444"/>')
    out += _legend([name for name, _ in curves], left, height - 8, colors)
    out.append("</svg>")
    return "".join(out)


def figures(report: dict[str, Any]) -> dict[str, str]:
    """Every figure of the HTML report as inline SVG, by figure id."""
    table = metrics_table(report)
    arms = report["arms"]
    colors = arm_colors(report)

    def est(metric: str, arm: str) -> tuple[float | None, float | None, float | None]:
        e = table.groups[arm].get(metric)
        return (e.value, e.lo, e.hi) if e else (None, None, None)

    acc = {(m, a): est(m, a) for m in ACCURACY_METRICS for a in arms}
    cons_metrics = [m for m in table.metrics if m.startswith("cons_")]
    cons = {(metric_title(table, m), a): est(m, a) for m in cons_metrics for a in arms}
    flips = {(metric_title(table, m), a): est(m, a) for m in FLIP_METRICS for a in arms}
    points = []
    for a in arms:
        x = report["totals"][a]["calls_per_answer"] or 0.0
        v, lo, hi = est("A_exp", a)
        points.append((a, x, v, lo, hi, est("A_strict", a)[0]))
    diff_rows = []
    for c in sorted_comparisons(report):
        if c.metric in HEADLINE_METRICS or c.metric.startswith("cons_"):
            info = table.info.get(c.metric)
            diff_rows.append(
                (
                    f"{metric_title(table, c.metric)}: {c.a} − {c.b}",
                    c.diff,
                    c.lo,
                    c.hi,
                    info.higher_is_better if info else None,
                )
            )
    return {
        "fig-accuracy": bar_chart(
            "fig-accuracy",
            list(ACCURACY_METRICS),
            arms,
            acc,
            y_max=1.0,
            y_title="share of questions",
            empty="No arm answered any question right: every accuracy is 0.",
            colors=colors,
        ),
        "fig-consistency": bar_chart(
            "fig-consistency",
            [metric_title(table, m) for m in cons_metrics] or ["(none)"],
            arms,
            cons,
            y_max=1.0,
            y_title="share of agreeing answer pairs",
            empty="No consistency to show: no measure was computed, or no two answers to a question agree.",
            colors=colors,
        ),
        "fig-flips": bar_chart(
            "fig-flips",
            [metric_title(table, m) for m in FLIP_METRICS],
            arms,
            flips,
            y_title="share of questions",
            empty="No answer flipped: every arm answered each question's wordings alike (every flip rate is 0).",
            colors=colors,
        ),
        "fig-cost": scatter_chart("fig-cost", points, colors=colors),
        "fig-diffs": diff_chart("fig-diffs", diff_rows),
        "fig-risk-coverage": risk_coverage_chart("fig-risk-coverage", _curves(report), colors=colors),
    }


def _curves(report: dict[str, Any]) -> list[tuple[str, list[tuple[float, float]]]]:
    """Each confident arm's risk–coverage points of its headline signal (`headline_signal`)."""
    out = []
    for arm, c in report.get("confidence", {}).items():
        name = headline_signal(c)
        if name is not None and c["signals"][name]["curve"]:
            out.append((arm, [(p["coverage"], p["accuracy"]) for p in c["signals"][name]["curve"]]))
    return out
