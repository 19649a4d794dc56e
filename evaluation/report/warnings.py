"""What a reader must know before trusting a report: small samples, a self-judging small model, abstentions.

Each check returns plain sentences, one per kind of warning however many arms it concerns (the arms
are named in it), so that a four-arm run's warnings do not push its numbers off the first screen;
`build_report` collects them into report["warnings"], which the Markdown report shows under its
headline and the HTML report beside its first figure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlparse

from evaluation.records import SampleRecord

SMALL_N = 30
"""Fewer questions than this: every CI is wide and a paired test has little power."""

WIDE_CI = 0.3
"""A headline accuracy CI wider than this is flagged as too wide to read a difference from."""

SMALL_MODEL_B = 8.0
"""A model whose name says it has at most this many billion parameters counts as small."""

JUDGE_FLAG = "judge_is_model_under_test"
"""The result flag (or details key) the pipeline sets when the answer judge is the model under test."""

_LOCAL_HOSTS = ("localhost", "127.", "0.0.0.0", "::1", "[::1]")
_SIZE_B = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*b(?![a-z])", re.IGNORECASE)
_SIZE_M = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*m(?![a-z])", re.IGNORECASE)


def is_small_or_local(model: str, api_base: str | None = None) -> bool:
    """Whether `model` runs locally (in process or on this machine) or its name gives a small size (≤ 8B)."""
    name = model.lower()
    if name.startswith(("local/", "local:")):
        return True
    if api_base:
        host = urlparse(api_base if "//" in api_base else f"//{api_base}").hostname or ""
        if host.startswith(_LOCAL_HOSTS) or host in _LOCAL_HOSTS:
            return True
    if _SIZE_M.search(name):
        return True
    return any(float(m) <= SMALL_MODEL_B for m in _SIZE_B.findall(name))


def _judge_of(arm: dict[str, Any]) -> tuple[bool, str | None, str, str | None]:
    """(uses an llm judge, judge model or None, model under test, api base) from an arm's saved description."""
    cfg = arm.get("config") or {}
    settings = arm.get("settings") or {}
    model = str(cfg.get("model") or arm.get("model") or "")
    equivalence = str(cfg.get("equivalence") or settings.get("equivalence") or "")
    functions = [f.strip().lower() for f in equivalence.split(",") if f.strip()]
    if functions == ["auto"]:
        # auto: exact,numeric,llm, except on the embedded model (exact,numeric,contains)
        functions = [] if model.startswith("local/") else ["llm"]
    judge = cfg.get("judge_model") or settings.get("judge_model")
    return "llm" in functions, judge, model, cfg.get("api_base") or arm.get("api_base")


def judge_warnings(arms: Iterable[dict[str, Any]], records: Iterable[SampleRecord]) -> list[str]:
    """One warning naming every arm whose answer judge is the model under test and that model is small or local.

    Read from the arm's saved config (an `llm` equivalence function with judge_model unset or
    equal to the model) and from the results (the `judge_is_model_under_test` flag or detail).
    """
    flagged = {r.arm for r in records if r.details.get(JUDGE_FLAG) or JUDGE_FLAG in (r.details.get("flags") or [])}
    models: dict[str, str] = {}  # arm -> its model
    for arm in arms:
        label = str(arm.get("label", arm.get("arm", "?")))
        uses_llm, judge, model, api_base = _judge_of(arm)
        self_judged = uses_llm and (judge is None or judge == model)
        if label in flagged or (self_judged and is_small_or_local(model, api_base)):
            models[label] = model or "the model"
    if not models:
        return []
    named = (
        next(iter(models.values()))
        if len(set(models.values())) == 1
        else "; ".join(f"{label}: {model}" for label, model in models.items())
    )
    return [
        f"{_arms(list(models))} the answer judge is the model under test ({named}), a small or local model; a small "
        "judge tends to call different answers equivalent, which merges dissent into the winning cluster and "
        "inflates vote share. Set judge_model to a stronger model, or use equivalence=exact,numeric,contains."
    ]


def _arms(labels: list[str]) -> str:
    """The arms a warning concerns, as it opens: `arm A:` or `arms A, B:`."""
    return f"arm {labels[0]}:" if len(labels) == 1 else f"arms {', '.join(labels)}:"


def _folded(per_arm: dict[str, str]) -> str:
    """One kind of warning over its arms, as one line: `arm A: TEXT`, or `arms A, B: A TEXT; B TEXT`."""
    if len(per_arm) == 1:
        ((arm, text),) = per_arm.items()
        return f"arm {arm}: {text}"
    return _arms(list(per_arm)) + " " + "; ".join(f"{arm} {text}" for arm, text in per_arm.items())


def sample_size_warnings(questions: int, metrics: dict[str, Any], arms: list[str]) -> list[str]:
    """A warning when n is small (< SMALL_N questions) or a headline accuracy CI is wider than WIDE_CI."""
    out = []
    if questions < SMALL_N:
        out.append(
            f"small sample: {questions} question(s) (fewer than {SMALL_N}); CIs are wide and differences "
            "between arms are unlikely to be detectable"
        )
    widths = []
    for arm in arms:
        for metric in ("A_orig", "A_exp", "A_strict"):
            e = metrics.get("groups", {}).get(arm, {}).get(metric) or {}
            if e.get("lo") is not None and e.get("hi") is not None and e["hi"] - e["lo"] > WIDE_CI:
                widths.append(f"{arm} {metric} ±{(e['hi'] - e['lo']) / 2:.2f}")
    if widths:
        out.append(f"wide confidence intervals (wider than {WIDE_CI:g}): " + ", ".join(widths))
    return out


def abstention_warnings(abstention: dict[str, dict[str, Any]]) -> list[str]:
    """One warning naming every arm that abstained on a large share of answers: accuracy alone misreads them."""
    found = {
        arm: f"{s['not_attempted']} of {s['answers']} answers ({100 * s['not_attempted'] / s['answers']:.0f}%)"
        for arm, s in abstention.items()
        if s["answers"] and s["not_attempted"] / s["answers"] >= 0.2
    }
    if len(found) == 1:
        ((arm, share),) = found.items()
        return [f"arm {arm} did not attempt {share}; read its accuracy with the abstention scores"]
    if found:
        shares = ", ".join(f"{arm} {share}" for arm, share in found.items())
        return [f"arms {', '.join(found)} each did not attempt 20% or more of their answers: {shares}; read their "
                "accuracy with the abstention scores"]  # fmt: skip
    return []


def cache_warnings(totals: dict[str, dict[str, Any]]) -> list[str]:
    """One note for the arms with cached answers (a call answered from an earlier run's call cache: left out
    of latency figures), and one for the arms whose answers shared calls another arm made earlier in the
    same run (timed, but with those calls done): a line each, whatever the number of arms."""
    cached = [f"{arm} {t['cached_samples']}/{t['samples']}" for arm, t in totals.items() if t.get("cached_samples")]
    shared = [
        f"{arm} {t['shared_samples']}/{t['samples']} ({t['shared_calls']} calls)"
        for arm, t in totals.items()
        if t.get("shared_calls")
    ]
    out = []
    if cached:
        out.append(
            "cached answers (a call answered from an earlier run's call cache), left out of the latency figures: "
            + ", ".join(cached)
        )
    if shared:
        out.append(
            "answers that shared identical calls another arm made earlier in this run (counted in calls and tokens "
            "as spent; their latency was timed with those calls already done): " + ", ".join(shared)
        )
    return out


FORMAT_FOLLOWED = 0.5
"""A single-call arm whose replies hold their final-answer line less often than this is flagged."""


def format_warnings(records: Iterable[SampleRecord]) -> list[str]:
    """A warning for every arm whose replies mostly ignored the format it asks for.

    A single_call reply without its "Final answer:" line is read from its last line; a
    one-line reply is an answer given straight away, without the rewordings, so an arm of
    mostly such replies measured raw prompting, not the single-call method. A rar rewrite
    cut at its token limit answers a fragment.
    """
    found: dict[str, list[bool]] = {}
    bare: dict[str, int] = {}  # replies without the final line that are one line: no rewordings
    cut: dict[str, list[bool]] = {}
    for r in records:
        if r.error is not None:
            continue
        if "final_line_found" in r.details:
            found.setdefault(r.arm, []).append(bool(r.details["final_line_found"]))
            one_line = len(str(r.details.get("reply", "")).strip().splitlines()) <= 1
            bare[r.arm] = bare.get(r.arm, 0) + (not r.details["final_line_found"] and one_line)
        if "rephrase_finish" in r.details:
            cut.setdefault(r.arm, []).append(r.details["rephrase_finish"] == "length")
    followed = {
        arm: f"{sum(f)} of {len(f)} replies ({100 * sum(f) / len(f):.0f}%) had the 'Final answer:' line; the others "
        f"were read from their last line, {bare[arm]} of them a one-line answer with no rewordings"
        for arm, f in found.items()
        if sum(f) < FORMAT_FOLLOWED * len(f)
    }
    out = []
    if followed:
        raw = any(bare[arm] for arm in followed)
        out.append(_folded(followed) + (" (for those the arm measured raw prompting)" if raw else ""))
    cuts = {
        arm: f"{sum(c)} of {len(c)} rewrites were cut at their token limit (rephrase_max_tokens)"
        for arm, c in cut.items()
        if any(c)
    }
    if cuts:
        out.append(_folded(cuts))
    return out
