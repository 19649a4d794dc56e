"""The `asks` drift check: a short question's paraphrase must ask for what the question asks for."""

import pytest

from selfpara.pipeline.drift import DRIFT_CHECKS
from selfpara.pipeline.drift.asks import answer_type, asks, asks_changed, new_names, relations


@pytest.mark.parametrize(
    "question, paraphrase, detail",
    [
        # a false premise and a person turned into a book
        (
            "Who wrote War and Peace?",
            "Which book did Tolstoy write called War and Peace?",
            "asks for a thing (book), not a person",
        ),
        # another relation
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
        # labelled set (arithmetic-009, -018): numbers intact, another thing asked
        ("What is 48 minus 44?", "44 minus 48 equals?", "swapped operands: 44 - 48, not 48 - 44"),
        (
            "What is 48 minus 44?",
            "What is the result when 48 is subtracted from 44?",
            "swapped operands: 44 - 48, not 48 - 44",
        ),
        ("What is 12 times 12?", "How many times 12 is 12?", "asks for a quotient, not a product"),
        ("What is 32 divided by 4?", "What is 4 divided by 32?", "swapped operands: 4 / 32, not 32 / 4"),
        ("What is 9 plus 5?", "What is 9 times 5?", "asks for a product, not a sum"),
        # labelled set (people-014): a choice the question never offered
        (
            "Who was the first woman to win a Nobel Prize?",
            "Who was the first woman to win a Nobel Prize for physics or chemistry?",
            "added physics or chemistry",
        ),
        # held-out natural run: the symbol's meaning asked, not the symbol
        (
            "Which chemical symbol stands for gold?",
            "What does the chemical symbol for gold stand for?",
            "added relation abbreviation",
        ),
        (
            "Which chemical symbol stands for lead?",
            "What does the chemical symbol for lead signify?",
            "added relation meaning",
        ),
        # round-2 labelled set: a place of another size, a list for a number, another relation
        ("On which continent is Norway?", "In which country is Norway located?", "asks for a country, not a continent"),
        (
            "Which continent is Chile part of?",
            "Which country does Chile belong to?",
            "asks for a country, not a continent",
        ),
        (
            "How many colors are traditionally listed in a rainbow?",
            "Which traditional colors are included in a rainbow?",
            "asks which colors, not how many",
        ),
        ("Which colours are in a rainbow?", "How many colours are in a rainbow?", "asks how many colours, not which"),
        (
            "What currency is used in Germany?",
            "What is the predominant monetary system in Germany?",
            "asks for monetary predominant system, not currency",
        ),
        (
            "Which element has atomic number 74?",
            "Which element has an atomic mass of 74?",
            "dropped relation atomic number",
        ),
        # held-out ComQA wordings: a rewording that names the kind a bare "what" leaves open guesses it.
        # Over the recorded runs the model guessed right for 3 of 10 (the states bordering Colorado, West
        # Virginia, Tennessee) and wrong for 7 (a river, a sea, a strait, mountains, causes of death):
        # drift (docs/guards.md, "Fourth reading").
        (
            "What borders colorado on the west?",
            "Which state borders Colorado on the west?",
            "asks for a place (borders, colorado, state), not a thing",
        ),
        ("What killed danny gans?", "Who killed Danny Gans?", "asks for a person (-), not a thing"),
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
        # held-out ComQA wordings: an ordinal in digits ranks the head, it is not the head
        ("What is the 2nd smallest country in the world?", "Which country is the 2nd smallest in the world?"),
        ("What is the world 2nd smallest country?", "Which country is the 2nd smallest?"),
        # an owner's name before the head is not the head
        ("What is the world's 2nd smallest country in area?", "Which country is the 2nd smallest in area?"),
        ("What are the russia's three biggest cities?", "Which three largest cities are in Russia?"),
        # a word ending in "est" after the head is no rank that starts the head again
        ("What is the country northwest of chile?", "Which country is northwest of Chile?"),
        ("Which vitamin does the skin make in sunlight?", "When skin is in sunlight, which vitamin does it make?"),
        ("How many cards are in a standard deck?", "Please give the count of cards in a deck, which is standard."),
        ("Tom has 3 pens. How many pens does he have?", "However many pens Tom has, 3 pens. How many pens?"),
        # the sample set's own wordings of arithmetic items keep operation and order
        ("What is 48 minus 44?", "What do you get if you take 44 away from 48?"),
        ("What is 48 minus 44?", "Subtract 44 from 48. What is the result?"),
        ("What is 33 minus 8?", "What is the difference when 8 is subtracted from 33?"),
        ("What is 32 divided by 4?", "How many times does 4 go into 32?"),
        ("What is 16 divided by 8?", "If you split 16 into 8 equal parts, how big is each part?"),
        ("What is 12 times 12?", "How much is 12 x 12?"),
        ("What is 7 times 8?", "What is the product of 8 and 7?"),  # a product has no order
        ("What is forty-eight minus forty-four?", "How much is 48 - 44?"),
        ("Who wrote Hamlet, the play or the poem?", "Who wrote the play or poem Hamlet?"),  # the question offers it
        # held-out natural run: relation words read out of their sense
        ("Gold is written with which chemical symbol?", "Which chemical symbol represents gold?"),
        ("Which chemical symbol stands for lead?", "Which symbol corresponds to lead in chemistry?"),
        ("Name the country where Mount Kilimanjaro stands.", "In which country is Mount Kilimanjaro situated?"),
        ("What city serves as the capital of France?", "What's the capital of France?"),
        ("Who wrote War and Peace?", "By whom was War and Peace written?"),
        # renamed before reading: a seat of government is a place, a monetary unit the currency
        ("What is the capital of France?", "What is the seat of government of France?"),
        ("What is the currency of Japan?", "What is the monetary unit of Japan?"),
        (
            "Which part of the cell is known as the powerhouse of the cell?",
            "In the cell, which component is designated as the chief power generator?",
        ),
        ("Which element has atomic number 74?", "The element with 74 protons is called what?"),
        # the same size of place, a count asked as a number
        ("On which continent is Norway?", "Which continent does Norway belong to?"),
        ("What is the capital of France?", "Which city is the capital of France?"),
        ("How many squares are on a chessboard?", "What is the total number of squares on a chessboard?"),
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


def test_operation_reading():
    from selfpara.pipeline.lexicon.quantities import operation

    assert operation("How many times does 4 go into 32?") == ("quotient", (32, 4), True)
    assert operation("What is the difference between 9 and 4?") == ("difference", (9, 4), False)
    assert operation("What is the capital of France?") is None
    assert operation("Who ruled in 1990-1995?") is None  # an unspaced dash is a range, not a minus
