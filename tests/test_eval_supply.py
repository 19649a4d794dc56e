"""Supply and independence statistics of a run, against hand-counted runs on a fake model."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from evaluation.bench_config import BenchConfig, RunOptions
from evaluation.datasets import save_items
from evaluation.records import Item, ItemVariant, SampleRecord
from evaluation.report import build_report, markdown_report
from evaluation.report.supply import kept_distribution, model_free_equivalence, paraphrase_disagreement, supply_stats
from evaluation.runner import run_bench
from selfpara.models.client import ModelClient
from selfpara.pipeline.prompts import untagged
from selfpara.testing import PARAPHRASE_MARKER, FakeBackend, last_user_text

SELFPARA = (
    "selfpara[paraphrase_check=off;equivalence=exact;renamings=false;paraphrase_method=list]"  # the scripted list
)
ORACLE = "oracle[equivalence=exact]"
# Each wording's paraphrase reply holds this many good rewordings; the rest of its 3 lines copy the question
# (rejected by the overlap filter), so each wording keeps exactly this many.
KEEP = {
    "What is the capital of France?": 0,
    "Which city is the capital of France?": 1,
    "What is the capital of Japan?": 2,
    "Which city is the capital of Japan?": 3,
}
TEMPLATES = [
    "Could you tell me about {tail} (v0)",
    "I would like to learn regarding {tail} (v1)",
    "Please explain this matter: {tail} (v2)",
]


def items() -> list[Item]:
    return [
        Item(
            id=name,
            gold=[city],
            variants=[
                ItemVariant(id=0, question=f"What is the capital of {country}?"),
                ItemVariant(id=1, question=f"Which city is the capital of {country}?"),
            ],
        )
        for name, country, city in (("fr", "France", "Paris"), ("jp", "Japan", "Tokyo"))
    ]


def responder(model: str, messages: list, params: dict) -> str:
    text = last_user_text(messages)
    if PARAPHRASE_MARKER in text:
        q = untagged("question", text) or ""
        tail = " ".join(q.split()[-3:])
        n = KEEP[q]
        lines = [t.format(tail=tail) for t in TEMPLATES[:n]] + [q] * (3 - n)
        return "\n".join(f"{i + 1}. {line}" for i, line in enumerate(lines))
    if "(v1)" in text:
        return "Wrong"
    if text == "Which city is the capital of Japan?":
        return "Kyoto"
    return "Paris" if "France" in text else "Tokyo"


@pytest.fixture
def report(tmp_path: Path) -> dict[str, Any]:
    client = ModelClient(backend=FakeBackend(responder), retries=0, backoff_s=0.001, timeout_s=5)
    dataset = save_items(items(), tmp_path / "data.jsonl")
    config = BenchConfig(dataset=str(dataset), model="openai/fake", arms=["raw", SELFPARA, ORACLE, "sc"], k=3)
    asyncio.run(run_bench(config, tmp_path / "run", RunOptions(progress=False, client=client)))
    return build_report(tmp_path / "run", consistency=None, n_boot=200)


def test_kept_paraphrases_per_wording_as_counted_by_hand(report: dict[str, Any]) -> None:
    supply = report["supply"]["arms"]
    assert list(supply) == [SELFPARA, ORACLE]  # sc's samples are not wordings; raw keeps none
    kept = supply[SELFPARA]["kept"]
    # fr-0 kept 0, fr-1 kept 1, jp-0 kept 2, jp-1 kept 3.
    assert kept["k"] == 3 and kept["wordings"] == 4 and kept["counts"] == [1, 1, 1, 1]
    assert kept["mean"] == 1.5 and kept["at_least_k_minus_1"] == 0.5
    # The oracle: two wordings per item, so one other wording each.
    assert supply[ORACLE]["kept"]["counts"] == [0, 4, 0, 0]


def test_how_often_a_kept_paraphrases_answer_differs_as_counted_by_hand(report: dict[str, Any]) -> None:
    # fr-1: Paris | Paris (v0): 0 of 1. jp-0: Tokyo | Tokyo (v0), Wrong (v1): 1 of 2.
    # jp-1: Kyoto | Tokyo (v0), Wrong (v1), Tokyo (v2): 3 of 3. In all 4 of 6.
    d = report["supply"]["arms"][SELFPARA]["differ"]
    assert (d["differ"], d["pairs"], d["questions"]) == (4, 6, 2)
    assert d["rate"] == pytest.approx(4 / 6) and d["lo"] <= d["rate"] <= d["hi"]
    # The oracle, by its own clustering: fr-0/fr-1 agree (Paris), jp-0/jp-1 differ both ways: 2 of 4.
    o = report["supply"]["arms"][ORACLE]["differ"]
    assert (o["differ"], o["pairs"]) == (2, 4)


def test_the_datasets_own_wordings_rate_from_the_raw_arm(report: dict[str, Any]) -> None:
    # raw: fr Paris / Paris agree; jp Tokyo / Kyoto differ: 1 of 2 (decided by "exact" then "distinct").
    d = report["supply"]["dataset"]
    assert d["arm"] == "raw" and (d["differ"], d["pairs"]) == (1, 2) and d["rate"] == 0.5
    assert d["equivalence"] == ["exact"] and d["undecided"] == 1  # the selfpara arm's functions: exact only
    text = markdown_report(report)
    assert "Supply and independence" in text and "dataset's wordings (raw answers)" in text
    assert "| " + SELFPARA + " | 4 | 1 (25%) | 1 (25%) | 1 (25%) | 1 (25%) | 1.50 | 0.500 | 0.667 [" in text


def record(arm: str, item: str, vid: int, kept: int, clusters: list[int | None], **extra: Any) -> SampleRecord:
    details = {"k_kept": kept, "clusters": clusters, "evidence": {"k_requested": 3}}
    return SampleRecord(
        item_id=item,
        variant_id=vid,
        is_original=vid == 0,
        arm=arm,
        answer="x",
        label="correct",
        details=details,
        **extra,
    )


def test_top_up_samples_and_failed_answers_are_not_counted_as_paraphrases() -> None:
    rs = [
        record("s", "a", 0, 1, [0, 0, 1, 1]),  # one kept paraphrase (same), then two top-up samples (differ)
        record("s", "a", 1, 2, [0, None, 1]),  # a failed paraphrase answer is left out
        record("s", "b", 0, 0, [0], error="model call failed"),  # a failed record is left out
    ]
    d = paraphrase_disagreement(rs, n_boot=50)
    assert (d["differ"], d["pairs"], d["questions"]) == (1, 2, 1)
    kept = kept_distribution(rs)
    assert kept["counts"] == [0, 1, 1, 0] and kept["wordings"] == 2


def test_paraphrases_adaptive_k_kept_but_did_not_answer_count_as_supplied() -> None:
    settled = record("s", "a", 0, 1, [0, 0])
    settled.details["evidence"]["skipped_paraphrases"] = ["wording two", "wording three"]  # vote settled after one
    kept = kept_distribution([settled, record("s", "a", 1, 1, [0, 0])])
    assert kept["counts"] == [0, 1, 0, 1] and kept["mean"] == 2.0 and kept["answered_mean"] == 1.0
    assert kept["at_least_k_minus_1"] == 0.5
    assert paraphrase_disagreement([settled], n_boot=50)["pairs"] == 1  # only answered ones have answers to compare


def test_without_a_voting_arm_or_other_wordings_the_statistics_say_so() -> None:
    raw_only = [SampleRecord(item_id="fr", variant_id=0, is_original=True, arm="raw", answer="x", label="correct")]
    stats = supply_stats(raw_only, items(), [{"arm": "raw", "label": "raw"}], n_boot=10)
    assert stats["arms"] == {}
    assert (stats["dataset"]["pairs"], stats["dataset"]["rate"]) == (0, None)  # no other wording answered
    one_wording = [i.model_copy(update={"variants": i.variants[:1]}) for i in items()]
    assert supply_stats(raw_only, one_wording, [{"arm": "raw", "label": "raw"}], n_boot=10)["dataset"] is None


def test_the_raw_comparison_uses_only_model_free_functions() -> None:
    assert model_free_equivalence(["exact", "numeric", "llm", "distinct"]).names == ["exact", "numeric", "distinct"]
    assert model_free_equivalence(["llm"]).names == ["exact", "numeric", "contains", "distinct", "core"]
