"""The decision step: from a vote to the answer returned (text, withheld or not, flags), one rule for the
live run and every offline replay."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import NamedTuple

import pytest

from evaluation.datasets import save_items
from evaluation.records import Item, ItemVariant
from evaluation.revote import revote_run
from evaluation.runner import BenchConfig, RunOptions, run_bench
from selfpara.config import build_config
from selfpara.models.client import ModelClient
from selfpara.pipeline.decision import Decision, decide_answer, withhold_below
from selfpara.pipeline.equivalence import Equivalence, ExactMatch
from selfpara.pipeline.vote import vote
from selfpara.result import Answer
from selfpara.testing import PARAPHRASE_MARKER, FakeBackend, last_user_text


class Vote(NamedTuple):
    returned: int
    vote_share: float
    confidence: float = 1.0


ANSWERS = [Answer(variant=0, text="Paris"), Answer(variant=1, text="Lyon"), Answer(variant=2, text=None)]


@pytest.mark.parametrize(
    ("policy", "share", "expected"),
    [
        ("flag", 0.8, Decision(answer="Lyon")),
        ("flag", 0.5, Decision(answer="Lyon", flags=["low_vote_share"])),
        ("abstain", 0.8, Decision(answer="Lyon")),
        ("abstain", 0.5, Decision(answer="Not sure.", withheld="Lyon", flags=["low_vote_share"])),
        ("off", 0.1, Decision(answer="Lyon")),
    ],
)
def test_the_low_vote_share_policy_decides_text_withheld_and_flags(
    policy: str, share: float, expected: Decision
) -> None:
    cfg = build_config(low_vote_share=policy, low_vote_share_threshold=0.6, abstention_text="Not sure.")
    assert decide_answer(Vote(returned=1, vote_share=share), ANSWERS, cfg) == expected


def test_the_threshold_itself_is_not_low() -> None:
    cfg = build_config(low_vote_share="abstain", low_vote_share_threshold=0.6)
    assert decide_answer(Vote(1, 0.6), ANSWERS, cfg) == Decision(answer="Lyon")
    assert decide_answer(Vote(1, 0.59), ANSWERS, cfg).withheld == "Lyon"


@pytest.mark.parametrize(
    ("policy", "share", "confidence", "expected"),
    [
        ("flag", 0.25, 0.8, Decision(answer="Lyon")),  # a low vote share alone: the confidence decides now
        ("flag", 1.0, 0.69, Decision(answer="Lyon", flags=["low_confidence"])),
        ("abstain", 1.0, 0.69, Decision(answer="?", withheld="Lyon", flags=["low_confidence"])),
        ("abstain", 0.25, 0.7, Decision(answer="Lyon")),  # the threshold itself is not low
        ("off", 0.25, 0.1, Decision(answer="Lyon")),
    ],
)
def test_a_confidence_threshold_makes_the_policy_read_the_confidence(
    policy: str, share: float, confidence: float, expected: Decision
) -> None:
    cfg = build_config(low_vote_share=policy, confidence_threshold=0.7, abstention_text="?")
    assert decide_answer(Vote(1, share, confidence), ANSWERS, cfg) == expected


def test_a_confidence_threshold_gives_adaptive_k_no_share_to_keep_its_side_of() -> None:
    assert withhold_below(build_config(low_vote_share="abstain", confidence_threshold=0.7)) is None


def test_an_answer_without_text_returns_empty_and_a_missing_variant_is_an_error() -> None:
    cfg = build_config()
    assert decide_answer(Vote(2, 1.0), ANSWERS, cfg).answer == ""
    with pytest.raises(ValueError, match="variant 7"):
        decide_answer(Vote(7, 1.0), ANSWERS, cfg)


def test_only_a_withholding_policy_has_a_share_below_which_it_acts() -> None:
    assert withhold_below(build_config(low_vote_share="abstain", low_vote_share_threshold=0.7)) == 0.7
    assert withhold_below(build_config(low_vote_share="flag")) is None
    assert withhold_below(build_config(low_vote_share="off")) is None


async def test_a_vote_outcome_is_decided_as_is() -> None:
    answers = [Answer(variant=i, text=t) for i, t in enumerate(["Paris", "Lyon", "Lyon", "Nice"])]
    outcome = await vote("q", answers, Equivalence([ExactMatch()]))
    assert (outcome.returned, outcome.vote_share) == (1, 0.5)
    got = decide_answer(outcome, answers, build_config(low_vote_share="abstain", abstention_text="?"))
    assert got == Decision(answer="?", withheld="Lyon", flags=["low_vote_share"])


def _responder(model: str, messages: list, params: dict) -> str:
    text = last_user_text(messages)
    if PARAPHRASE_MARKER in text:
        return "1. Which city is the capital of Peru?\n2. Name the capital city of Peru.\n3. Peru's capital is?"
    return {"Which": "Lima", "Name": "Cusco", "Peru's": "Arequipa"}.get(text.split()[0], "Lima")


def test_a_revote_under_the_abstain_policy_withholds_as_the_live_run_would(tmp_path: Path) -> None:
    # the live run flags a 2-of-4 vote; the re-vote under abstain returns abstention_text, regraded
    items = [Item(id="pe", gold=["Lima"], variants=[ItemVariant(id=0, question="What is the capital of Peru?")])]
    data = save_items(items, tmp_path / "d.jsonl")
    client = ModelClient(backend=FakeBackend(_responder), retries=0, timeout_s=5)
    # fixed k, so that every paraphrase is answered (on the default embedded model it adapts)
    config = BenchConfig(
        dataset=str(data), arms=["selfpara[adaptive=false;renamings=false;paraphrase_method=list]"], k=3
    )
    asyncio.run(run_bench(config, tmp_path / "run", RunOptions(client=client, progress=False)))
    recorded = json.loads((tmp_path / "run" / "samples.jsonl").read_text().splitlines()[0])
    assert recorded["answer"] == "Lima" and recorded["details"]["vote_share"] == 0.5
    changed = asyncio.run(
        revote_run(
            tmp_path / "run",
            tmp_path / "re",
            {"low_vote_share": "abstain", "abstention_text": "Not sure."},
            arm="selfpara[adaptive=false;renamings=false;paraphrase_method=list]",
        )
    )
    assert [(c.before, c.after, c.label_after) for c in changed] == [("Lima", "Not sure.", "not_attempted")]
