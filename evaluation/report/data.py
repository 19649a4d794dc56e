"""The report of a run directory as data: metrics with CIs, paired comparisons, totals, diagnostics.

    report = build_report("runs/NAME")      # reads config.json, items.jsonl, samples.jsonl

The metrics come from `evaluation.metrics.compute_metrics` over the per-sample log
(one group per arm), with bootstrap CIs over questions and paired comparisons of every
selfpara arm against every baseline arm on the same questions. `markdown`, `plots` and
`page` present this dict; `write` puts all of them into the run directory.
"""

from __future__ import annotations

import importlib.util
import json
import math
import statistics
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.arms.evidence import recorded_confidence
from evaluation.datasets import load_items
from evaluation.metrics import MetricsTable, compute_metrics, rows_from_records
from evaluation.metrics.signals import abstention_scores, confidence_summary
from evaluation.records import Item, SampleRecord
from evaluation.report.ceiling import efficiency, efficiency_triples
from evaluation.report.supply import supply_stats
from evaluation.report.warnings import (
    abstention_warnings,
    cache_warnings,
    format_warnings,
    judge_warnings,
    sample_size_warnings,
)
from evaluation.rundir import ITEMS_FILE, SAMPLES_FILE, latest_records, read_config, read_samples
from selfpara.errors import ConfigError

DEFAULT_CONSISTENCY = "exact,rouge1"
ACCURACY_METRICS = ("A_orig", "A_exp", "A_any", "A_strict")
FLIP_METRICS = ("flip_cw", "flip_wc", "mismatch", "ND")
HEADLINE_METRICS = ("A_orig", "A_exp", "A_mv", "A_any", "A_strict", "mismatch", "flip_cw", "flip_wc", "ND")


def _load_items(out: Path) -> list[Item]:
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
        # An answer served (even in part) from the call cache took no model time: its latency
        # would pull the percentiles toward 0, so latency figures cover measured answers only.
        timed = [r for r in rs if not r.cached_calls and not r.error]
        lat = [r.latency_s for r in timed]
        # where the model's time was recorded: latency splits into the model's work and the
        # wait in its queue (at concurrency 16 on one local model most of a raw answer's latency)
        split = [r for r in timed if r.model_s is not None and r.queue_s is not None]
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
            "cached_samples": sum(1 for r in rs if r.cached_calls),
            "cached_calls": sum(r.cached_calls for r in rs),
            "shared_samples": sum(1 for r in rs if r.shared_calls),
            "shared_calls": sum(r.shared_calls for r in rs),
            "latency_samples": len(lat),
            "latency_mean_s": statistics.fmean(lat) if lat else None,
            "latency_p50_s": statistics.median(lat) if lat else None,
            "latency_p90_s": _quantile(lat, 0.9),
            "model_mean_s": statistics.fmean(r.model_s for r in split) if split else None,  # type: ignore[misc]
            "queue_mean_s": statistics.fmean(r.queue_s for r in split) if split else None,  # type: ignore[misc]
        }
    return out


def _quantile(values: list[float], q: float) -> float | None:
    return float(np.quantile(values, q)) if values else None


def _diagnostics(records: list[SampleRecord], arms: list[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for arm in arms:
        rs = [r for r in records if r.arm == arm and not r.error]
        voted = [r for r in rs if "vote_share" in r.details]
        if not voted:
            continue
        shares = [r.details["vote_share"] for r in voted]
        d: dict[str, Any] = {"answers": len(voted), "mean_vote_share": statistics.fmean(shares)}
        keeping = [r for r in voted if "k_kept" in r.details]
        if keeping:  # kept as the supply table counts it; answered: those the vote used
            d["mean_k_kept"] = statistics.fmean(r.kept_paraphrases for r in keeping)
            d["mean_k_answered"] = statistics.fmean(int(r.details["k_kept"]) for r in keeping)
            d["no_paraphrases"] = sum(1 for r in voted if "no_paraphrases" in r.details.get("flags", [])) / len(voted)
            d["original_won"] = sum(1 for r in voted if r.details.get("original_won")) / len(voted)
        flags = Counter(f for r in voted for f in r.details.get("flags") or [])
        if flags:
            d["flags"] = dict(flags.most_common())
        if "samples" in voted[0].details:
            d["samples_per_answer"] = statistics.fmean(r.details["samples"] for r in voted)
        out[arm] = d
    return out


def _abstention(records: list[SampleRecord], arms: list[str]) -> dict[str, dict[str, Any]]:
    """Per arm: answered / not attempted and the SimpleQA-style scores (failed samples left out)."""
    out = {}
    for arm in arms:
        rs = [r for r in records if r.arm == arm and not r.error]
        out[arm] = abstention_scores(
            sum(r.label == "correct" for r in rs),
            sum(r.label == "incorrect" for r in rs),
            sum(r.label == "not_attempted" for r in rs),
        )
    return out


def confidence_signals(records: list[SampleRecord]) -> dict[str, list[float]]:
    """The confidence signals every record carries, higher = surer: vote share, the answer's confidence
    (`selfpara.pipeline.confidence`), negated (normalized) entropy.

    For runs saved before the confidence, it is computed from each record's evidence.
    """
    signals: dict[str, list[float]] = {}
    if records and all("vote_share" in r.details for r in records):
        signals["vote_share"] = [float(r.details["vote_share"]) for r in records]
    confidences = [recorded_confidence(r.details) for r in records]
    if records and all(c is not None for c in confidences):
        signals["confidence"] = [float(c) for c in confidences if c is not None]
    for name in ("entropy", "entropy_normalized"):
        if records and all(r.details.get(name) is not None for r in records):
            signals[f"-{name}"] = [-float(r.details[name]) for r in records]
    return signals


def headline_signal(summary: dict[str, Any]) -> str | None:
    """The signal an arm's confidence summary is shown by where one is shown per arm (the side-by-side
    table, the risk–coverage figure): the answer's `confidence` (what the arm reports: selfpara's, se's
    largest-cluster share, raw's token probability), else the policy's vote share, else the first."""
    signals = summary.get("signals", {})
    if "confidence" in signals:
        return "confidence"
    return summary.get("policy_signal") or next(iter(signals), None)


def _confidence(records: list[SampleRecord], arms: list[str], *, n_boot: int, seed: int) -> dict[str, dict[str, Any]]:
    """Per arm that reports a confidence (the voting arms; raw where it has token probabilities): how well
    it predicts correctness."""
    out = {}
    for arm in arms:
        rs = [r for r in records if r.arm == arm and not r.error]
        signals = confidence_signals(rs)
        if not signals:
            continue
        out[arm] = confidence_summary(
            [r.item_id for r in rs], [r.label for r in rs], signals, n_boot=n_boot, seed=seed, key=arm
        )
    return out


def _categories(records: list[SampleRecord], items: list[Item], arms: list[str]) -> dict[str, dict[str, Any]]:
    category = {i.id: (i.category or i.kind) for i in items}
    counts: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for r in records:
        c = counts[category.get(r.item_id, "?")][r.arm]
        c[0] += r.label == "correct"
        c[1] += 1
    return {
        cat: {arm: (by_arm[arm][0] / by_arm[arm][1] if by_arm[arm][1] else None) for arm in arms}
        | {"samples": max((by_arm[a][1] for a in arms), default=0)}
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
        notes.append("Cons(rouge1) left out: rouge-score is not installed (pip install 'selfpara[bench]')")
    table = compute_metrics(
        rows_from_records(records, group_by="arm"),
        include_original=include_original,
        consistency=consistency,
        nli=nli,
        n_boot=n_boot,
        seed=int(config["bench"].get("seed", 0)),
        compare=pairs or None,
    )
    table.notes.extend(notes + _instrument_notes(present))
    metrics = table.model_dump(mode="json")
    totals = _totals(records, labels)
    abstention = _abstention(records, labels)
    questions = len({r.item_id for r in records})
    warnings = [
        *sample_size_warnings(questions, metrics, labels),
        *judge_warnings(present, records),
        *abstention_warnings(abstention),
        *cache_warnings(totals),
        *format_warnings(records),
    ]
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
        "warnings": warnings,
        "metrics": metrics,
        "totals": totals,
        "diagnostics": _diagnostics(records, labels),
        "abstention": abstention,
        "confidence": _confidence(records, labels, n_boot=n_boot, seed=int(config["bench"].get("seed", 0))),
        "categories": _categories(records, items, labels),
        **_instrument(records, items, present, labels, include_original, n_boot, int(config["bench"].get("seed", 0))),
    }


def _instrument(
    records: list[SampleRecord],
    items: list[Item],
    arms: list[dict[str, Any]],
    labels: list[str],
    include_original: bool,
    n_boot: int,
    seed: int,
) -> dict[str, Any]:
    """The report's `efficiency` (selfpara against the oracle) and `supply` (wordings kept and how independent)."""
    triples = efficiency_triples(arms, labels)
    return {
        "efficiency": efficiency(records, triples, include_original=include_original, n_boot=n_boot, seed=seed),
        "supply": supply_stats(records, items, arms, n_boot=n_boot, seed=seed),
    }


def _instrument_notes(arms: list[dict[str, Any]]) -> list[str]:
    """The label every oracle arm carries in a report: it measures, it is not a method."""
    return [
        f"{a['label']} is a measuring instrument, not a method: it votes each wording with the item's other "
        "wordings from the dataset, which a deployed wrapper never has (the vote's ceiling on this model)"
        for a in arms
        if a.get("arm") == "oracle"
    ]


def load_report(out: str | Path) -> dict[str, Any]:
    path = Path(out).expanduser() / "report.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no report yet; run `selfpara report {out}`") from None


def significance(c: Any, higher_is_better: bool | None, alpha: float = 0.05) -> str:
    """How to mark a paired difference: "good"/"bad" (better/worse for a) only when its CI excludes 0 AND
    its test's p-value is below `alpha`; "mixed" when just one of the two says so; "" otherwise.

    A difference with no test (p None) is never marked: the CI alone is not enough.
    """
    if c is None or c.diff is None:
        return ""
    ci_says = c.lo is not None and c.hi is not None and (c.lo > 0 or c.hi < 0)
    test_says = c.p_value is not None and c.p_value < alpha
    if ci_says and test_says:
        if higher_is_better is None:
            return "significant"
        return "good" if (c.diff > 0) == higher_is_better else "bad"
    return "mixed" if ci_says or test_says else ""


def metrics_table(report: dict[str, Any]) -> MetricsTable:
    """The report's metrics as a MetricsTable."""
    return MetricsTable.model_validate(report["metrics"])


def fmt_number(x: float | None, digits: int = 3, signed: bool = False) -> str:
    """`x` with `digits` decimals (signed: with its sign); '–' for None or NaN."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


def metric_title(table: MetricsTable, metric: str) -> str:
    """The metric's display title."""
    return table.info[metric].title if metric in table.info else metric


def metric_rows(report: dict[str, Any]) -> list[str]:
    """Metrics in report order: headline metrics, consistency, then the rest."""
    table = metrics_table(report)
    head = [m for m in HEADLINE_METRICS if m in table.metrics]
    cons = [m for m in table.metrics if m.startswith("cons_")]
    rest = [m for m in table.metrics if m not in head and m not in cons]
    return head + cons + rest


def sorted_comparisons(report: dict[str, Any]) -> list[Any]:
    """Comparisons in pair order (as the run lists its arms), then metric order."""
    table = metrics_table(report)
    pair_index = {tuple(p): i for i, p in enumerate(report.get("pairs", []))}
    order = {m: i for i, m in enumerate(metric_rows(report))}
    return sorted(table.comparisons, key=lambda c: (pair_index.get((c.a, c.b), 99), order.get(c.metric, 99)))


def records_of(out: str | Path) -> list[SampleRecord]:
    """The latest record per (item, variant, arm) of a run directory."""
    return latest_records(read_samples(Path(out).expanduser() / SAMPLES_FILE))
