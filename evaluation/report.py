"""Reports of a run directory: report.json, a Markdown table, and a self-contained HTML page.

    report = write_reports("runs/NAME")      # reads config.json, items.jsonl, samples.jsonl
    print(markdown_table(report))

The metrics come from `evaluation.metrics.compute_metrics` over the per-sample log
(one group per arm), with bootstrap CIs over questions and paired comparisons of every
selfpara arm against every baseline arm on the same questions. The HTML page embeds
its figures as inline SVG (no scripts, no network, no plotting library).
"""

from __future__ import annotations

import html
import importlib.util
import json
import math
import os
import statistics
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from evaluation.runner import ITEMS_FILE, SAMPLES_FILE, latest_records, read_config, read_samples
from evaluation.schema import Item, SampleRecord
from selfpara.errors import ConfigError

DEFAULT_CONSISTENCY = "exact,rouge1"
ACCURACY_METRICS = ("A_orig", "A_exp", "A_any", "A_strict")
FLIP_METRICS = ("flip_cw", "flip_wc", "mismatch", "ND")
HEADLINE_METRICS = ("A_orig", "A_exp", "A_mv", "A_any", "A_strict", "mismatch", "flip_cw", "flip_wc", "ND")

FIGURES = {
    "fig-accuracy": "Accuracy per arm (95% bootstrap CI over questions)",
    "fig-consistency": "Answer consistency across the variants of a question (95% CI)",
    "fig-flips": "Flip rates, mismatch and conflicting sets (lower is steadier)",
    "fig-cost": "Accuracy against model calls per answered question",
    "fig-diffs": "Paired differences: selfpara minus each baseline (95% CI)",
}
"""Figure ids of the HTML report and their captions."""

TABLES = {
    "tbl-metrics": "Metrics per arm",
    "tbl-comparisons": "Paired comparisons",
    "tbl-totals": "Calls, tokens, cost and latency per arm",
    "tbl-diagnostics": "What the voting arms did",
    "tbl-categories": "Share of correct answers by category",
    "tbl-config": "Run configuration",
}
"""Table ids of the HTML report and their captions."""


# --- building -------------------------------------------------------------------------------


def _load_items(out: Path) -> list[Item]:
    from evaluation.datasets import load_items

    path = out / ITEMS_FILE
    return load_items(path) if path.exists() else []


def comparison_pairs(arms: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(selfpara arm, baseline arm) for every selfpara arm and every other arm; else first arm vs the rest."""
    labels = [a["label"] for a in arms]
    ours = [a["label"] for a in arms if a["arm"] == "selfpara"]
    if not ours:
        ours = labels[:1]
    return [(a, b) for a in ours for b in labels if b not in ours]


def _totals(records: list[SampleRecord], arms: list[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for arm in arms:
        rs = [r for r in records if r.arm == arm]
        lat = [r.latency_s for r in rs]
        n = len(rs)
        out[arm] = {
            "samples": n,
            "errors": sum(1 for r in rs if r.error),
            "correct": sum(1 for r in rs if r.label == "correct"),
            "not_attempted": sum(1 for r in rs if r.label == "not_attempted"),
            "calls": sum(r.calls for r in rs),
            "calls_per_answer": (sum(r.calls for r in rs) / n) if n else None,
            "prompt_tokens": sum(r.prompt_tokens for r in rs),
            "completion_tokens": sum(r.completion_tokens for r in rs),
            "tokens_per_answer": (sum(r.prompt_tokens + r.completion_tokens for r in rs) / n) if n else None,
            "cost": round(sum(r.cost for r in rs), 6),
            "latency_mean_s": statistics.fmean(lat) if lat else None,
            "latency_p50_s": statistics.median(lat) if lat else None,
        }
    return out


def _diagnostics(records: list[SampleRecord], arms: list[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for arm in arms:
        rs = [r for r in records if r.arm == arm and not r.error]
        # Runs saved before the rename store the vote share as details["agreement"].
        voted = [r for r in rs if "vote_share" in r.details or "agreement" in r.details]
        if not voted:
            continue
        shares = [r.details["vote_share"] if "vote_share" in r.details else r.details["agreement"] for r in voted]
        d: dict[str, Any] = {"answers": len(voted), "mean_vote_share": statistics.fmean(shares)}
        kept = [r.details["k_kept"] for r in voted if "k_kept" in r.details]
        if kept:
            d["mean_k_kept"] = statistics.fmean(kept)
            d["no_paraphrases"] = sum(1 for r in voted if "no_paraphrases" in r.details.get("flags", [])) / len(voted)
            d["original_won"] = sum(1 for r in voted if r.details.get("original_won")) / len(voted)
        if "samples" in voted[0].details:
            d["samples_per_answer"] = statistics.fmean(r.details["samples"] for r in voted)
        out[arm] = d
    return out


def _categories(records: list[SampleRecord], items: list[Item], arms: list[str]) -> dict[str, dict[str, Any]]:
    category = {i.id: (i.category or i.kind) for i in items}
    counts: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for r in records:
        c = counts[category.get(r.item_id, "?")][r.arm]
        c[0] += r.label == "correct"
        c[1] += 1
    return {
        cat: {arm: (by_arm[arm][0] / by_arm[arm][1] if by_arm[arm][1] else None) for arm in arms} | {
            "samples": max((by_arm[a][1] for a in arms), default=0)}
        for cat, by_arm in sorted(counts.items())
    }


def build_report(
    out: str | Path,
    *,
    consistency: str | None = DEFAULT_CONSISTENCY,
    n_boot: int = 1000,
    include_original: bool = True,
    nli: Any = None,
    complete_only: bool = True,
) -> dict[str, Any]:
    """The report of run directory `out` as a JSON-ready dict.

    For an unfinished run, `complete_only` restricts everything to the questions every arm
    answered in full (so arms are compared on the same questions); False reports all answers.
    """
    from evaluation.metrics import compute_metrics, rows_from_records

    out = Path(out).expanduser()
    if not out.is_dir():
        raise ConfigError(f"{out}: no such run directory")
    config = read_config(out)
    records = latest_records(read_samples(out / SAMPLES_FILE))
    if not records:
        raise ConfigError(f"{out / SAMPLES_FILE}: the run has no samples yet")
    items = _load_items(out)
    arms_cfg: list[dict[str, Any]] = config.get("arms") or [{"arm": a, "label": a} for a in config["bench"]["arms"]]
    labels = [a["label"] for a in arms_cfg if any(r.arm == a["label"] for r in records)]
    present = [a for a in arms_cfg if a["label"] in labels]
    pairs = comparison_pairs(present)
    notes: list[str] = []
    all_records = records
    expected = int(config.get("variants", 0)) * len(arms_cfg)
    run_complete = expected > 0 and len(records) >= expected and not any(r.error for r in records)
    left_out: list[str] = []
    if items and not run_complete and complete_only:
        # An unfinished run: compare arms on the same questions, those every arm answered in full.
        answered = {(r.item_id, r.variant_id, r.arm) for r in records if r.error is None}
        full = {i.id for i in items if all((i.id, v.id, a) in answered for v in i.variants for a in labels)}
        left_out = sorted({r.item_id for r in records} - full)
        records = [r for r in records if r.item_id in full]
        if not records:
            raise ConfigError(f"{out}: no question has been answered in full by every arm yet")
        if left_out:
            notes.append(
                f"unfinished run: metrics, totals and comparisons cover the {len(full)} questions every arm "
                f"answered in full; {len(left_out)} partly answered question(s) are left out"
            )
    if consistency == DEFAULT_CONSISTENCY and importlib.util.find_spec("rouge_score") is None:
        consistency = "exact"  # the default must not fail a finished run; an explicit rouge1 still does
        notes.append("Cons(rouge1) left out: rouge-score is not installed (pip install 'selfpara[eval]')")
    table = compute_metrics(
        rows_from_records(records, group_by="arm"),
        include_original=include_original,
        consistency=consistency,
        nli=nli,
        n_boot=n_boot,
        seed=int(config["bench"].get("seed", 0)),
        compare=pairs or None,
    )
    table.notes.extend(notes)
    return {
        "run": str(out),
        "generated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "config": config,
        "arms": labels,
        "pairs": [list(p) for p in pairs],
        "summary": {
            "items": len(items) or len({r.item_id for r in records}),
            "items_reported": len({r.item_id for r in records}),
            "items_left_out": len(left_out),
            "variants": int(config.get("variants", 0)),
            "samples": len(all_records),
            "samples_reported": len(records),
            "samples_expected": expected,
            "complete": run_complete,
            "errors": sum(1 for r in all_records if r.error),
            "include_original": include_original,
            "consistency": consistency,
        },
        "metrics": table.model_dump(mode="json"),
        "totals": _totals(records, labels),
        "diagnostics": _diagnostics(records, labels),
        "categories": _categories(records, items, labels),
    }


def write_reports(out: str | Path, **options: Any) -> dict[str, Any]:
    """Build the report of `out` and write report.json, report.md and report.html there."""
    out = Path(out).expanduser()
    report = build_report(out, **options)
    _write(out / "report.json", json.dumps(report, indent=2, default=str) + "\n")
    _write(out / "report.md", markdown_report(report))
    _write(out / "report.html", render_html(report))
    return report


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def load_report(out: str | Path) -> dict[str, Any]:
    path = Path(out).expanduser() / "report.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no report yet; run `selfpara report {out}`") from None


# --- Markdown -------------------------------------------------------------------------------


def _table(report: dict[str, Any]) -> Any:
    from evaluation.metrics import MetricsTable

    return MetricsTable.model_validate(report["metrics"])


def _f(x: float | None, digits: int = 3, signed: bool = False) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


def _title(table: Any, metric: str) -> str:
    return table.info[metric].title if metric in table.info else metric


def metric_rows(report: dict[str, Any]) -> list[str]:
    """Metrics in report order: headline metrics, consistency, then the rest."""
    table = _table(report)
    head = [m for m in HEADLINE_METRICS if m in table.metrics]
    cons = [m for m in table.metrics if m.startswith("cons_")]
    rest = [m for m in table.metrics if m not in head and m not in cons]
    return head + cons + rest


def markdown_table(report: dict[str, Any], digits: int = 3) -> str:
    """The terminal table: metrics × arms with CIs, paired differences, and totals."""
    table = _table(report)
    arms = report["arms"]
    s = report["summary"]
    lines = [
        f"{s.get('items_reported', s['items'])} questions, {s.get('samples_reported', s['samples'])} answers"
        + ("" if s["complete"] else f" (incomplete run: {s['samples']} of {s['samples_expected']} answers so far)")
        + "; values are fractions with 95% bootstrap CIs over questions",
        "",
        "| metric | " + " | ".join(arms) + " |",
        "|---|" + "---|" * len(arms),
    ]
    for metric in metric_rows(report):
        lines.append(f"| {_title(table, metric)} | " + " | ".join(table.groups[a][metric].fmt(digits) for a in arms) + " |")
    pairs = [tuple(p) for p in report.get("pairs", [])]
    if table.comparisons and pairs:
        lines += ["", "Paired differences a − b over the same questions: diff [95% CI] (p)", "",
                  "| metric | " + " | ".join(f"{a} − {b}" for a, b in pairs) + " |",
                  "|---|" + "---|" * len(pairs)]
        for metric in metric_rows(report):
            if metric not in HEADLINE_METRICS and not metric.startswith("cons_"):
                continue
            cells = []
            for a, b in pairs:
                c = table.comparison(metric, a, b)
                if c is None or c.diff is None:
                    cells.append("–")
                else:
                    p = "" if c.p_value is None else f" (p={c.p_value:.2g})"
                    cells.append(f"{c.diff:+.{digits}f} [{_f(c.lo, digits, True)}, {_f(c.hi, digits, True)}]{p}")
            lines.append(f"| {_title(table, metric)} | " + " | ".join(cells) + " |")
    lines += ["", "| arm | answers | errors | calls | calls/answer | tokens | tokens/answer | cost $ | latency p50 s |",
              "|---|---|---|---|---|---|---|---|---|"]
    for arm in arms:
        t = report["totals"][arm]
        lines.append(
            f"| {arm} | {t['samples']} | {t['errors']} | {t['calls']} | {_f(t['calls_per_answer'], 2)} | "
            f"{t['prompt_tokens'] + t['completion_tokens']} | {_f(t['tokens_per_answer'], 0)} | {t['cost']:.4f} | "
            f"{_f(t['latency_p50_s'], 2)} |"
        )
    for note in table.notes:
        lines.append(f"\nnote: {note}")
    return "\n".join(lines)


def markdown_report(report: dict[str, Any]) -> str:
    bench = report["config"]["bench"]
    head = [
        f"# selfpara bench: {bench['dataset']} on {bench['model']}",
        "",
        f"Run `{report['run']}`, arms {', '.join(report['arms'])}, k={bench['k']}, variants {bench['variants']}, "
        f"seed {bench['seed']}. Generated {report['generated']}.",
        "",
    ]
    return "\n".join(head) + markdown_table(report) + "\n"


def sorted_comparisons(report: dict[str, Any]) -> list[Any]:
    """Comparisons in pair order (as the run lists its arms), then metric order."""
    table = _table(report)
    pair_index = {tuple(p): i for i, p in enumerate(report.get("pairs", []))}
    order = {m: i for i, m in enumerate(metric_rows(report))}
    return sorted(table.comparisons, key=lambda c: (pair_index.get((c.a, c.b), 99), order.get(c.metric, 99)))


# --- SVG figures -------------------------------------------------------------------------------

PALETTE = ["#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C"]


def _esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _legend(series: list[str], x: float, y: float) -> list[str]:
    parts, cx = [], x
    for i, name in enumerate(series):
        parts.append(f'<rect x="{cx:.1f}" y="{y - 10:.1f}" width="12" height="12" fill="{_color(i)}"/>')
        parts.append(f'<text x="{cx + 16:.1f}" y="{y:.1f}" font-size="12">{_esc(name)}</text>')
        cx += 28 + 7.2 * len(name)
    return parts


def _nice_max(values: list[float]) -> float:
    top = max([v for v in values if v is not None] + [0.0])
    if top <= 0:
        return 1.0
    for step in (0.05, 0.1, 0.2, 0.25, 0.5, 1.0):
        if top <= step * 5:
            return min(1.0, math.ceil(top / step) * step) if top <= 1.0 else math.ceil(top / step) * step
    return math.ceil(top)


def bar_chart(
    fig_id: str,
    categories: list[str],
    series: list[str],
    values: dict[tuple[str, str], tuple[float | None, float | None, float | None]],
    *,
    y_max: float | None = None,
    width: int = 760,
    height: int = 300,
) -> str:
    """Grouped bars: one group per category, one bar per series, CI whiskers; inline SVG."""
    left, right, top, bottom = 48, 12, 30, 46
    plot_w, plot_h = width - left - right, height - top - bottom
    tops = [v[2] if v[2] is not None else (v[0] or 0.0) for v in values.values()]
    ymax = y_max if y_max is not None else _nice_max(tops)
    y = lambda v: top + plot_h * (1 - min(max(v, 0.0), ymax) / ymax)  # noqa: E731
    out = [f'<svg id="{fig_id}-svg" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" font-family="sans-serif">']
    for i in range(6):
        v = ymax * i / 5
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#e3e3e3"/>')
        out.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" font-size="11" text-anchor="end">{v:.2f}</text>')
    group_w = plot_w / max(1, len(categories))
    bar_w = min(42.0, group_w * 0.8 / max(1, len(series)))
    for gi, cat in enumerate(categories):
        gx = left + gi * group_w + (group_w - bar_w * len(series)) / 2
        for si, name in enumerate(series):
            value, lo, hi = values.get((cat, name), (None, None, None))
            x = gx + si * bar_w
            if value is None:
                out.append(f'<text x="{x + bar_w / 2:.1f}" y="{y(0) - 4:.1f}" font-size="10" text-anchor="middle">–</text>')
                continue
            out.append(
                f'<rect x="{x + 1:.1f}" y="{y(value):.1f}" width="{bar_w - 2:.1f}" height="{y(0) - y(value):.1f}" '
                f'fill="{_color(si)}"><title>{_esc(name)} {_esc(cat)}: {value:.3f}'
                + (f" [{lo:.3f}, {hi:.3f}]" if lo is not None and hi is not None else "")
                + "</title></rect>"
            )
            if lo is not None and hi is not None:
                cx = x + bar_w / 2
                out.append(f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{y(lo):.1f}" y2="{y(hi):.1f}" stroke="#222"/>')
                for yy in (lo, hi):
                    out.append(f'<line x1="{cx - 4:.1f}" x2="{cx + 4:.1f}" y1="{y(yy):.1f}" y2="{y(yy):.1f}" stroke="#222"/>')
            label_y = y(hi if hi is not None else value) - 4
            out.append(f'<text x="{x + bar_w / 2:.1f}" y="{label_y:.1f}" font-size="9" text-anchor="middle">{value:.2f}</text>')
        out.append(f'<text x="{left + gi * group_w + group_w / 2:.1f}" y="{height - bottom + 16:.1f}" font-size="12" '
                   f'text-anchor="middle">{_esc(cat)}</text>')
    out.append(f'<line x1="{left}" x2="{width - right}" y1="{y(0):.1f}" y2="{y(0):.1f}" stroke="#444"/>')
    out += _legend(series, left, height - 8)
    out.append("</svg>")
    return "".join(out)


def scatter_chart(
    fig_id: str,
    points: list[tuple[str, float, float | None, float | None, float | None, float | None]],
    *,
    width: int = 760,
    height: int = 320,
) -> str:
    """Accuracy (y, with CI) against calls per answer (x): (name, x, A_exp, lo, hi, A_strict)."""
    left, right, top, bottom = 52, 20, 24, 58
    plot_w, plot_h = width - left - right, height - top - bottom
    xmax = max([p[1] for p in points] + [1.0]) * 1.15
    ys = [v for p in points for v in (p[2], p[4], p[5]) if v is not None]
    ymax = _nice_max(ys)
    X = lambda v: left + plot_w * v / xmax  # noqa: E731
    Y = lambda v: top + plot_h * (1 - v / ymax)  # noqa: E731
    out = [f'<svg id="{fig_id}-svg" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" font-family="sans-serif">']
    for i in range(6):
        v = ymax * i / 5
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{Y(v):.1f}" y2="{Y(v):.1f}" stroke="#e3e3e3"/>')
        out.append(f'<text x="{left - 6}" y="{Y(v) + 4:.1f}" font-size="11" text-anchor="end">{v:.2f}</text>')
    step = max(1, math.ceil(xmax / 8))
    for t in range(0, int(xmax) + 1, step):
        out.append(f'<line x1="{X(t):.1f}" x2="{X(t):.1f}" y1="{top}" y2="{top + plot_h}" stroke="#f0f0f0"/>')
        out.append(f'<text x="{X(t):.1f}" y="{top + plot_h + 14}" font-size="11" text-anchor="middle">{t}</text>')
    out.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 26}" font-size="12" text-anchor="middle">'
               "model calls per answered question (mean)</text>")
    seen_x: dict[float, int] = {}
    for i, (name, x, acc, lo, hi, strict) in enumerate(points):
        if acc is None:
            continue
        c = _color(i)
        stack = seen_x.get(round(x, 1), 0)  # arms with the same cost: stack their labels
        seen_x[round(x, 1)] = stack + 1
        if lo is not None and hi is not None:
            out.append(f'<line x1="{X(x):.1f}" x2="{X(x):.1f}" y1="{Y(lo):.1f}" y2="{Y(hi):.1f}" stroke="{c}" stroke-width="2"/>')
        out.append(f'<circle cx="{X(x):.1f}" cy="{Y(acc):.1f}" r="6" fill="{c}"><title>{_esc(name)}: A_exp {acc:.3f} '
                   f'at {x:.2f} calls</title></circle>')
        if strict is not None:
            out.append(f'<rect x="{X(x) - 5:.1f}" y="{Y(strict) - 5:.1f}" width="10" height="10" fill="none" '
                       f'stroke="{c}" stroke-width="2"><title>{_esc(name)}: A_strict {strict:.3f}</title></rect>')
        out.append(f'<text x="{X(x) + 9:.1f}" y="{Y(acc) - 8 - 13 * stack:.1f}" font-size="11" fill="{c}">'
                   f"{_esc(name)}</text>")
    out.append(f'<line x1="{left}" x2="{width - right}" y1="{top + plot_h}" y2="{top + plot_h}" stroke="#444"/>')
    out.append(f'<text x="{left}" y="{height - 6}" font-size="11">● A_exp with 95% CI   □ A_strict</text>')
    out.append("</svg>")
    return "".join(out)


def diff_chart(fig_id: str, rows: list[tuple[str, float | None, float | None, float | None, bool | None]],
               *, width: int = 760) -> str:
    """Forest plot of paired differences: (label, diff, lo, hi, higher_is_better)."""
    row_h, left, right, top = 22, 300, 30, 20
    height = top + row_h * max(1, len(rows)) + 40
    spans = [abs(v) for r in rows for v in r[1:4] if v is not None] + [0.05]
    lim = max(spans) * 1.1
    plot_w = width - left - right
    X = lambda v: left + plot_w * (v + lim) / (2 * lim)  # noqa: E731
    out = [f'<svg id="{fig_id}-svg" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" font-family="sans-serif">']
    out.append(f'<line x1="{X(0):.1f}" x2="{X(0):.1f}" y1="{top - 6}" y2="{height - 34}" stroke="#444"/>')
    for t in (-lim, -lim / 2, lim / 2, lim):
        out.append(f'<text x="{X(t):.1f}" y="{height - 20}" font-size="10" text-anchor="middle">{t:+.2f}</text>')
    out.append(f'<text x="{X(0):.1f}" y="{height - 20}" font-size="10" text-anchor="middle">0</text>')
    out.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 5}" font-size="11" text-anchor="middle">'
               "difference (a − b); green: better for a, red: worse, grey: CI crosses 0 or no direction</text>")
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
            out.append(f'<line x1="{X(lo):.1f}" x2="{X(hi):.1f}" y1="{cy:.1f}" y2="{cy:.1f}" stroke="{color}" stroke-width="2"/>')
        out.append(f'<circle cx="{X(diff):.1f}" cy="{cy:.1f}" r="4.5" fill="{color}"><title>{_esc(label)}: {diff:+.3f}'
                   + (f" [{lo:+.3f}, {hi:+.3f}]" if lo is not None and hi is not None else "") + "</title></circle>")
    out.append("</svg>")
    return "".join(out)


def figures(report: dict[str, Any]) -> dict[str, str]:
    """Every figure of the HTML report as inline SVG, by figure id."""
    table = _table(report)
    arms = report["arms"]

    def est(metric: str, arm: str) -> tuple[float | None, float | None, float | None]:
        e = table.groups[arm].get(metric)
        return (e.value, e.lo, e.hi) if e else (None, None, None)

    acc = {(m, a): est(m, a) for m in ACCURACY_METRICS for a in arms}
    cons_metrics = [m for m in table.metrics if m.startswith("cons_")]
    cons = {(_title(table, m), a): est(m, a) for m in cons_metrics for a in arms}
    flips = {(_title(table, m), a): est(m, a) for m in FLIP_METRICS for a in arms}
    points = []
    for a in arms:
        x = report["totals"][a]["calls_per_answer"] or 0.0
        v, lo, hi = est("A_exp", a)
        points.append((a, x, v, lo, hi, est("A_strict", a)[0]))
    diff_rows = []
    for c in sorted_comparisons(report):
        if c.metric in HEADLINE_METRICS or c.metric.startswith("cons_"):
            info = table.info.get(c.metric)
            diff_rows.append((f"{_title(table, c.metric)}: {c.a} − {c.b}", c.diff, c.lo, c.hi,
                              info.higher_is_better if info else None))
    return {
        "fig-accuracy": bar_chart("fig-accuracy", list(ACCURACY_METRICS), arms, acc, y_max=1.0),
        "fig-consistency": bar_chart("fig-consistency", [_title(table, m) for m in cons_metrics] or ["(none)"], arms,
                                     cons, y_max=1.0),
        "fig-flips": bar_chart("fig-flips", [_title(table, m) for m in FLIP_METRICS], arms, flips),
        "fig-cost": scatter_chart("fig-cost", points),
        "fig-diffs": diff_chart("fig-diffs", diff_rows),
    }


# --- HTML ------------------------------------------------------------------------------------

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1100px;color:#222;padding:0 16px}
h1{font-size:22px;margin-bottom:4px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd;padding-bottom:4px}
.meta{color:#555;font-size:13px}table{border-collapse:collapse;font-size:12.5px;margin:8px 0}
th,td{border:1px solid #d8d8d8;padding:4px 8px;text-align:right;vertical-align:top;white-space:nowrap}td.desc{white-space:normal;text-align:left;color:#555}th{background:#f4f4f4}
td:first-child,th:first-child{text-align:left}figure{margin:12px 0}figcaption{font-size:13px;color:#444;margin-bottom:4px}
.good{color:#2a8a3e;font-weight:600}.bad{color:#c0392b;font-weight:600}.warn{background:#fff4d6;padding:8px;border:1px solid #eed27a}
pre{background:#f7f7f7;padding:8px;font-size:12px;overflow:auto}
"""


def _cell(e: Any, digits: int = 3) -> str:
    return _esc(e.fmt(digits)) if e is not None else "–"


def render_html(report: dict[str, Any]) -> str:
    """The self-contained HTML report (inline CSS and SVG; no scripts, no external resources)."""
    table = _table(report)
    arms = report["arms"]
    bench = report["config"]["bench"]
    s = report["summary"]
    figs = figures(report)
    parts: list[str] = []
    title = f"selfpara bench: {bench['dataset']} on {bench['model']}"
    parts.append(f"<h1>{_esc(title)}</h1>")
    parts.append(
        f'<p class="meta">Run <code>{_esc(report["run"])}</code> · arms {_esc(", ".join(arms))} · k={bench["k"]} · '
        f"variants {_esc(bench['variants'])} · {s.get('items_reported', s['items'])} questions · "
        f"{s.get('samples_reported', s['samples'])} answers · seed {bench['seed']} · "
        f"generated {_esc(report['generated'])}</p>"
    )
    if not s["complete"]:
        parts.append(f'<p class="warn">Incomplete run: {s["samples"]} of {s["samples_expected"]} answers '
                     f"({s['errors']} failed). Rerun the same bench command to finish it.</p>")
    parts.append('<p class="meta">Values are fractions in [0, 1] with 95% percentile-bootstrap CIs over questions '
                 f"({table.n_boot} resamples); A_any/A_strict over "
                 + ("the original and its paraphrases" if table.include_original else "the paraphrases only")
                 + ". Paired comparisons use the same questions for both arms (McNemar for 0/1 metrics, "
                 "paired permutation otherwise).</p>")
    # figures
    for fig_id, caption in FIGURES.items():
        parts.append(f'<figure id="{fig_id}"><figcaption>{_esc(caption)}</figcaption>{figs[fig_id]}</figure>')
        if fig_id == "fig-accuracy":
            parts.append(_metrics_table(report, table, arms))
            parts.append(_comparisons_table(report, table))
    parts.append(_totals_table(report, arms))
    parts.append(_diagnostics_table(report))
    parts.append(_categories_table(report, arms))
    parts.append(f'<h2 id="{"tbl-config"}-h">{TABLES["tbl-config"]}</h2><table id="tbl-config">'
                 + "".join(f"<tr><td>{_esc(k)}</td><td>{_esc(v)}</td></tr>" for k, v in bench.items())
                 + "</table>")
    for note in table.notes:
        parts.append(f'<p class="meta">note: {_esc(note)}</p>')
    body = "\n".join(parts)
    return (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{_esc(title)}</title>"
            f"<style>{_CSS}</style></head><body>{body}</body></html>")


def _metrics_table(report: dict[str, Any], table: Any, arms: list[str]) -> str:
    rows = [f'<h2 id="tbl-metrics-h">{TABLES["tbl-metrics"]}</h2><table id="tbl-metrics"><tr><th>metric</th>'
            + "".join(f"<th>{_esc(a)}</th>" for a in arms) + "<th>what it is</th></tr>"]
    for metric in metric_rows(report):
        info = table.info.get(metric)
        rows.append(f"<tr><td>{_esc(_title(table, metric))}</td>"
                    + "".join(f"<td>{_cell(table.groups[a].get(metric))}</td>" for a in arms)
                    + f"<td class=\"desc\">{_esc(info.description if info else '')}</td></tr>")
    rows.append("</table>")
    return "".join(rows)


def _comparisons_table(report: dict[str, Any], table: Any) -> str:
    """Metrics × pairs: difference [95% CI] and p, coloured where the CI excludes 0 (green better, red worse)."""
    pairs = [tuple(p) for p in report.get("pairs", [])]
    rows = [f'<h2 id="tbl-comparisons-h">{TABLES["tbl-comparisons"]}</h2>',
            '<p class="meta">a − b over the questions both arms answered: difference [95% CI] (p). '
            "Every metric's comparison, with its test and n, is in report.json.</p>",
            '<table id="tbl-comparisons"><tr><th>metric</th>'
            + "".join(f"<th>{_esc(a)} − {_esc(b)}</th>" for a, b in pairs) + "</tr>"]
    for metric in metric_rows(report):
        if metric not in HEADLINE_METRICS and not metric.startswith("cons_"):
            continue
        info = table.info.get(metric)
        cells = []
        for a, b in pairs:
            c = table.comparison(metric, a, b)
            if c is None or c.diff is None:
                cells.append("<td>–</td>")
                continue
            cls = ""
            if c.lo is not None and c.hi is not None and info and info.higher_is_better is not None:
                if c.lo > 0 or c.hi < 0:
                    cls = "good" if (c.lo > 0) == info.higher_is_better else "bad"
            p = "" if c.p_value is None else f" (p={c.p_value:.2g})"
            cells.append(f'<td class="{cls}">{c.diff:+.3f} [{_f(c.lo, 3, True)}, {_f(c.hi, 3, True)}]{p}</td>')
        rows.append(f"<tr><td>{_esc(_title(table, metric))}</td>" + "".join(cells) + "</tr>")
    if not pairs:
        rows.append('<tr><td>one arm only: nothing to compare</td></tr>')
    rows.append("</table>")
    return "".join(rows)


def _totals_table(report: dict[str, Any], arms: list[str]) -> str:
    rows = [f'<h2 id="tbl-totals-h">{TABLES["tbl-totals"]}</h2><table id="tbl-totals"><tr><th>arm</th><th>answers</th>'
            "<th>errors</th><th>calls</th><th>calls / answer</th><th>prompt tokens</th><th>completion tokens</th>"
            "<th>tokens / answer</th><th>cost $</th><th>latency mean s</th><th>latency p50 s</th></tr>"]
    for a in arms:
        t = report["totals"][a]
        rows.append(
            f"<tr><td>{_esc(a)}</td><td>{t['samples']}</td><td>{t['errors']}</td><td>{t['calls']}</td>"
            f"<td>{_f(t['calls_per_answer'], 2)}</td><td>{t['prompt_tokens']}</td><td>{t['completion_tokens']}</td>"
            f"<td>{_f(t['tokens_per_answer'], 0)}</td><td>{t['cost']:.4f}</td><td>{_f(t['latency_mean_s'], 2)}</td>"
            f"<td>{_f(t['latency_p50_s'], 2)}</td></tr>"
        )
    rows.append("</table>")
    return "".join(rows)


def _diagnostics_table(report: dict[str, Any]) -> str:
    diag = report["diagnostics"]
    rows = [f'<h2 id="tbl-diagnostics-h">{TABLES["tbl-diagnostics"]}</h2><table id="tbl-diagnostics"><tr><th>arm</th>'
            "<th>answers</th><th>mean vote share</th><th>mean paraphrases kept</th><th>no paraphrase kept</th>"
            "<th>original's answer won</th><th>samples / answer</th></tr>"]
    for arm, d in diag.items():
        rows.append(
            f"<tr><td>{_esc(arm)}</td><td>{d['answers']}</td><td>{_f(d.get('mean_vote_share'))}</td>"
            f"<td>{_f(d.get('mean_k_kept'), 2)}</td><td>{_f(d.get('no_paraphrases'))}</td>"
            f"<td>{_f(d.get('original_won'))}</td><td>{_f(d.get('samples_per_answer'), 1)}</td></tr>"
        )
    if not diag:
        rows.append('<tr><td colspan="7">no voting arm in this run</td></tr>')
    rows.append("</table>")
    return "".join(rows)


def _categories_table(report: dict[str, Any], arms: list[str]) -> str:
    rows = [f'<h2 id="tbl-categories-h">{TABLES["tbl-categories"]}</h2><table id="tbl-categories"><tr><th>category</th>'
            "<th>answers per arm</th>" + "".join(f"<th>{_esc(a)}</th>" for a in arms) + "</tr>"]
    for cat, by_arm in report["categories"].items():
        rows.append(f"<tr><td>{_esc(cat)}</td><td>{by_arm['samples']}</td>"
                    + "".join(f"<td>{_f(by_arm.get(a))}</td>" for a in arms) + "</tr>")
    rows.append("</table>")
    return "".join(rows)


def records_of(out: str | Path) -> list[SampleRecord]:
    """The latest record per (item, variant, arm) of a run directory."""
    return latest_records(read_samples(Path(out).expanduser() / SAMPLES_FILE))


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
