"""The report's first sentence: what selfpara gained over raw, with its CI, and what share of the
oracle's gain that is (`evaluation.report.ceiling`), so that a reader has the answer before any table.

The measure is A_strict, the share of questions answered right under every wording: what
selfpara is for, and what the efficiency against the oracle is defined on. The gain over raw is
the paired difference over the questions both arms answered (the efficiency's, where the run
has an oracle; else the report's paired comparison).
"""

from __future__ import annotations

from typing import Any

from evaluation.report.data import fmt_number, metrics_table


def _ci(lo: float | None, hi: float | None, signed: bool = True) -> str:
    if lo is None or hi is None:
        return "(no CI: too few questions)"
    return f"[{fmt_number(lo, 3, signed)}, {fmt_number(hi, 3, signed)}]"


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def _first_arm(report: dict[str, Any], kind: str) -> str | None:
    arms = report["config"].get("arms") or []
    return next((a["label"] for a in arms if a.get("arm") == kind and a["label"] in report["arms"]), None)


def headline(report: dict[str, Any]) -> str | None:
    """One sentence on the first selfpara arm against raw (and the oracle, where the run has one);
    None when the run lacks a selfpara or a raw arm."""
    ours, raw = _first_arm(report, "selfpara"), _first_arm(report, "raw")
    if ours is None or raw is None:
        return None
    entry = next((e for e in report.get("efficiency", []) if e["selfpara"] == ours and e["raw"] == raw), None)
    if entry is not None and "A_strict" in entry:
        return _with_oracle(entry)
    return _without_oracle(report, ours, raw)


def _with_oracle(e: dict[str, Any]) -> str:
    g, o, strict = e["selfpara_gain"], e["oracle_gain"], e["A_strict"]
    said = (
        f"On {e['questions']} questions, {e['selfpara']} changed A_strict (right under every wording) by "
        f"{fmt_number(g['value'], 3, True)} {_ci(g['lo'], g['hi'])} over {e['raw']} "
        f"({fmt_number(strict['selfpara'])} against {fmt_number(strict['raw'])}); "
        f"the oracle, voting with the dataset's own wordings, by {fmt_number(o['value'], 3, True)} "
        f"{_ci(o['lo'], o['hi'])}"
    )
    if e.get("efficiency") is None:
        return f"{said}: it gains nothing measurable here, so selfpara's share of its gain is undefined."
    share = f"{_pct(e['efficiency'])} [{_pct(e.get('lo'))}, {_pct(e.get('hi'))}]"
    return f"{said}, so selfpara reached {share} of the oracle's gain."


def _without_oracle(report: dict[str, Any], ours: str, raw: str) -> str:
    table = metrics_table(report)
    c = next((c for c in table.comparisons if (c.a, c.b, c.metric) == (ours, raw, "A_strict")), None)
    if c is None or c.diff is None:
        return f"{ours} and {raw} answered no question in common: no gain to report."
    return (
        f"On {c.n} questions, {ours} changed A_strict (right under every wording) by "
        f"{fmt_number(c.diff, 3, True)} {_ci(c.lo, c.hi)} over {raw} "
        f"({fmt_number(c.value_a)} against {fmt_number(c.value_b)}); "
        "the run has no oracle arm, so the share of the ceiling it reached is not measured "
        "(--arms raw,selfpara,oracle on a dataset with several wordings of each question)."
    )
