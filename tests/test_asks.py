"""The `asks` drift check: a short question's paraphrase must ask for what the question asks for."""

import pytest

from selfpara.asks import answer_type, asks, asks_changed, new_names, relations
from selfpara.drift import DRIFT_CHECKS


@pytest.mark.parametrize(
    "question, paraphrase, detail",
    [
        # issue 21: a false premise and a person turned into a book
        (
            "Who wrote War and Peace?",
            "Which book did Tolstoy write called War and Peace?",
            "asks for a thing (book), not a person",
        ),
        # issue 21: another relation
        ("What is the chemical symbol of gold?", "What is the chemical name of gold?", "dropped relation symbol"),
        # labelled sample: a second question added
        (
            "How many bones are in the adult human body?",
            "How many bones are in the adult human body, and what is their composition?",
            "added a question",
        ),
        (
            "Who won the Chilean National Prize for Exact Sciences in 2019?",
            "In which year did Chile win the Chilean National Prize for Exact Sciences?",
            "asks for a time (year), not a person",
        ),
        (
            "Who was the first woman to win a Nobel Prize?",
            "Who was the first woman from Poland to win a Nobel Prize?",
            "added name poland",
        ),
    ],
)
def test_drift_that_asks_for_something_else_is_caught(question, paraphrase, detail):
    assert asks_changed(question, paraphrase) == detail


@pytest.mark.parametrize(
    "question, paraphrase",
    [
        ("Who wrote War and Peace?", "Who is the author of War and Peace?"),  # wrote ~ author
        ("Where is the Eiffel Tower?", "In which city is the Eiffel Tower located?"),  # a place either way
        ("How tall is Mount Everest?", "What is the height of Mount Everest?"),  # tall ~ height
        ("In what year did Yuri Gagarin fly?", "When did Yuri Gagarin fly?"),
        (
            "Who was the first President of the United States?",
            "What was the first person to hold the office of President of the United States?",
        ),
        ("What is the capital of Portugal?", "What is the city that serves as the capital of Portugal?"),
        ("How many states are in the United States?", "What is the number of states in the USA?"),  # an acronym
        ("What is the capital of France?", "Name the French capital, please."),  # a country's adjective
        ("In what year did the Titanic sink?", "What year did the RMS Titanic go down?"),  # a name extended
        ("What is the largest ocean on Earth?", "What is the largest ocean on the earth?"),
        ("Which vitamin does the skin make in sunlight?", "When skin is in sunlight, which vitamin does it make?"),
        ("How many cards are in a standard deck?", "Please give the count of cards in a deck, which is standard."),
        ("Tom has 3 pens. How many pens does he have?", "However many pens Tom has, 3 pens. How many pens?"),
    ],
)
def test_faithful_rewordings_pass(question, paraphrase):
    assert asks_changed(question, paraphrase) is None


def test_long_questions_are_not_read():
    long_q = " ".join(["Sam has 10 apples."] * 8) + " Who wrote it?"
    assert asks_changed(long_q, "Which book did Tolstoy write?") is None


def test_parts():
    assert answer_type("Who wrote it?") == ("person", frozenset())
    assert answer_type("In what year did it end?") == ("time", frozenset({"year"}))
    assert answer_type("What is the name of the British leader who won?")[0] == "person"  # type: ignore[index]
    assert answer_type("What is 12 times 12?") is None  # no head noun: arithmetic
    assert answer_type("Convert 6 km to metres.") is None
    assert relations("Who wrote it and how tall is he?") == {"author", "height"}
    assert asks("How many? If there are 2?") == 1  # a second '?' that asks nothing
    assert new_names("Who won in 2019?", "In 2019, who won the Nobel Prize?") == ["nobel", "prize"]


def test_registered_as_a_drift_check():
    reason, check = DRIFT_CHECKS["asks"]
    assert reason == "asks_changed" and check is asks_changed
