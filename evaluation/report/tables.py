"""The report's tables as formatted rows, shared by report.md and report.html so both say the same.

Each builder returns a `Section`: an id, a caption, a header, rows of strings and a note;
`markdown` lays them out as pipe tables, `page` (through the template) as HTML tables.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evaluation.metrics.signals import PENALTIES
from evaluation.report.data import (
    HEADLINE_METRICS,
    fmt_number,
    headline_signal,
    metric_rows,
    metric_title,
    metrics_table,
    significance,
)

SIGNAL_TITLES = {
    "vote_share": "vote share",
    "confidence": "confidence",
    "-entropy": "−semantic entropy",
    "-entropy_normalized": "−normalized entropy",
}


TITLES = {
    "tbl-totals": "Calls, tokens, cost and latency per arm",
    "tbl-abstention": "Answered, not attempted, and scores in which abstaining beats a wrong answer",
    "tbl-selective": "Confidence side by side: each arm's own confidence, at the calls it spent",
    "tbl-confidence": "Confidence as a predictor of correctness",
    "tbl-policy": "A low-agreement policy: abstain below a vote-share threshold",
    "tbl-risk-coverage": "Risk–coverage: answering only answers at least this sure",
    "tbl-diagnostics": "What the voting arms did",
    "tbl-categories": "Share of correct answers by category",
    "tbl-environment": "Environment of the run",
}
"""Ids and captions of the shared tables, in report order."""


@dataclass
class Section:
    """One table of the report."""

    id: str
    title: str
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    note: str = ""
    empty: str = "nothing to show"


def comparison_cells(report: dict[str, Any], digits: int = 3) -> list[tuple[str, list[tuple[str, str]]]]:
    """Headline metrics × pairs: (metric title, [(mark, "diff [CI] (p)"), ...]).

    The mark is `data.significance`: good/bad only where the CI excludes 0 AND p < 1 − confidence;
    "mixed" where only one of them says so (the text then says they disagree); "" otherwise.
    """
    table = metrics_table(report)
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
                cells.append(("", "–"))
                continue
            mark = significance(c, info.higher_is_better if info else None, 1.0 - table.confidence)
            p = "" if c.p_value is None else f" (p={c.p_value:.2g})"
            text = c.fmt(digits) + p
            cells.append((mark, text + (" (CI and test disagree)" if mark == "mixed" else "")))
        rows.append((metric_title(table, metric), cells))
    return rows


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def totals_section(report: dict[str, Any]) -> Section:
    rows = []
    for a in report["arms"]:
        t = report["totals"][a]
        rows.append(
            [
                a,
                f"{t['samples']} ({t['errors']})",
                str(t["calls"]),
                fmt_number(t["calls_per_answer"], 2),
                f"{t['prompt_tokens']} / {t['completion_tokens']}",
                fmt_number(t["tokens_per_answer"], 0),
                f"{t['cost']:.4f}",
                f"{t.get('latency_samples', t['samples'])} ({t.get('cached_samples', 0)})",
                f"{fmt_number(t['latency_p50_s'], 2)} ({fmt_number(t['latency_mean_s'], 2)}, "
                f"{fmt_number(t.get('latency_p90_s'), 2)})",
                f"{fmt_number(t.get('model_mean_s'), 2)} / {fmt_number(t.get('queue_mean_s'), 2)}",
            ]
        )
    # Fewer, two-figure columns than one per figure: the table fits the page's width.
    return Section(
        "tbl-totals",
        TITLES["tbl-totals"],
        [
            "arm",
            "answers (errors)",
            "calls",
            "calls / answer",
            "tokens in / out",
            "tokens / answer",
            "cost $",
            "timed answers (cached)",
            "latency s: p50 (mean, p90)",
            "model / queued s per answer",
        ],
        rows,
        note="Latency is an answer's wall time; it covers only answers that made every model call (timed "
        "answers): a cached answer (a call answered from an earlier run's call cache) took no model time for it "
        "and is counted under cached instead; an answer that shared a call another arm of this run made is timed. "
        "It splits into the model's work and the wait in a local model's queue behind other "
        "answers' calls (mean seconds per answer, summed over its calls, which may run at once and then add up to "
        "more than its latency); what is left is the wait for a free call slot. A remote server's own queue "
        "counts as model time.",
    )


def abstention_section(report: dict[str, Any]) -> Section:
    penalties = [p for p in PENALTIES if any(f"score@{p:g}" in s for s in report.get("abstention", {}).values())]
    rows = []
    for a in report["arms"]:
        s = report.get("abstention", {}).get(a)
        if not s:
            continue
        rows.append(
            [
                a,
                str(s["answers"]),
                str(s["attempted"]),
                str(s["not_attempted"]),
                _pct(s["attempted_rate"]),
                fmt_number(s["overall_correct"]),
                fmt_number(s["correct_given_attempted"]),
                fmt_number(s["f_score"]),
                *(fmt_number(s.get(f"score@{p:g}"), 3) for p in penalties),
            ]
        )
    return Section(
        "tbl-abstention",
        TITLES["tbl-abstention"],
        [
            "arm",
            "answers",
            "attempted",
            "not attempted",
            "attempted %",
            "correct (overall)",
            "correct given attempted",
            "F",
            *(f"score p={p:g}" for p in penalties),
        ],
        rows,
        note="SimpleQA-style: F is the harmonic mean of correct (overall) and correct given attempted; "
        "score p = (correct − wrong·p/(1−p)) / answers, so answering pays only above p chance of being right "
        "and an abstention scores 0 where a wrong answer scores below 0. Failed answers are left out.",
    )


def _signal_cells(s: dict[str, Any], coverages: list[str]) -> list[str]:
    """AUROC [CI], PRR, accuracy at each coverage and ECE of one signal's summary, formatted."""
    auroc = fmt_number(s["auroc"])
    if s["auroc"] is not None and s["lo"] is not None:
        auroc += f" [{s['lo']:.3f}, {s['hi']:.3f}]"
    return [
        auroc,
        fmt_number(s.get("prr")),
        *(fmt_number(s["coverage"].get(k)) for k in coverages),
        fmt_number(s.get("ece")),
    ]


def _coverages(report: dict[str, Any]) -> list[str]:
    return next((list(s["coverage"]) for c in report.get("confidence", {}).values() for s in c["signals"].values()), [])


_SIGNAL_NOTE = (
    "AUROC: the chance that a correct answer is surer than a wrong one (ties count ½; 0.5 = no signal), CI by "
    "bootstrap over questions. PRR: the area between the accuracy-when-rejecting curve and random, over the "
    "oracle's (1 = orders answers as if it knew which are right, 0 = chance). Accuracy at c% coverage: answering "
    "only the surest c% of the attempted answers (ties at the cut at their mean). ECE: the answers in 10 "
    "equal-width confidence bins, each bin's |accuracy − mean confidence| weighted by its share (for a signal "
    "in [0, 1] only)."
)


def _coverage_titles(coverages: list[str]) -> list[str]:
    return [f"accuracy at {100 * float(k):.0f}% coverage" for k in coverages]


def selective_section(report: dict[str, Any]) -> Section:
    """One row per arm: its own confidence (`headline_signal`) and the calls per answer it spent."""
    coverages = _coverages(report)
    rows = []
    for arm, c in report.get("confidence", {}).items():
        name = headline_signal(c)
        if name is None:
            continue
        calls = report["totals"].get(arm, {}).get("calls_per_answer")
        rows.append(
            [
                arm,
                SIGNAL_TITLES.get(name, name),
                fmt_number(calls, 2),
                str(c["attempted"]),
                *_signal_cells(c["signals"][name], coverages),
            ]
        )
    return Section(
        "tbl-selective",
        TITLES["tbl-selective"],
        [
            "arm",
            "confidence",
            "calls / answer",
            "attempted",
            "AUROC [95% CI]",
            "PRR",
            *_coverage_titles(coverages),
            "ECE",
        ],
        rows,
        note="Each arm's confidence is what it reports: selfpara's (and hybrid's, sc's, the oracle's) the pipeline's "
        "(agreement estimate × token probability), se's the largest cluster's share, raw's the answer's "
        "geometric-mean token probability. Compare arms at equal calls per answer. " + _SIGNAL_NOTE,
        empty="no arm in this run reports a confidence",
    )


def confidence_section(report: dict[str, Any]) -> Section:
    coverages = _coverages(report)
    rows = []
    for arm, c in report.get("confidence", {}).items():
        for name, s in c["signals"].items():
            rows.append([arm, SIGNAL_TITLES.get(name, name), str(c["attempted"]), *_signal_cells(s, coverages)])
    return Section(
        "tbl-confidence",
        TITLES["tbl-confidence"],
        ["arm", "signal", "attempted answers", "AUROC [95% CI]", "PRR", *_coverage_titles(coverages), "ECE"],
        rows,
        note=_SIGNAL_NOTE,
        empty="no arm in this run reports a confidence (the voting arms do; raw where it has token probabilities)",
    )


def policy_section(report: dict[str, Any]) -> Section:
    rows = []
    for arm, c in report.get("confidence", {}).items():
        for p in c.get("policy", []):
            rows.append(
                [
                    arm,
                    f"{p['threshold']:g}",
                    _pct(p["attempted_rate"]),
                    fmt_number(p["correct_given_attempted"]),
                    fmt_number(p["overall_correct"]),
                    fmt_number(p["f_score"]),
                    fmt_number(p.get("score@0.75")),
                ]
            )
    return Section(
        "tbl-policy",
        TITLES["tbl-policy"],
        ["arm", "answer if vote share ≥", "coverage", "accuracy answered", "correct (overall)", "F", "score p=0.75"],
        rows,
        note="What the wrapper would score if it abstained whenever the winner's vote share is below the threshold "
        "(answers the model itself declined stay declined).",
        empty="no arm in this run reports a vote share",
    )


def risk_coverage_section(report: dict[str, Any]) -> Section:
    rows = []
    for arm, c in report.get("confidence", {}).items():
        name = headline_signal(c)
        if name is None:
            continue
        for p in c["signals"][name]["curve"]:
            rows.append(
                [
                    arm,
                    SIGNAL_TITLES.get(name, name),
                    f"{p['threshold']:.3g}",
                    _pct(p["coverage"]),
                    fmt_number(p["accuracy"]),
                    fmt_number(p["risk"]),
                ]
            )
    return Section(
        "tbl-risk-coverage",
        TITLES["tbl-risk-coverage"],
        ["arm", "signal", "threshold", "coverage", "accuracy", "risk"],
        rows,
        empty="no arm in this run reports a confidence",
    )


def diagnostics_section(report: dict[str, Any]) -> Section:
    rows = [
        [
            arm,
            str(d["answers"]),
            fmt_number(d.get("mean_vote_share")),
            fmt_number(d.get("mean_k_kept"), 2),
            fmt_number(d.get("mean_k_answered"), 2),
            fmt_number(d.get("no_paraphrases")),
            fmt_number(d.get("original_won")),
            fmt_number(d.get("samples_per_answer"), 1),
            ", ".join(f"{k} {v}" for k, v in d.get("flags", {}).items()),
        ]
        for arm, d in report["diagnostics"].items()
    ]
    return Section(
        "tbl-diagnostics",
        TITLES["tbl-diagnostics"],
        [
            "arm",
            "answers",
            "mean vote share",
            "mean kept",
            "mean answered",
            "no paraphrase kept",
            "original's answer won",
            "samples / answer",
            "flags (answers)",
        ],
        rows,
        note="Kept: the paraphrases the filter let through per answered wording, as in the supply table; answered: "
        "those of them the vote used (adaptive k leaves the rest unanswered once the vote is settled).",
        empty="no voting arm in this run",
    )


def categories_section(report: dict[str, Any]) -> Section:
    arms = report["arms"]
    rows = [
        [cat, str(by_arm["samples"]), *(fmt_number(by_arm.get(a)) for a in arms)]
        for cat, by_arm in report["categories"].items()
    ]
    return Section("tbl-categories", TITLES["tbl-categories"], ["category", "answers per arm", *arms], rows)


def environment_section(report: dict[str, Any]) -> Section:
    env = report["config"].get("environment") or {}
    rows = [[k, "–" if v is None else str(v)] for k, v in env.items() if k != "packages"]
    rows += [[f"version of {k}", "not installed" if v is None else str(v)] for k, v in env.get("packages", {}).items()]
    if not env:
        rows = [
            ["selfpara", str(report["config"].get("selfpara_version", "–"))],
            ["python", str(report["config"].get("python", "–"))],
        ]
    return Section(
        "tbl-environment",
        TITLES["tbl-environment"],
        ["what", "value"],
        rows,
        note="" if env else "this run predates the recorded environment",
    )


def sections(report: dict[str, Any]) -> list[Section]:
    """Every shared table in report order (after the metrics and paired comparisons)."""
    return [
        abstention_section(report),
        selective_section(report),
        confidence_section(report),
        policy_section(report),
        risk_coverage_section(report),
        diagnostics_section(report),
        totals_section(report),
        categories_section(report),
        environment_section(report),
    ]


def markdown_section(section: Section) -> list[str]:
    """A section as Markdown lines: a heading, a pipe table (or its empty text) and its note."""
    lines = [f"## {section.title}", ""]
    if section.rows:
        lines.append("| " + " | ".join(section.header) + " |")
        lines.append("|" + "---|" * len(section.header))
        lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in section.rows]
    else:
        lines.append(f"_{section.empty}_")
    if section.note:
        lines += ["", section.note]
    return [*lines, ""]
