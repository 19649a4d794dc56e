"""The oracle arm (votes each wording with the item's other dataset wordings) and selfpara's efficiency against it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from evaluation.arms import make_arm
from evaluation.arms.oracle import other_wordings
from evaluation.bench_config import BenchConfig, RunOptions
from evaluation.cache import open_cache
from evaluation.datasets import save_items
from evaluation.records import Item, ItemVariant, SampleRecord
from evaluation.report import build_report, markdown_report, markdown_table, render_html
from evaluation.report.ceiling import UNDEFINED, efficiency
from evaluation.runner import run_bench
from selfpara.errors import ConfigError
from selfpara.models.client import ModelClient
from selfpara.pipeline.prompts import untagged
from selfpara.testing import PARAPHRASE_MARKER, FakeBackend, last_user_text

# Two items, four wordings each; the fake model's greedy answer to each wording.
WORDINGS = {
    "fr": ["Capital of France?", "France's capital city?", "Which city is France's capital?", "Name France's capital."],
    "jp": ["Capital of Japan?", "Japan's capital city?", "Which city is Japan's capital?", "Name Japan's capital."],
}
ANSWERS = {
    "fr": ["Lyon", "Paris", "Paris", "Paris"],
    "jp": ["Tokyo", "Tokyo", "Kyoto", "Osaka"],
}
GOLD = {"fr": "Paris", "jp": "Tokyo"}
BY_TEXT = {w: a for item in WORDINGS for w, a in zip(WORDINGS[item], ANSWERS[item], strict=True)}


def items() -> list[Item]:
    return [
        Item(
            id=name,
            gold=[GOLD[name]],
            variants=[ItemVariant(id=i, question=q) for i, q in enumerate(WORDINGS[name])],
        )
        for name in WORDINGS
    ]


def responder(model: str, messages: list, params: dict) -> str:
    text = last_user_text(messages)
    if PARAPHRASE_MARKER in text:  # the selfpara arm's call: copies only, which its filter rejects
        return "1. " + (untagged("question", text) or "")
    return BY_TEXT[text]


def run(tmp_path: Path, arms: list[str], k: int = 3) -> tuple[Any, FakeBackend]:
    fake = FakeBackend(responder)
    client = ModelClient(backend=fake, retries=0, backoff_s=0.001, timeout_s=5)
    dataset = save_items(items(), tmp_path / "data.jsonl")
    config = BenchConfig(dataset=str(dataset), model="openai/fake", arms=arms, k=k)
    options = RunOptions(progress=False, client=client, cache=open_cache(tmp_path / "calls.sqlite"))
    result = asyncio.run(run_bench(config, tmp_path / "run", options))
    return result, fake


def answers_of(result: Any, arm: str) -> dict[tuple[str, int], str | None]:
    return {(r.item_id, r.variant_id): r.answer for r in result.records if r.arm == arm}


# --- which wordings ------------------------------------------------------------------------


def test_each_wording_takes_the_k_wordings_that_follow_it_cyclically() -> None:
    item = items()[0]
    ids = {v.id: [o.id for o in other_wordings(item, v, 3)] for v in item.variants}
    assert ids == {0: [1, 2, 3], 1: [2, 3, 0], 2: [3, 0, 1], 3: [0, 1, 2]}
    ids = {v.id: [o.id for o in other_wordings(item, v, 2)] for v in item.variants}
    assert ids == {0: [1, 2], 1: [2, 3], 2: [3, 0], 3: [0, 1]}  # each wording serves twice
    assert [o.id for o in other_wordings(item, item.variants[1], 10)] == [2, 3, 0]  # fewer than k: all others


def test_wordings_with_another_context_are_left_out_and_an_unknown_wording_is_an_error() -> None:
    item = Item(
        id="x",
        gold=["a"],
        variants=[
            ItemVariant(id=0, question="q0", context="P"),
            ItemVariant(id=1, question="q1", context="Q"),
            ItemVariant(id=2, question="q2", context="P"),
        ],
    )
    assert [o.id for o in other_wordings(item, item.variants[0], 3)] == [2]
    with pytest.raises(ConfigError, match="no wording with id 7"):
        other_wordings(item, ItemVariant(id=7, question="q"), 3)


# --- votes, computed by hand -----------------------------------------------------------------


def test_oracle_votes_each_wording_with_the_others_as_computed_by_hand(tmp_path: Path) -> None:
    arms = ["raw", "oracle[equivalence=exact]", "oracle[equivalence=exact;overrule_margin=1]"]
    result, fake = run(tmp_path, arms)
    assert answers_of(result, "raw") == {(n, i): ANSWERS[n][i] for n in WORDINGS for i in range(4)}
    # Margin 2 (the default): fr-0 votes Lyon | Paris Paris Paris, Paris leads by 2 and overrules. jp-2 votes
    # Kyoto | Osaka Tokyo Tokyo and jp-3 Osaka | Tokyo Tokyo Kyoto: Tokyo leads by 1, so each keeps its own.
    assert answers_of(result, "oracle[equivalence=exact]") == {
        **{("fr", i): "Paris" for i in range(4)},
        ("jp", 0): "Tokyo",
        ("jp", 1): "Tokyo",
        ("jp", 2): "Kyoto",
        ("jp", 3): "Osaka",
    }
    # Margin 1: a one-vote lead overrules too.
    assert answers_of(result, "oracle[equivalence=exact;overrule_margin=1]") == {
        **{("fr", i): "Paris" for i in range(4)},
        **{("jp", i): "Tokyo" for i in range(4)},
    }
    record = next(r for r in result.records if r.arm == "oracle[equivalence=exact]" and r.variant_id == 2)
    assert record.details["oracle_wordings"] == [3, 0, 1] and record.details["k_kept"] == 3
    assert record.details["rejected"] == 0 and record.calls == 4  # the wording and 3 others; no paraphrase call
    # Every answer call is a greedy answer to one dataset wording: the oracle's are raw's calls, made once.
    assert len(fake.calls) == 8 and all(not r.error for r in result.records)
    assert not any(PARAPHRASE_MARKER in last_user_text(m) for _, m, _ in fake.calls)


def test_oracle_at_k_2_votes_with_the_next_two_wordings(tmp_path: Path) -> None:
    result, _ = run(tmp_path, ["oracle[equivalence=exact;overrule_margin=1]"], k=2)
    # fr-0: Lyon | Paris Paris (wordings 1, 2) -> Paris; fr-3: Paris | Lyon Paris -> Paris;
    # jp-1: Tokyo | Kyoto Osaka -> three clusters of 1, a tie kept by the wording itself -> Tokyo;
    # jp-2: Kyoto | Osaka Tokyo -> Kyoto; jp-3: Osaka | Tokyo Tokyo -> Tokyo.
    assert answers_of(result, "oracle[equivalence=exact;overrule_margin=1]") == {
        **{("fr", i): "Paris" for i in range(4)},
        ("jp", 0): "Tokyo",
        ("jp", 1): "Tokyo",
        ("jp", 2): "Kyoto",
        ("jp", 3): "Tokyo",
    }


async def test_the_oracle_needs_the_item_and_takes_selfpara_settings() -> None:
    client = ModelClient(backend=FakeBackend(responder), retries=0, timeout_s=5)
    arm = make_arm("ceiling[overrule_margin=1;equivalence=exact]", client, "openai/fake", k=4)
    assert arm.name == "oracle" and arm.config.k == 4 and arm.config.overrule_margin == 1
    assert arm.describe()["wordings"] == "cyclic-next"  # the choice is part of the config and the cache key
    with pytest.raises(ConfigError, match="other wordings"):
        await arm.answer(ItemVariant(id=0, question="Capital of France?"))
    with pytest.raises(ConfigError, match="oracle"):
        make_arm("oracle[no_such_setting=1]", client, "openai/fake")


# --- efficiency ------------------------------------------------------------------------------


def records(strict: dict[str, list[int]]) -> list[SampleRecord]:
    """Two wordings per question; a question is A_strict-correct for an arm when both of its answers are."""
    out = []
    for arm, per_question in strict.items():
        for q, ok in enumerate(per_question):
            for v in (0, 1):
                label = "correct" if ok or v == 1 else "incorrect"
                out.append(
                    SampleRecord(
                        item_id=f"q{q:02d}", variant_id=v, is_original=v == 0, arm=arm, answer="a", label=label
                    )
                )
    return out


def test_efficiency_is_selfparas_gain_over_the_oracles_with_a_paired_ci() -> None:
    # raw right on 2 of 10; the oracle on 8 (+0.6); selfpara on 5, all among the oracle's (+0.3): efficiency 0.5.
    strict = {
        "raw": [1, 1, 0, 0, 0, 0, 0, 0, 0, 0],
        "oracle": [1, 1, 1, 1, 1, 1, 1, 1, 0, 0],
        "selfpara": [1, 1, 1, 1, 1, 0, 0, 0, 0, 0],
    }
    [e] = efficiency(records(strict), [("selfpara", "oracle", "raw")], n_boot=400)
    assert e["questions"] == 10 and e["A_strict"] == {"selfpara": 0.5, "oracle": 0.8, "raw": 0.2}
    assert e["selfpara_gain"]["value"] == pytest.approx(0.3) and e["oracle_gain"]["value"] == pytest.approx(0.6)
    assert e["efficiency"] == pytest.approx(0.5) and e["note"] == ""
    # selfpara gains only where the oracle gains, so every resample's ratio lies in [0, 1].
    assert 0.0 <= e["lo"] <= 0.5 <= e["hi"] <= 1.0 and e["lo"] < e["hi"]
    assert e["oracle_gain"]["lo"] > 0


def test_efficiency_is_1_when_selfpara_matches_the_oracle_and_0_when_it_matches_raw() -> None:
    raw, oracle = [0] * 6 + [1] * 2, [1] * 6 + [1] * 2
    [same] = efficiency(records({"raw": raw, "oracle": oracle, "s": oracle}), [("s", "oracle", "raw")], n_boot=200)
    assert (same["efficiency"], same["lo"], same["hi"]) == (1.0, 1.0, 1.0)
    [none] = efficiency(records({"raw": raw, "oracle": oracle, "s": raw}), [("s", "oracle", "raw")], n_boot=200)
    assert (none["efficiency"], none["lo"], none["hi"]) == (0.0, 0.0, 0.0)
    # selfpara loses 2 of raw's questions and gains none: (−0.25) / (+0.75).
    worse = [0] * 8
    [neg] = efficiency(records({"raw": raw, "oracle": oracle, "s": worse}), [("s", "oracle", "raw")], n_boot=200)
    assert neg["efficiency"] == pytest.approx(-1 / 3)


@pytest.mark.parametrize(
    "oracle",
    [
        [1, 0, 0, 0, 1, 0, 0, 0],  # the oracle equals raw: gain 0
        [0, 0, 0, 0, 1, 0, 0, 0],  # the oracle is below raw
        [1, 1, 0, 0, 1, 0, 0, 0],  # +0.125, one question: its CI reaches 0
    ],
)
def test_efficiency_is_undefined_when_the_oracle_gains_nothing(oracle: list[int]) -> None:
    raw = [1, 0, 0, 0, 1, 0, 0, 0]
    selfpara = [1, 1, 1, 0, 1, 0, 0, 0]
    [e] = efficiency(records({"raw": raw, "oracle": oracle, "s": selfpara}), [("s", "oracle", "raw")], n_boot=300)
    assert e["efficiency"] is None and e["note"].startswith(UNDEFINED) and "oracle − raw = " in e["note"]
    assert e["selfpara_gain"]["value"] == pytest.approx(0.25)  # the gains are still reported


def test_report_shows_the_oracle_as_an_instrument_and_selfparas_efficiency(tmp_path: Path) -> None:
    result, _ = run(tmp_path, ["raw", "selfpara[equivalence=exact]", "oracle[equivalence=exact]"])
    report = build_report(result.out, consistency=None, n_boot=100)
    assert report["arms"] == ["raw", "selfpara[equivalence=exact]", "oracle[equivalence=exact]"]
    [e] = report["efficiency"]
    assert (e["selfpara"], e["oracle"], e["raw"]) == ("selfpara[equivalence=exact]", "oracle[equivalence=exact]", "raw")
    # raw: no question right on every wording; the oracle: fr (Paris on all four); selfpara (its paraphrase
    # call fails on this fake, so each wording is answered alone): as raw. Two questions: the CI reaches 0.
    assert e["A_strict"] == {"raw": 0.0, "oracle": 0.5, "selfpara": 0.0}
    assert e["efficiency"] is None and e["note"].startswith(UNDEFINED)
    for text in (markdown_table(report), markdown_report(report)):
        assert "selfpara's efficiency" in text and "undefined: the oracle gains nothing" in text
        assert "oracle[equivalence=exact] is a measuring instrument, not a method" in text
    html = render_html(report)
    assert 'id="tbl-efficiency"' in html and 'id="tbl-supply"' in html and "measuring instrument" in html


def test_a_run_without_an_oracle_says_what_the_efficiency_needs(tmp_path: Path) -> None:
    result, _ = run(tmp_path, ["raw", "oracle[equivalence=exact]"])
    report = build_report(result.out, consistency=None, n_boot=50)
    assert report["efficiency"] == []
    assert "--arms raw,selfpara,oracle" in markdown_report(report)
    assert "selfpara's efficiency" not in markdown_table(report)  # the terminal table shows it only when there is one
