"""The `core` equivalence: sentence answers that add the same thing to the question are one answer."""

from __future__ import annotations

import pytest

from selfpara.answer_core import answer_core, is_yes_no_question, same_core
from selfpara.equivalence import Equivalence, build_equivalence
from selfpara.llm import ModelClient

FRANCE = "What is the capital of France?"

SAME = [
    # the issue's own quick-start answers, which made three clusters out of one answer
    (FRANCE, "The capital of France is Paris.", "The capital of France's country is Paris."),
    (FRANCE, "The capital of France is Paris.", "The capital city of France's nation is Paris."),
    (FRANCE, "The capital of France's country is Paris.", "The capital city of France's nation is Paris."),
    ("What is the capital of Italy?", "The capital of Italy is Rome.", "The capital city of Italy is Rome."),
    ("What is 2+2?", "2 + 2 equals 4.", "The sum of 2 and 2 is 4."),
    ("How many legs does a spider have?", "A spider has eight legs.", "Spiders have 8 legs."),
    ("Is the Earth round?", "Yes, the Earth is round.", "Yes, it is roughly spherical."),
    ("What gas do plants absorb?", "Plants absorb carbon dioxide.", "Carbon dioxide is absorbed by plants."),
    # a longer answer may add details to what the shorter one states
    ("Who painted the Mona Lisa?", "Leonardo da Vinci.", "It was painted by Leonardo da Vinci in Florence."),
]

UNDECIDED = [
    ("What is 2+2?", "2 + 2 equals 4.", "2 + 2 equals 5."),
    ("What is the capital of Australia?", "The capital of Australia is Canberra.", "It is Sydney."),
    # a negation on one side only: the same names, opposite claims
    ("What is the capital of Australia?", "Canberra is the capital.", "Canberra is not the capital; Sydney is."),
    ("Is the Earth flat?", "Yes, it is.", "No, it is not."),
    # the two answers each name something the other does not
    ("Who wrote the Federalist Papers?", "Hamilton and Madison wrote them.", "Madison and Jay wrote them."),
    # an answer that only repeats the question states nothing to compare
    (FRANCE, "The capital of France.", "The capital of France is Paris."),
]


@pytest.mark.parametrize(("question", "a", "b"), SAME)
def test_answers_with_one_core_are_the_same(question: str, a: str, b: str) -> None:
    assert same_core(question, a, b) is True
    assert same_core(question, b, a) is True


@pytest.mark.parametrize(("question", "a", "b"), UNDECIDED)
def test_answers_whose_cores_differ_are_left_open(question: str, a: str, b: str) -> None:
    assert same_core(question, a, b) is None
    assert same_core(question, b, a) is None


def test_the_core_drops_the_question_and_the_framing() -> None:
    core = answer_core(FRANCE, "The capital city of France's nation is Paris.")
    assert core.names == {"paris"} and not core.numbers and not core.negated
    assert answer_core("What is 12 times 3?", "12 times 3 equals 36.").numbers == {36}


def test_yes_no_questions_are_recognised() -> None:
    assert is_yes_no_question("Is the Earth round?") and is_yes_no_question("does ice float?")
    assert not is_yes_no_question("What is the capital of France?")


async def test_in_the_default_local_chain_distinct_keeps_its_veto() -> None:
    chain = build_equivalence(
        ["exact", "numeric", "contains", "distinct", "core"], client=ModelClient(), judge_model="x"
    )
    question = "What is the capital of Australia?"
    same, by = await chain.decide(
        question, "The capital of Australia is Canberra.", "Australia's capital city is Canberra."
    )
    assert (same, by) == (True, "core")
    same, by = await chain.decide(
        question, "The capital of Australia is Canberra.", "The capital of Australia is Sydney."
    )
    assert (same, by) == (False, "distinct")
    same, by = await chain.decide(question, "Canberra is the capital.", "Canberra is not the capital; Sydney is.")
    assert (same, by) == (False, Equivalence.UNDECIDED)
