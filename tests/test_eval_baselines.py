"""Baselines at equal calls: sc at n = k + 1 samples, and single_call and rar end to end through the runner."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from evaluation.arms import make_arm, parse_arm_list, templates
from evaluation.bench_config import BenchConfig, RunOptions
from evaluation.datasets import save_items
from evaluation.records import Item, ItemVariant
from evaluation.report import build_report
from evaluation.runner import run_bench
from selfpara.errors import ConfigError
from selfpara.models.client import ModelClient
from selfpara.testing import FakeBackend, last_user_text

MODEL = "openai/fake"
LONG = (
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. "
    "Each clip was packed in a small paper bag that her brother folded by hand after school. "
    "How many clips did Natalia sell altogether in April and May?"
)


def client_for(responder: object) -> tuple[ModelClient, FakeBackend]:
    fake = FakeBackend(responder)  # type: ignore[arg-type]
    return ModelClient(backend=fake, retries=0, backoff_s=0.001, timeout_s=5), fake


def test_sc_n_sets_the_samples_in_all_and_the_run_k_does_not_override_it() -> None:
    client, _ = client_for(lambda model, messages, params: "Paris")
    arm = make_arm("sc[n=5]", client, MODEL, k=3)
    assert arm.label == "sc[n=5]" and arm.settings["k"] == 4 and arm.settings["n"] == 5
    assert make_arm("sc", client, MODEL, k=3).settings["k"] == 3  # no n: the run's k, k + 1 samples
    with pytest.raises(ConfigError, match="not both"):
        make_arm("sc[k=2;n=5]", client, MODEL)
    with pytest.raises(ConfigError, match="n must be between 2"):
        make_arm("sc[n=1]", client, MODEL)


async def test_sc_n_draws_n_seeded_samples() -> None:
    client, fake = client_for(lambda model, messages, params: "Paris")
    out = await make_arm("sc[n=5]", client, MODEL, k=3).answer(ItemVariant(id=0, question="Capital of France?"))
    assert len(fake.calls) == 5 and len({p["seed"] for _, _, p in fake.calls}) == 5
    assert out.details["samples"] == 5 and out.answer == "Paris"


def responder(model: str, messages: list, params: dict) -> str:
    system = str(messages[0]["content"])
    text = last_user_text(messages)
    if "Rephrase and expand" in system:
        return "Rephrased question: " + text.removeprefix("Question: ") + " Please count carefully."
    if templates.FINAL_MARKER in system:  # single_call: k rewordings, then the final line
        return "1. How many clips in all?\n2. Total clips sold in April and May?\n3. Sum of clips?\nFinal answer: 72"
    return "She sold 48 + 24 = 72. The answer is 72."


def test_sc_n_single_call_and_rar_run_end_to_end_at_their_call_budgets(tmp_path: Path) -> None:
    items = [
        Item(
            id="clips",
            kind="math",
            gold=["72"],
            variants=[ItemVariant(id=0, question=LONG), ItemVariant(id=1, question=LONG.replace("Natalia", "Nora"))],
        )
    ]
    dataset = save_items(items, tmp_path / "data.jsonl")
    arms = [s.label for s in parse_arm_list("raw,sc[n=5],single_call,rar,selfpara,oracle")]
    client, fake = client_for(responder)
    config = BenchConfig(dataset=str(dataset), model=MODEL, arms=arms, k=3, answers="worked", max_tokens=256)
    result = asyncio.run(run_bench(config, tmp_path / "run", RunOptions(progress=False, client=client)))
    assert result.complete and not result.failed
    by_arm = {r.arm: r for r in result.records if r.variant_id == 0}
    assert {a: by_arm[a].calls for a in ("raw", "sc[n=5]", "single_call", "rar", "oracle")} == {
        "raw": 1,
        "sc[n=5]": 5,
        "single_call": 1,
        "rar": 2,
        "oracle": 2,  # the wording and the item's one other wording
    }
    assert all(r.label == "correct" for r in result.records if r.arm in ("single_call", "rar", "sc[n=5]"))
    assert by_arm["single_call"].answer == "72" and by_arm["single_call"].details["final_line_found"] is True
    assert by_arm["rar"].details["rephrased"].endswith("Please count carefully.")
    # A long problem gets room for its rewordings and its rewrite (48 words: 2 and 3 tokens a word).
    words = len(LONG.split())
    budgets = {
        "single_call": 256 + 3 * 2 * words,
        "rar": 3 * words,
    }
    sent = {
        "single_call": [p["max_tokens"] for _, m, p in fake.calls if templates.FINAL_MARKER in str(m[0]["content"])],
        "rar": [p["max_tokens"] for _, m, p in fake.calls if "Rephrase and expand" in str(m[0]["content"])],
    }
    assert sent == {"single_call": [budgets["single_call"]] * 2, "rar": [budgets["rar"]] * 2}
    report = build_report(result.out, consistency=None, n_boot=20)
    assert report["totals"]["sc[n=5]"]["calls_per_answer"] == 5.0
    assert report["totals"]["single_call"]["calls_per_answer"] == 1.0


async def test_short_questions_keep_the_fixed_budgets_and_settings_still_fix_them() -> None:
    client, fake = client_for(responder)
    q = ItemVariant(id=0, question="Capital of France?")
    await make_arm("rar", client, MODEL).answer(q)
    await make_arm("rar[rephrase_max_tokens=20]", client, MODEL).answer(q)
    await make_arm("single_call[extra_tokens_per_paraphrase=5]", client, MODEL, k=2, max_tokens=10).answer(q)
    rephrase = [p["max_tokens"] for _, m, p in fake.calls if "Rephrase" in str(m[0]["content"])]
    assert rephrase == [96, 20]
    assert fake.calls[-1][2]["max_tokens"] == 10 + 2 * 5
    with pytest.raises(ConfigError, match=re.escape("rephrase_max_tokens must be between 8 and 4096")):
        make_arm("rar[rephrase_max_tokens=2]", client, MODEL)
