"""The confidence baselines on a scripted fake model: semantic entropy (se), rewordings × samples (hybrid),
raw's token probability, at selfpara's call budget; and the report that puts them side by side."""

from __future__ import annotations

import asyncio
import math
import re
from pathlib import Path
from typing import Any

import pytest

from evaluation.arms import make_arm, templates
from evaluation.arms.hybrid import hybrid_wordings
from evaluation.datasets import save_items
from evaluation.records import Item, ItemVariant
from evaluation.report import build_report, render_html
from evaluation.report.plots import ARM_COLORS
from evaluation.runner import BenchConfig, RunOptions, run_bench
from selfpara.errors import ConfigError
from selfpara.models.client import ModelClient
from selfpara.pipeline.prompts import FORM_MARKER, SHORT_FORMS
from selfpara.result import Completion
from selfpara.testing import PARAPHRASE_MARKER, FakeBackend, last_user_text

# The embedded model paraphrases with one call per form (three at k=3, scripted here: each takes the
# scripted list's line of its form), and no renaming reads the question.
MODEL = "local/smollm2"
Q = ItemVariant(id=0, question="Capital of France, please?")
FORMS = 3
PARAPHRASES = "1. Which city serves as France's capital?\n2. Name the French capital city.\n3. Tell me France's seat."


def client_for(responder: Any) -> tuple[ModelClient, FakeBackend]:
    fake = FakeBackend(responder)
    return ModelClient(backend=fake, retries=0, backoff_s=0.001, timeout_s=5), fake


def by_seed(answers: dict[int, str], paraphrases: str = PARAPHRASES) -> Any:
    """A model that paraphrases by `paraphrases` and answers by the call's seed (`answers`, else Paris)."""

    def respond(model: str, messages: list, params: dict) -> str:
        text = last_user_text(messages)
        if PARAPHRASE_MARKER in text:
            lines = paraphrases.splitlines()
            form = next((i for i, f in enumerate(SHORT_FORMS) if f.instruction in text), 0)
            return lines[form % len(lines)] if FORM_MARKER in text else paraphrases
        return answers.get(params.get("seed", -1), "Paris")

    return respond


def answer_calls(fake: FakeBackend) -> list[tuple[str, dict[str, Any]]]:
    return [(last_user_text(m), p) for _, m, p in fake.calls if PARAPHRASE_MARKER not in last_user_text(m)]


async def test_se_samples_the_original_k_plus_2_times_at_temperature_1_selfparas_budget() -> None:
    client, fake = client_for(by_seed({1: "Lyon"}))  # sample 0 (seed 1) says Lyon, the four others Paris
    out = await make_arm("se", client, MODEL, k=3).answer(Q, "factual", seed=0)
    calls = answer_calls(fake)
    assert out.usage.calls == len(fake.calls) == 5  # selfpara at k=3: 1 paraphrase call + 4 answers
    assert {text for text, _ in calls} == {Q.question} and {p["temperature"] for _, p in calls} == {1.0}
    assert len({p["seed"] for _, p in calls}) == 5
    assert out.answer == "Paris" and out.details["samples"] == 5
    # the confidence is the largest cluster's share; the entropy of the shares 4/5, 1/5 is recorded beside it
    assert out.details["confidence"] == pytest.approx(4 / 5) == out.details["vote_share"]
    assert out.details["entropy"] == pytest.approx(-(0.8 * math.log(0.8) + 0.2 * math.log(0.2)), abs=1e-4)


async def test_se_breaks_a_tie_as_selfparas_vote_does_and_takes_m() -> None:
    client, fake = client_for(by_seed({1: "Lyon", 2: "Lyon", 3: "Paris", 4: "Paris"}))
    arm = make_arm("se[m=4;equivalence=exact]", client, MODEL, k=3)
    assert arm.describe()["settings"]["m"] == 4 and "k" not in arm.describe()["settings"]
    out = await arm.answer(Q, "factual", seed=0)
    assert len(fake.calls) == 4 and out.answer == "Lyon"  # two against two: the cluster of sample 0
    assert out.details["confidence"] == pytest.approx(0.5)
    assert make_arm("se", client, MODEL, k=5).settings["m"] == 7
    with pytest.raises(ConfigError, match="give one of k, m"):
        make_arm("se[k=3;m=5]", client, MODEL)


async def test_hybrid_answers_each_kept_wording_twice_at_selfparas_budget() -> None:
    client, fake = client_for(by_seed({}))
    out = await make_arm("hybrid", client, MODEL, k=3).answer(Q, "factual", seed=0)
    calls = answer_calls(fake)
    assert out.usage.calls == len(fake.calls) == FORMS + 4  # selfpara's form calls, (k + 1) = 4 answers: 2 × 2
    template = templates.answer_messages(Q.question, "factual")[-1]["content"]
    asked = [text for text, _ in calls]
    assert sorted(asked) == sorted([template] * 2 + ["Which city serves as France's capital?"] * 2)
    assert {p["temperature"] for _, p in calls} == {1.0} and len({p["seed"] for _, p in calls}) == 4
    assert out.details["wordings"] == 2 and out.details["samples_per_wording"] == 2
    assert out.details["paraphrases"] == ["Which city serves as France's capital?"]
    assert out.details["confidence"] == pytest.approx(5 / 6)  # four agreeing answers: (4 + 1) / (4 + 2)


async def test_hybrid_makes_the_same_paraphrase_call_as_selfpara() -> None:
    client, fake = client_for(by_seed({}))
    await make_arm("hybrid", client, MODEL, k=3).answer(Q, "factual")
    await make_arm("selfpara[adaptive=false]", client, MODEL, k=3).answer(Q, "factual")
    paraphrase_calls = [(m, p) for _, m, p in fake.calls if PARAPHRASE_MARKER in last_user_text(m)]
    assert len(paraphrase_calls) == 2 * FORMS and paraphrase_calls[:FORMS] == paraphrase_calls[FORMS:]  # cached once


async def test_hybrid_fills_a_rejected_paraphrases_calls_with_samples_of_the_original() -> None:
    client, fake = client_for(by_seed({}, paraphrases="1. Capital of France, please?"))  # a copy
    out = await make_arm("hybrid", client, MODEL, k=3).answer(Q, "factual")
    assert out.usage.calls == FORMS + 4 and out.details["wordings"] == 1 and out.details["paraphrases"] == []
    assert len({text for text, _ in answer_calls(fake)}) == 1


def test_hybrid_wordings_lay_out_the_calls() -> None:
    assert hybrid_wordings("q", ["p1", "p2", "p3"], 4, 2) == (["q", "p1", "p1"], 1)
    assert hybrid_wordings("q", ["p1", "p2"], 6, 2) == (["q", "p1", "p1", "p2", "p2"], 2)
    assert hybrid_wordings("q", ["p1"], 6, 2) == (["q", "p1", "p1", "q", "q"], 1)  # calls refilled
    assert hybrid_wordings("q", ["p1", "p2"], 5, 2) == (["q", "p1", "p1", "q"], 1)  # the remainder: the original


def test_hybrid_needs_two_wordings() -> None:
    client, _ = client_for(by_seed({}))
    with pytest.raises(ConfigError, match="samples must be between 1 and 2"):
        make_arm("hybrid[samples=4]", client, MODEL, k=3)


async def test_raw_confidence_is_the_answers_geometric_mean_token_probability() -> None:
    client, _ = client_for(lambda model, messages, params: Completion(text="Paris", logprob=-0.25))
    out = await make_arm("raw", client, MODEL).answer(Q, "factual")
    assert out.details["confidence"] == pytest.approx(math.exp(-0.25)) and out.details["logprob"] == -0.25
    client, _ = client_for(lambda model, messages, params: "Paris")  # a backend that reports none
    assert "confidence" not in (await make_arm("raw", client, MODEL).answer(Q, "factual")).details


def _bench_responder(model: str, messages: list, params: dict) -> Completion | str:
    text = last_user_text(messages)
    hard = "Peru" in text
    if PARAPHRASE_MARKER in text:  # one line per form: the form's own
        c = "Peru" if hard else "France"
        lines = [f"Which city serves as the capital of {c}?", f"Name the capital city of {c}.", f"{c}: capital city?"]
        return lines[next((i for i, f in enumerate(SHORT_FORMS) if f.instruction in text), 0) % 3]
    if params.get("seed") is None:  # greedy: raw, selfpara
        return Completion(text="Cusco" if hard else "Paris", logprob=-1.0 if hard else -0.1)
    return ("Lima", "Cusco", "Arequipa")[params["seed"] % 3] if hard else "Paris"


def test_the_report_puts_the_arms_confidences_side_by_side_at_their_calls(tmp_path: Path) -> None:
    items = [
        Item(id=f"{c}-{i}", gold=[g], variants=[ItemVariant(id=0, question=f"Capital of {c}, please?")])
        for i in range(3)
        for c, g in (("France", "Paris"), ("Peru", "Lima"))
    ]
    data = save_items(items, tmp_path / "d.jsonl")
    # doubt first off: the arms are compared at the calls each spends on every question
    arms = ["raw", "se", "selfpara[adaptive=false;sure_probability=off]", "hybrid"]
    client, _ = client_for(_bench_responder)
    config = BenchConfig(dataset=str(data), model=MODEL, arms=arms, k=3, limit=None)
    result = asyncio.run(run_bench(config, tmp_path / "run", RunOptions(progress=False, client=client)))
    assert result.complete and not result.failed
    report = build_report(result.out, consistency=None, n_boot=20)
    assert set(report["confidence"]) == set(arms)
    calls = {a: report["totals"][a]["calls_per_answer"] for a in arms}
    # hybrid spends selfpara's calls (its form calls, the same ones, and k + 1 answers); se, k + 2 samples
    assert calls == {"raw": 1.0, "se": 5.0, "selfpara[adaptive=false;sure_probability=off]": 7.0, "hybrid": 7.0}
    for arm in arms:
        signal = report["confidence"][arm]["signals"]["confidence"]
        assert signal["auroc"] == 1.0 and signal["prr"] == pytest.approx(1.0)  # every arm is surer when right
        assert set(signal["coverage"]) == {"0.5", "0.8", "0.9", "1"} and signal["ece"] is not None
    page = render_html(report)
    table = page.split('id="tbl-selective"', 1)[1].split("</table>", 1)[0]
    assert all(arm in table for arm in arms) and "5.00" in table
    # one colour per arm kind in every figure: the risk–coverage curves use the arms' own
    figure = page.split('id="fig-risk-coverage-svg"', 1)[1].split("</svg>", 1)[0]
    for kind in ("raw", "se", "selfpara", "hybrid"):
        assert f'stroke="{ARM_COLORS[kind]}"' in figure
    accuracy = page.split('id="fig-accuracy-svg"', 1)[1].split("</svg>", 1)[0]
    assert re.search(rf'fill="{ARM_COLORS["se"]}"><title>se A_orig', accuracy)


@pytest.mark.model
def test_the_confidence_arms_on_the_real_small_model(tmp_path: Path) -> None:
    # SmolLM2-135M in process: raw's token probability is a real one, se and hybrid spend selfpara's calls
    items = [
        Item(id="fr", gold=["Paris"], variants=[ItemVariant(id=0, question="What is the capital of France?")]),
        Item(id="jp", gold=["Tokyo"], variants=[ItemVariant(id=0, question="What is the capital of Japan?")]),
    ]
    data = save_items(items, tmp_path / "d.jsonl")
    config = BenchConfig(
        dataset=str(data), model="local/smollm2", arms=["raw", "se", "hybrid"], k=3, limit=None, max_tokens=12
    )
    result = asyncio.run(run_bench(config, tmp_path / "run", RunOptions(progress=False, concurrency=4)))
    assert result.complete and not result.failed
    by_arm = {(r.arm, r.item_id): r for r in result.records}
    for item in ("fr", "jp"):
        assert 0.0 < by_arm[("raw", item)].details["confidence"] <= 1.0
        # se: k + 2 samples; hybrid: selfpara's paraphrase calls (none where the renamings fill the slots,
        # one per form otherwise) and k + 1 answers
        assert by_arm[("se", item)].calls == 5 and 4 <= by_arm[("hybrid", item)].calls <= 4 + 3
        assert by_arm[("se", item)].details["confidence"] in {k / 5 for k in range(1, 6)}
    report = build_report(result.out, consistency=None, n_boot=20)
    assert set(report["confidence"]) == {"raw", "se", "hybrid"}
