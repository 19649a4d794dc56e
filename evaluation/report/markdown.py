"""The report as Markdown: the terminal table (metrics × arms, paired differences, totals) and report.md."""

from __future__ import annotations

from typing import Any

from evaluation.report.data import HEADLINE_METRICS, fmt_number, metric_rows, metric_title, metrics_table


def markdown_table(report: dict[str, Any], digits: int = 3) -> str:
    """The terminal table: metrics × arms with CIs, paired differences, and totals."""
    table = metrics_table(report)
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
        cells = [table.groups[a][metric].fmt(digits) for a in arms]
        lines.append(f"| {metric_title(table, metric)} | " + " | ".join(cells) + " |")
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
                    ci = f"[{fmt_number(c.lo, digits, True)}, {fmt_number(c.hi, digits, True)}]"
                    cells.append(f"{c.diff:+.{digits}f} {ci}{p}")
            lines.append(f"| {metric_title(table, metric)} | " + " | ".join(cells) + " |")
    lines += ["", "| arm | answers | errors | calls | calls/answer | tokens | tokens/answer | cost $ | latency p50 s |",
              "|---|---|---|---|---|---|---|---|---|"]
    for arm in arms:
        t = report["totals"][arm]
        lines.append(
            f"| {arm} | {t['samples']} | {t['errors']} | {t['calls']} | {fmt_number(t['calls_per_answer'], 2)} | "
            f"{t['prompt_tokens'] + t['completion_tokens']} | {fmt_number(t['tokens_per_answer'], 0)} | "
            f"{t['cost']:.4f} | "
            f"{fmt_number(t['latency_p50_s'], 2)} |"
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
