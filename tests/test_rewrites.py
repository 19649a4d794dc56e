"""Rewordings made by construction (selfpara.rewrites): scripted word problems, and the rewrites in a request."""

from __future__ import annotations

import re

import pytest

from selfpara import SelfParaphraser, UpstreamError
from selfpara.config import build_config
from selfpara.drift import DRIFT_CHECKS
from selfpara.errors import ConfigError
from selfpara.llm import ModelClient
from selfpara.paraphrase import LexicalFilter
from selfpara.prompts import PARAPHRASE_MARKER
from selfpara.quantities import numbers
from selfpara.rewrites import (
    REPLACEMENT_NAMES,
    digits_to_words,
    filtered_rewrites,
    number_words,
    people,
    rename,
    renames,
    reorder,
    rewrites,
    sentences,
    words_to_digits,
)
from selfpara.testing import FakeBackend, last_user_text

# Independent facts: each sentence stands alone, so any order states the same problem.
SHOP = (
    "Mia buys 3 apples for $2 each. Leo buys 4 pears for $5 each. Ava buys 12 plums for $1 each. "
    "How many dollars do Mia, Leo and Ava spend together?"
)
JANET = (
    "Janet’s ducks lay 16 eggs per day. She eats three for breakfast every morning and bakes muffins for her "
    "friends every day with four. She sells the remainder at the farmers' market daily for $2 per fresh duck egg. "
    "How much in dollars does Janet make every day at the farmers' market?"
)
DEFAULT_CHECKS = build_config().drift_check_names


def test_a_reordered_problem_keeps_every_number_and_the_question_last():
    moved = reorder(SHOP)
    assert moved is not None and moved != SHOP
    assert sorted(numbers(moved)) == sorted(numbers(SHOP))
    assert sentences(moved)[-1] == sentences(SHOP)[-1]
    assert sorted(sentences(moved)) == sorted(sentences(SHOP))  # the same sentences, in another order


@pytest.mark.parametrize(
    "problem",
    [
        JANET,  # "She sells the remainder" needs what comes before it
        "Tom has 3 apples. Mary has 2 pears. He gives her one apple. How many apples does Tom have?",
        "A box holds 14 pencils. The pencils cost $2 each. How much do 5 boxes cost?",  # "The pencils" refers back
        "Sam has 10 apples. How many apples does Sam have?",  # one fact: nothing to move
        "Sam has 10 apples. Kim has 4 apples. Sam gives 2 apples to Kim.",  # no question last
        "A ticket costs $20. Or you can buy one for $12. How much do you save?",  # "Or" joins the sentence before
    ],
)
def test_dependent_facts_are_not_moved(problem):
    assert reorder(problem) is None


def test_sentences_do_not_split_at_titles_or_decimals():
    text = "Mr. Bert pays $19.50 for 2 pens. Dr. Lee pays $3. How much do they pay?"
    assert sentences(text) == ["Mr. Bert pays $19.50 for 2 pens.", "Dr. Lee pays $3.", "How much do they pay?"]


def test_renamed_people_are_renamed_everywhere():
    problem = (
        "Raymond and Samantha are cousins. Raymond was born 6 years before Samantha. Raymond had a son at the "
        "age of 23. If Samantha is now 31, how many years ago was Raymond's son born?"
    )
    assert people(problem) == ["Raymond", "Samantha"]
    mapping = renames(problem)
    assert set(mapping) == {"Raymond", "Samantha"} and len(set(mapping.values())) == 2
    renamed = rename(problem, mapping)
    assert "Raymond" not in renamed and "Samantha" not in renamed
    for old, new in mapping.items():
        assert new in REPLACEMENT_NAMES and new.lower() not in problem.lower()
        assert renamed.count(new) == problem.count(old)  # every occurrence, possessive included
    assert f"{mapping['Raymond']}'s son" in renamed
    assert sorted(numbers(renamed)) == sorted(numbers(problem))


@pytest.mark.parametrize(
    "problem, expected",
    [
        (JANET, ["Janet"]),  # a possessive, with pronouns
        ("Marie ordered 3 meals. Marie paid $50. How many dollars did each meal cost?", ["Marie"]),  # acts
        # places owning sheep are not people; nor are weekdays, months, sentence openers or "San Rafael"
        ("Toulouse has twice as many sheep as Seattle. How many sheep does Seattle have if it has 20?", []),
        ("On Tuesdays, Kimo's class has two lessons. In May he has three. How many does he have?", ["Kimo"]),
        ("Two trains leave San Rafael. They travel 80 miles. How far do they go?", []),
        ("Every day, Wendi feeds her 3 chickens. How many cups does Wendi's flock need?", ["Wendi"]),
        ("Indras has 6 letters in her name. Her sister has 2 more. How many letters have they?", []),  # the name counts
        ("Jeans makeup artist charges her $25. She pays Jean. How much does Jean pay?", []),  # which name is unclear
    ],
)
def test_only_names_used_as_people_count(problem, expected):
    assert people(problem) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Janet sells 16 eggs for $2 each, 20% of them to Tom, and 1 to Kim.",
        "A 10-acre farm has 306 trees and 1,250 plants; it takes 45 minutes at 1:00 PM.",
        "It costs $80,000 and 3.5 kg weigh 999 grams, 2/5 of H2O and 30mph.",
    ],
)
def test_numbers_as_words_keep_their_values(text):
    spelled = digits_to_words(text)
    assert spelled != text
    assert sorted(numbers(spelled)) == sorted(numbers(text))
    assert sorted(numbers(words_to_digits(spelled))) == sorted(numbers(text))


def test_number_words():
    assert [number_words(n) for n in (7, 21, 40, 306, 1250)] == [
        "seven",
        "twenty-one",
        "forty",
        "three hundred six",
        "one thousand two hundred fifty",
    ]
    assert digits_to_words("20% off $5") == "Twenty percent off five dollars"  # a sentence opens capitalised
    assert digits_to_words("Pay 2 for pens and 4 for ink", every_other=True) == "Pay two for pens and 4 for ink"
    # spelled out, a list would read as one number ("eighty-nine, seventy-one" is 160)
    assert (
        digits_to_words("scores of 89, 71 and 92; 1 new one. 5 people")
        == "scores of 89, 71 and 92; 1 new one. 5 people"
    )
    assert digits_to_words("1 hour and 0 minutes") == "1 hour and 0 minutes"  # a lone "one" would read as a pronoun
    assert words_to_digits("Nine of the twenty-one kids, one of them") == "9 of the 21 kids, one of them"


def test_rewrites_pass_the_default_drift_checks_against_their_reference():
    made = rewrites(JANET, ["reorder", "numbers", "names"], limit=12)
    assert {r.kinds for r in made} >= {"names", "numbers", "names+numbers"}
    for r in made:
        assert all(DRIFT_CHECKS[n][1](r.reference, r.text) is None for n in DEFAULT_CHECKS), r
        assert sorted(numbers(r.text)) == sorted(numbers(JANET))
    renamed = next(r for r in made if r.kinds == "names")
    assert DRIFT_CHECKS["entities"][1](JANET, renamed.text) == "dropped janet"  # why the reference exists
    kept, rejected = filtered_rewrites(
        JANET, ["numbers", "names"], 2, LexicalFilter(JANET, 0.8, True, 2), DEFAULT_CHECKS
    )
    assert [r.kinds for r in kept] == ["names", "numbers"] and rejected == []
    # a reorder alone changes no word (a near-copy), so it only comes with another edit
    assert all(r.kinds != "reorder" for r in rewrites(SHOP, ["reorder", "numbers", "names"], limit=12))
    assert rewrites(SHOP, ["reorder"], limit=5) == []


def test_rewrites_setting_is_validated():
    assert build_config(rewrites="all").rewrite_kinds == ["reorder", "numbers", "names"]
    assert build_config(rewrites=" names , numbers").rewrite_kinds == ["names", "numbers"]
    assert build_config().rewrite_kinds == []
    with pytest.raises(ConfigError, match="unknown rewrite"):
        build_config(rewrites="shuffle")


def _answers_by_wording(reply):
    """A responder: the paraphrase call gets `reply` (or raises it); an answer call, a number per wording."""

    def respond(model, messages, params):
        text = last_user_text(messages)
        if PARAPHRASE_MARKER in text:
            if isinstance(reply, Exception):
                raise reply
            return reply
        return "18" if re.search(r"Janet|sixteen", text) else "20"

    return respond


def _make(responder, **settings):
    client = ModelClient(backend=FakeBackend(responder), retries=0, timeout_s=5)
    return SelfParaphraser(client=client, model="openai/fake", paraphrase_check="off", equivalence="exact", **settings)


async def test_rewrites_fill_the_slots_the_model_leaves():
    # the model's only paraphrase drops every fact: rejected; rewrites fill all three slots
    sp = _make(_answers_by_wording("1. How much does she make?"), k=3, rewrites="all")
    result = await sp.aanswer(JANET)
    rewritten = [v for v in result.variants[1:]]
    assert len(rewritten) == 3 and all(v.rewrite for v in rewritten)
    assert [v.rewrite for v in rewritten] == ["names", "numbers", "names+numbers"]
    assert result.rejected[0].reason == "numbers_changed"
    assert len(result.answers) == 4 and result.k_kept == 3
    # off (the default): the same request votes over the original alone
    plain = await _make(_answers_by_wording("1. How much does she make?"), k=3).aanswer(JANET)
    assert plain.k_kept == 0 and all(v.rewrite is None for v in plain.variants)


async def test_kept_paraphrases_come_first_and_rewrites_only_fill():
    good = (
        "1. Each day Janet's ducks lay 16 eggs; every morning she eats three for breakfast, every day she bakes "
        "with four, and she sells the rest daily at the farmers' market for $2 per fresh duck egg. How much in "
        "dollars does Janet make every day at the farmers' market?"
    )
    result = await _make(_answers_by_wording(good), k=2, rewrites="names,numbers").aanswer(JANET)
    assert [v.rewrite for v in result.variants[1:]] == [None, "names"]


async def test_a_failed_paraphrase_call_is_filled_with_rewrites():
    failing = UpstreamError("upstream down", status=400, retryable=False)
    result = await _make(_answers_by_wording(failing), k=2, rewrites="names").aanswer(JANET)
    assert "paraphrase_failed" in result.flags
    assert [v.rewrite for v in result.variants[1:]] == ["names", "names"]


async def test_paraphrase_only_fills_with_rewrites_too():
    sp = _make(_answers_by_wording("1. How much does she make?"), k=2, rewrites="numbers")
    kept, rejected = await sp.paraphrase(JANET)
    # all digits as words, then every other one: "sixteen ... two dollars", "sixteen ... $2"
    assert len(kept) == 2 and all("sixteen" in k for k in kept)
    assert "two dollars" in kept[0] and "$2" in kept[1]
    assert [r.reason for r in rejected] == ["numbers_changed"]


async def test_rewrites_come_before_top_up_and_work_with_adaptive_k():
    # one numbers edit applies (no one to rename, one number); top-up samples the slot left
    question = "A box holds 14 pencils. How many pencils are in a box?"
    sp = _make(_answers_by_wording("1. How many pencils?"), k=2, rewrites="all", top_up_temperature=0.7)
    result = await sp.aanswer(question)
    assert [(v.rewrite, v.top_up) for v in result.variants[1:]] == [("numbers", False), (None, True)]
    adaptive = await _make(_answers_by_wording("1. How much?"), k=3, rewrites="all", adaptive=True).aanswer(JANET)
    assert adaptive.answers and all(v.rewrite for v in adaptive.variants[1:])
