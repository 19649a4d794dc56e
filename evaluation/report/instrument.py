"""The report's tables about the vote's ceiling and its inputs: efficiency against the oracle, supply and
independence of the wordings (`ceiling`, `supply` compute them; these lay them out as `tables.Section`s)."""

from __future__ import annotations

from typing import Any

from evaluation.report.data import fmt_number
from evaluation.report.tables import Section

INSTRUMENT_TITLES = {
    "tbl-efficiency": "selfpara's efficiency: its A_strict gain over raw as a share of the oracle's",
    "tbl-supply": "Supply and independence of the wordings each vote got",
}
"""Ids and captions of these tables, in report order (before the shared tables)."""


def _with_ci(value: float | None, lo: float | None, hi: float | None, signed: bool = False) -> str:
    if value is None:
        return "–"
    return f"{fmt_number(value, 3, signed)} [{fmt_number(lo, 3, signed)}, {fmt_number(hi, 3, signed)}]"


def efficiency_section(report: dict[str, Any]) -> Section:
    """The efficiency table (a `tables.Section`): one row per (selfpara, oracle) pair of arms."""
    rows = []
    for e in report.get("efficiency", []):
        if "A_strict" not in e:
            rows.append([e["selfpara"], e["oracle"], str(e["questions"]), *["–"] * 5, e["note"]])
            continue
        g_s, g_o = e["selfpara_gain"], e["oracle_gain"]
        rows.append(
            [
                e["selfpara"],
                e["oracle"],
                str(e["questions"]),
                fmt_number(e["A_strict"]["raw"]),
                fmt_number(e["A_strict"]["selfpara"]),
                fmt_number(e["A_strict"]["oracle"]),
                _with_ci(g_s["value"], g_s["lo"], g_s["hi"], signed=True),
                _with_ci(g_o["value"], g_o["lo"], g_o["hi"], signed=True),
                e["note"] or _with_ci(e["efficiency"], e["lo"], e["hi"]),
            ]
        )
    return Section(
        "tbl-efficiency",
        INSTRUMENT_TITLES["tbl-efficiency"],
        [
            "selfpara arm",
            "oracle arm",
            "questions",
            "A_strict raw",
            "A_strict selfpara",
            "A_strict oracle",
            "selfpara − raw [95% CI]",
            "oracle − raw [95% CI]",
            "efficiency [95% CI]",
        ],
        rows,
        note="The oracle is a measuring instrument, not a method: it votes each wording with the item's other "
        "wordings from the dataset, which a deployed wrapper never has, so it marks the ceiling of the vote on this "
        "model. Efficiency = (selfpara − raw) / (oracle − raw) on A_strict over the questions all three arms "
        "answered; CIs by paired bootstrap over questions. It is undefined when the oracle's gain is not above 0 "
        "(its point estimate or the lower end of its CI).",
        empty="needs raw, selfpara and oracle arms in one run (bench adds the oracle where the dataset has several "
        "wordings of a question), e.g. --arms raw,selfpara,oracle --max-variants 0",
    )


def _count(counts: list[int], shares: list[float | None], i: int) -> str:
    if i >= len(counts):
        return "–"
    share = shares[i]
    return f"{counts[i]} ({100 * share:.0f}%)" if share is not None else str(counts[i])


def _differ(d: dict[str, Any] | None) -> str:
    if not d or d.get("rate") is None:
        return "–"
    return f"{fmt_number(d['rate'])} [{fmt_number(d['lo'])}, {fmt_number(d['hi'])}]"


def supply_section(report: dict[str, Any]) -> Section:
    """The supply and independence table (a `tables.Section`): voting arms, then the dataset's own wordings."""
    supply = report.get("supply") or {}
    arms = supply.get("arms") or {}
    k = max((a["kept"]["k"] for a in arms.values()), default=0)
    rows = []
    for label, a in arms.items():
        kept = a["kept"]
        rows.append(
            [
                label,
                str(kept["wordings"]),
                *(_count(kept["counts"], kept["shares"], i) for i in range(k + 1)),
                fmt_number(kept["mean"], 2),
                fmt_number(kept["at_least_k_minus_1"]),
                _differ(a["differ"]),
                str(a["differ"]["pairs"]),
            ]
        )
    dataset = supply.get("dataset")
    if rows and dataset:
        rows.append(
            [
                f"dataset's wordings ({dataset['arm']} answers)",
                "–",
                *["–"] * (k + 1),
                "–",
                "–",
                _differ(dataset),
                str(dataset["pairs"]),
            ]
        )
    undecided = dataset.get("undecided", 0) if dataset else 0
    return Section(
        "tbl-supply",
        INSTRUMENT_TITLES["tbl-supply"],
        [
            "arm",
            "wordings answered",
            *(f"kept {i}" for i in range(k + 1)),
            "mean kept",
            "kept ≥ k − 1",
            "answer differs from its original's [95% CI]",
            "pairs",
        ],
        rows,
        note="Supply: how many paraphrases each answered wording kept (of k), counting those adaptive k kept but "
        "left unanswered because the vote was settled. Independence: how often an answered kept "
        "paraphrase's answer fell in another cluster than the answer to the wording it came from, by the arm's own "
        "clustering; the oracle's row is the same rate for the dataset's other wordings. The dataset row: how often "
        "the raw answer to another wording of an item differs from the raw answer to its original, decided by "
        + (", ".join(dataset["equivalence"]) if dataset else "the model-free equivalence functions")
        + " (undecided pairs count as different, as in the vote"
        + (f"; {undecided} of {dataset['pairs']} pairs were undecided" if dataset and undecided else "")
        + "). CIs by bootstrap over questions.",
        empty="no arm in this run keeps paraphrases (selfpara and oracle do)",
    )


def instrument_sections(report: dict[str, Any]) -> list[Section]:
    """The efficiency and supply tables, in report order."""
    return [efficiency_section(report), supply_section(report)]
