"""The per-sample log's evidence: variants, rejected paraphrases with reasons, answers with clusters,
and whatever else the WrappedAnswer carries (new fields included)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from evaluation.arms import make_arm
from evaluation.arms.evidence import evidence
from evaluation.datasets import save_items
from evaluation.records import Item, ItemVariant
from evaluation.runner import BenchConfig, RunOptions, run_bench
from selfpara.models.client import ModelClient
from selfpara.result import Answer, Cluster, Variant, WrappedAnswer
from selfpara.testing import PARAPHRASE_MARKER, FakeBackend, last_user_text

QUESTION = "What is the capital of France?"


def _responder(model: str, messages: list, params: dict) -> str:
    text = last_user_text(messages)
    if PARAPHRASE_MARKER in text:
        # the first is the question itself (rejected by the overlap rule), the others are kept
        return f"1. {QUESTION}\n2. Name the French capital city.\n3. Which city serves as France's seat of government?"
    return "Lyon" if "French capital" in text else "Paris"


async def test_selfpara_arm_records_rejections_answers_and_clusters() -> None:
    client = ModelClient(backend=FakeBackend(_responder), retries=0, timeout_s=5)
    arm = make_arm(
        "selfpara[equivalence=exact;renamings=false;paraphrase_method=list]",
        client,
        "local/smollm2",
        k=3,
        max_tokens=20,
    )
    out = await arm.answer(ItemVariant(id=0, question=QUESTION))
    ev = out.details["evidence"]
    assert [v["text"] for v in ev["variants"]][1:] == out.details["paraphrases"]
    assert ev["rejected"] and set(ev["rejected"][0]) >= {"text", "reason", "detail"}
    assert ev["rejected"][0]["text"] == QUESTION and ev["rejected"][0]["reason"]
    assert len(ev["rejected"]) == out.details["rejected"]
    assert [a["cluster"] for a in ev["answers"]] == out.details["clusters"]
    assert {a["text"] for a in ev["answers"]} >= {"Paris", "Lyon"}
    assert sum(len(c["members"]) for c in ev["clusters"]) == len(ev["answers"])
    assert "usage" not in ev and "answer" not in ev and "agreement" not in ev
    json.dumps(out.details)  # the log line must serialise


def test_evidence_picks_up_fields_the_pipeline_adds() -> None:
    class Extended(WrappedAnswer):
        pair_decisions: list[dict[str, object]] = []

    wrapped = Extended(
        answer="Paris",
        question="q",
        model="m",
        k_requested=1,
        k_kept=1,
        variants=[Variant(index=0, text="q"), Variant(index=1, text="q2")],
        answers=[Answer(variant=0, text="Paris", cluster=0), Answer(variant=1, text="Paris", cluster=0)],
        clusters=[Cluster(id=0, members=[0, 1])],
        winner=0,
        vote_share=1.0,
        confidence=0.5,
        entropy=0.0,
        entropy_normalized=0.0,
        original_won=True,
        pair_decisions=[{"a": 0, "b": 1, "equivalent": True, "decided_by": "exact"}],
    )
    assert evidence(wrapped)["pair_decisions"] == [{"a": 0, "b": 1, "equivalent": True, "decided_by": "exact"}]


def test_bench_log_lines_carry_the_evidence(tmp_path: Path) -> None:
    items = [Item(id="fr", gold=["Paris"], variants=[ItemVariant(id=0, question=QUESTION)])]
    data = save_items(items, tmp_path / "d.jsonl")
    client = ModelClient(backend=FakeBackend(_responder), retries=0, timeout_s=5)
    asyncio.run(
        run_bench(
            BenchConfig(
                dataset=str(data),
                arms=["selfpara[equivalence=exact;renamings=false;paraphrase_method=list]", "sc"],
                k=3,
            ),
            tmp_path / "run",
            RunOptions(client=client, progress=False),
        )
    )
    lines = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    by_arm = {r["arm"].split("[")[0]: r for r in lines}
    assert by_arm["selfpara"]["details"]["evidence"]["rejected"]
    sc = by_arm["sc"]["details"]["evidence"]
    assert len(sc["answers"]) == 4 and all("cluster" in a for a in sc["answers"])
    assert by_arm["selfpara"]["cached_calls"] == 0
