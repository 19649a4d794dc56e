"""Supply and independence of the wordings a vote gets (two measured causes).

Supply: per voting arm that keeps paraphrases (selfpara, oracle), how many it kept for each
wording it answered: the distribution over 0, 1, …, k.

Independence: how often a kept paraphrase's answer differs from the answer to the wording
it came from, decided by the arm's own clustering (different cluster = differs); a vote
gains only where they differ. Beside it, the same rate for the dataset's own wordings,
from the raw arm: how often the greedy answer to another wording of an item differs from
the answer to its original, decided by the model-free functions of the voting arm's
equivalence (exact, numeric, contains, distinct; a pair they leave undecided counts as
different, as in the vote). The oracle arm gives the dataset's rate by the arm's own
clustering too.

Rates are Σ differing / Σ pairs over questions, with percentile-bootstrap CIs over
questions (`evaluation.stats`). Failed answers are left out.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections import Counter, defaultdict
from collections.abc import Coroutine, Sequence
from typing import Any, TypeVar

import numpy as np

from evaluation import stats
from evaluation.records import Item, SampleRecord
from selfpara.pipeline.offline import Equivalence

__all__ = ["MODEL_FREE", "dataset_disagreement", "kept_distribution", "paraphrase_disagreement", "supply_stats"]

MODEL_FREE = ("exact", "numeric", "contains", "distinct", "core")
"""The model-free functions the raw comparison falls back to when an arm names none (those `auto` starts with)."""

T = TypeVar("T")


def _keeps_paraphrases(records: Sequence[SampleRecord]) -> bool:
    return bool(records) and all("k_kept" in r.details and "clusters" in r.details for r in records)


def kept_distribution(records: Sequence[SampleRecord]) -> dict[str, Any]:
    """How many paraphrases each answered wording kept: counts[i] = wordings that kept i, i = 0..k.

    A paraphrase adaptive k kept but did not answer (the vote was settled) counts as kept:
    supply is what the filter let through; `answered_mean` is how many the vote used.

    Args:
        records: one voting arm's records (failed ones are left out).
    """
    rs = [r for r in records if not r.error]
    answered = [int(r.details["k_kept"]) for r in rs]
    kept = [r.kept_paraphrases for r in rs]
    k = max([_requested(r) for r in rs] + kept + [0])
    counts = Counter(kept)
    n = len(kept)
    return {
        "k": k,
        "wordings": n,
        "counts": [counts.get(i, 0) for i in range(k + 1)],
        "shares": [counts.get(i, 0) / n if n else None for i in range(k + 1)],
        "mean": (sum(kept) / n) if n else None,
        "answered_mean": (sum(answered) / n) if n else None,
        "at_least_k_minus_1": (sum(1 for x in kept if x >= k - 1) / n) if n and k else None,
    }


def _requested(record: SampleRecord) -> int:
    evidence = record.details.get("evidence")
    if isinstance(evidence, dict) and isinstance(evidence.get("k_requested"), int):
        return int(evidence["k_requested"])
    return 0


def _rate(per_question: dict[str, list[int]], *, n_boot: int, seed: int, key: str) -> dict[str, Any]:
    """{pairs, differ, rate, lo, hi, questions} from per-question [differing, pairs] counts."""
    ids = sorted(q for q, (_, pairs) in per_question.items() if pairs)
    num = np.array([[per_question[q][0]] for q in ids], dtype=np.float64).reshape(-1, 1)
    den = np.array([[per_question[q][1]] for q in ids], dtype=np.float64).reshape(-1, 1)
    differ, pairs = int(num.sum()), int(den.sum())
    out: dict[str, Any] = {
        "pairs": pairs,
        "differ": differ,
        "rate": None,
        "lo": None,
        "hi": None,
        "questions": len(ids),
    }
    if not pairs:
        return out
    point, reps = stats.bootstrap_ratios(num, den, n_boot=n_boot, rng=stats.rng_for(seed, key, "supply"))
    lo, hi = stats.percentile_interval(reps)
    out.update(rate=float(point[0]), lo=float(lo[0]), hi=float(hi[0]))
    return out


def paraphrase_disagreement(records: Sequence[SampleRecord], *, n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """How often a kept paraphrase's answer falls in another cluster than its original's (the arm's clustering).

    A record's answers are the original's, then its kept paraphrases' (`k_kept` of them), then
    any top-up samples (not paraphrases: left out). Pairs with a failed answer are left out.
    """
    per_question: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in records:
        if r.error:
            continue
        clusters = list(r.details.get("clusters") or [])
        kept = int(r.details.get("k_kept", 0))
        if not clusters or clusters[0] is None:
            continue
        for c in clusters[1 : 1 + kept]:
            if c is None:
                continue
            counts = per_question[r.item_id]
            counts[0] += int(c != clusters[0])
            counts[1] += 1
    return _rate(per_question, n_boot=n_boot, seed=seed, key=records[0].arm if records else "")


def _run(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` to completion from sync code, also when called inside a running event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # a running loop: asyncio.run must have its own thread
        return pool.submit(asyncio.run, coro).result()


def model_free_equivalence(names: Sequence[str]) -> Equivalence:
    """The model-free functions among `names`, in their order (all of MODEL_FREE when none is)."""
    from selfpara.pipeline.offline import EQUIVALENCE_FUNCTIONS, model_free

    chosen = model_free(list(names)) or list(MODEL_FREE)
    # A model-free function's builder ignores its dependencies (it is the class itself).
    return Equivalence([EQUIVALENCE_FUNCTIONS[n].build(None) for n in chosen])  # type: ignore[arg-type]


def dataset_disagreement(
    records: Sequence[SampleRecord],
    items: Sequence[Item],
    equivalence: Equivalence,
    *,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """How often the raw arm's answer to another wording of an item differs from its answer to the original.

    Args:
        records: the raw arm's records.
        items: the run's items (the original's wording is the question the pairs are judged under).
        equivalence: decides whether two answers agree (undecided = different, as in the vote).
    """
    by_item: dict[str, dict[int, str]] = defaultdict(dict)
    for r in records:
        if not r.error and r.answer is not None:
            by_item[r.item_id][r.variant_id] = r.answer
    question = {i.id: i.original.question for i in items}

    async def decide_all() -> tuple[dict[str, list[int]], int]:
        per_question: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        undecided = 0
        for item_id, answers in sorted(by_item.items()):
            if 0 not in answers:
                continue
            for vid, text in sorted(answers.items()):
                if vid == 0:
                    continue
                same, by = await equivalence.decide(question.get(item_id, ""), answers[0], text)
                undecided += by == Equivalence.UNDECIDED
                per_question[item_id][0] += int(not same)
                per_question[item_id][1] += 1
        return per_question, undecided

    per_question, undecided = _run(decide_all())
    out = _rate(per_question, n_boot=n_boot, seed=seed, key="dataset")
    out["undecided"] = undecided
    out["equivalence"] = equivalence.names
    return out


def supply_stats(
    records: Sequence[SampleRecord],
    items: Sequence[Item],
    arms_cfg: Sequence[dict[str, Any]],
    *,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """Supply and independence per voting arm that keeps paraphrases, and the dataset's own rate (raw arm).

    Returns {"arms": {label: {"arm", "kept", "differ"}}, "dataset": {...} or None}.
    """
    by_arm: dict[str, list[SampleRecord]] = defaultdict(list)
    for r in records:
        by_arm[r.arm].append(r)
    arms: dict[str, Any] = {}
    functions: list[str] = []
    for cfg in arms_cfg:
        rs = [r for r in by_arm.get(cfg["label"], []) if not r.error]
        if cfg.get("arm") == "sc" or not _keeps_paraphrases(rs):
            continue  # sc's "paraphrases" are samples of the same wording, not wordings
        arms[cfg["label"]] = {
            "arm": cfg.get("arm"),
            "kept": kept_distribution(rs),
            "differ": paraphrase_disagreement(rs, n_boot=n_boot, seed=seed),
        }
        if not functions:
            evidence = rs[0].details.get("evidence") or {}
            functions = list(evidence.get("equivalence_functions") or [])
    raw = next((c["label"] for c in arms_cfg if c.get("arm") == "raw" and by_arm.get(c["label"])), None)
    dataset = None
    if raw is not None and any(len(i.variants) > 1 for i in items):
        dataset = {
            "arm": raw,
            **dataset_disagreement(by_arm[raw], items, model_free_equivalence(functions), n_boot=n_boot, seed=seed),
        }
    return {"arms": arms, "dataset": dataset}
