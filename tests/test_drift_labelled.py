"""The default drift checks on the hand-labelled paraphrase candidates (docs/guards.md §1).

guards_sample.json holds Qwen's candidates under the older paraphrase prompt, drift_labels_round2.json
the default model's own (research/data/drift_labels_round2.md). What the default checks miss or
lose there today is listed below and reported in docs/guards.md: a rule that lets through another
drifted candidate, or rejects another faithful one, fails here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from selfpara.config import WrapConfig
from selfpara.pipeline.drift import DRIFT_CHECKS

DATA = Path(__file__).parents[1] / "research" / "data"

# Drifted candidates no cheap check reads: a dropped condition, a vaguer or another noun than the
# question's, a premise added, a garbled question.
KNOWN_MISSES = {
    "guards_sample.json": {
        "At what temperature does water boil in Celsius?",
        "What cells carry oxygen throughout the body?",
        "What job did Shonda Rhimes start in after she completed her high school education that became the "
        "foundation of her career in hospital work?",
    },
    "drift_labels_round2.json": {
        "At what time did World War II end?",
        "How many colors are listed in a rainbow?",
        "How many colors are there in a rainbow?",
        "How tall is the tallest animal generally recognized?",
        "In what year did the Russian Revolution subside?",
        'What artist did the famous painting "The Starry Night" depict?',
        "What continent is completely covered by ice?",
        "What is honey produced by bees?",
        "What is honey produced by honeybees?",
        "What is the geographic capital of Iceland?",
        "What is the geographic capital of Romania?",
        "What is the symbol commonly known as silver?",
        "What is the tallest animal there?",
        "What type of food do honeybees produce?",
        "When did the Soviet Union officially break away from Soviet leadership?",
        "When did the Wright brothers take their first flight?",
        "Where is Norway situated?",
        "Which city is located farthest from the capital in Estonia?",
        "Which city is the administrative capital of Italy?",
        "Which continent is completely covered by ice?",
        "Which continent is completely covered in ice?",
        "Which continent is entirely covered by ice?",
        "Which geographical region is dominated by ice cover?",
        "Which is the farthest city from the capital in Estonia?",
    },
}
# Faithful candidates the checks reject and no rule reads safely: a name left implicit or said by a
# historical synonym, an ordinal added, a hypernym of the relation, a description of the symbol.
KNOWN_LOSSES = {
    "guards_sample.json": {
        "How many bones are in a human body at its most mature stage?",
        "What was the name of the British leader who held office during the height of World War II?",
        "Which latitude bands does Ghana fall into?",
    },
    "drift_labels_round2.json": {
        "What is the most abundant gas in the atmosphere?",
        "What is the shorthand notation for zinc?",
        "What year did the Turkish forces capture Constantinople?",
        'Who created the artwork titled "The Starry Night"?',
        "Who was the first to propose the theory of relativity?",
    },
}


def labelled(name: str) -> list[tuple[str, str, str]]:
    """(question, candidate, label) of a labelled file: g good, c copy, d drifted."""
    data = json.loads((DATA / name).read_text())
    if "questions" in data:
        return [(q["question"], c["text"], c["label"]) for q in data["questions"] for c in q["candidates"]]
    return [(c["question"], c["text"], c["label"]) for c in data["candidates"]]


def rejected(question: str, paraphrase: str) -> bool:
    return any(DRIFT_CHECKS[name][1](question, paraphrase) for name in WrapConfig().drift_check_names)


@pytest.mark.parametrize("name", sorted(KNOWN_MISSES))
def test_drifted_candidates_stay_rejected(name):
    rows = labelled(name)
    assert sum(label == "d" for _, _, label in rows) > 80
    missed = {p for q, p, label in rows if label == "d" and not rejected(q, p)}
    assert missed <= KNOWN_MISSES[name]


@pytest.mark.parametrize("name", sorted(KNOWN_LOSSES))
def test_faithful_candidates_stay_kept(name):
    rows = labelled(name)
    lost = {p for q, p, label in rows if label != "d" and rejected(q, p)}
    assert lost <= KNOWN_LOSSES[name]
