from fractions import Fraction

import pytest

from selfpara.config import WrapConfig
from selfpara.pipeline.drift import (
    DRIFT_CHECKS,
    entities_changed,
    numbers_changed,
    qualifiers_changed,
    rates_changed,
)
from selfpara.pipeline.lexicon.quantities import number_set, numbers
from selfpara.pipeline.lexicon.text import with_synonyms_read
from selfpara.pipeline.paraphrase import drift_filter


@pytest.mark.parametrize(
    "text, values",
    [
        ("What is 20% of the number 50?", [20, 50]),
        ("What is twenty percent of fifty?", [20, 50]),
        ("How many bones? two hundred and six", [206]),
        ("1,000 apples, 2.0 pears and 1.5 million cells", [1000, 2, 1_500_000]),
        ("twenty-one and a hundred", [21, 100]),
        ("the 3rd time, the first time, twice, half", [3, 1, 2, Fraction(1, 2)]),
        ("double the time, triple the price", [2, 3]),
        ("Which one is larger, 3 or 4?", [3, 4]),  # a lone "one" is a pronoun
        ("H2O, vitamin B12 and version v1 are names; 5km is five", [5, 5]),
        ("In 1995, 2000 and 2005", [1995, 2000, 2005]),
        ("Paris", []),
    ],
)
def test_numbers_are_normalised(text, values):
    assert numbers(text) == [Fraction(v) for v in values]


def test_number_words_equal_digits():
    assert number_set("two trains, 60 miles") == number_set("2 trains, sixty miles")
    assert number_set("1,000 and 2.0") == number_set("one thousand and 2")


@pytest.mark.parametrize(
    "question, paraphrase, detail",
    [
        # "Tom had 3 apples and got 4 more" -> a rewording that forgot the 3
        (
            "If Tom had 3 apples and got 4 more, what is his total now?",
            "How many apples does Tom have after 4 more?",
            "dropped 3",
        ),
        (
            "At 60 miles per hour, how far will a train get in two hours?",
            "How long will a train take to cover 60 miles at 60 miles per hour?",
            "dropped 2",
        ),
        ("What is 48 minus 44?", "48 minus 44 equals 4.", "added 4"),
        ("How many meters are in 6 kilometers?", "How many meters are in 7 kilometers?", "dropped 6; added 7"),
    ],
)
def test_numbers_changed(question, paraphrase, detail):
    assert numbers_changed(question, paraphrase) == detail


@pytest.mark.parametrize(
    "question, paraphrase",
    [
        (
            "At 60 miles per hour, how far will a train get in two hours?",
            "How far does a train travel in 2 hours at sixty miles per hour?",
        ),
        ("What is 20% of the number 50?", "Find twenty percent of 50."),
        ("Which one is the capital of France?", "Name France's capital."),
        (
            "Peter wants to exercise for twice the time he did on Sunday, 23 minutes.",
            "Peter exercised 23 minutes on Sunday and wants double that time.",
        ),
    ],
)
def test_numbers_kept(question, paraphrase):
    assert numbers_changed(question, paraphrase) is None


def test_entities():
    changed = entities_changed
    assert changed("What is the capital of Turkey?", "What is the capital of this country?") == "dropped turkey"
    assert entities_changed("What is the capital of Canada?", "Name the Canadian capital.") is None
    assert entities_changed("What is the capital of France?", "Name the French capital city.") is None
    assert entities_changed("Who is the Dutch king?", "Who is the king of the Netherlands?") is None
    assert changed("Who won the Chilean National Prize in 2019?", "Who won Chile's national prize in 2019?") is None
    # sentence openers and stopwords are not names
    assert changed("Between which cities? Name them. Sam has 10 apples.", "Sam: 10 apples, which cities?") is None
    assert (
        changed("Each muffin sells for 2 dollars. Both ovens bake.", "Muffins sell at 2 dollars; ovens bake.") is None
    )


def test_qualifiers_dropped_or_added():
    q = "What is the capital of Canada?"
    assert qualifiers_changed(q, "What is the largest city in Canada?") == "dropped capital; added largest"
    assert qualifiers_changed(q, "Which city is Canada's capital?") is None
    assert qualifiers_changed("How many bones are in the adult human body?", "How many bones has a human?") == (
        "dropped adult"
    )
    assert qualifiers_changed("Which planet is largest?", "Which planet is the biggest?") is None
    assert qualifiers_changed("Who wrote Hamlet?", "Who was the main author of Hamlet?") == "added main"


def test_rates_keep_their_unit():
    q = "Each acre produces 5 tons of grapes per year. How many tons does her 10-acre farm produce per year?"
    assert rates_changed(q, "Her 10-acre farm produces 5 tons of grapes per year. How many tons per year?") == (
        "dropped per acre…"
    )
    assert rates_changed(q, "At 5 tons per acre every year, what does a 10-acre farm yield each year?") is None
    lena = "Lena buys 3 packs with 5 stickers in each pack. How many stickers?"
    assert rates_changed(lena, "How many stickers are in 3 packs with 5 in each?") is None  # unit implicit
    assert rates_changed("A train goes 14 km every hour. How far in 2 hours?", "How far does a train go in 2 hours?")


def test_drift_filter_keeps_order_and_names_the_first_failing_check():
    q = "Sam has 10 apples in Paris. He buys 20 more. How many now?"
    kept, rejected = drift_filter(
        q,
        [
            "After buying 20 more, how many apples does Sam have now?",
            "Sam, in Paris, has 10 apples and buys 20 more: how many in all?",
            "Someone has 10 apples and buys 20 more: how many now?",
        ],
        ["numbers", "entities"],
    )
    assert kept == ["Sam, in Paris, has 10 apples and buys 20 more: how many in all?"]
    assert [(r.reason, r.detail) for r in rejected] == [
        ("numbers_changed", "dropped 10"),
        ("entities_changed", "dropped paris, sam"),
    ]
    assert drift_filter(q, ["After buying 20 more, how many?"], [])[0] == ["After buying 20 more, how many?"]


def test_a_name_said_in_other_words_survives_only_where_the_question_does_not_use_those_words():
    # labelled set: good rewordings the entities check used to reject
    assert entities_changed("What is the largest ocean on Earth?", "What is the largest ocean in the world?") is None
    assert entities_changed("What is the largest ocean on Earth?", "Which ocean is the biggest on the planet?") is None
    assert (
        entities_changed(
            "Who was the first President of the United States?", "Who was the first head of state of the United States?"
        )
        is None
    )
    # "planet" already in the question cannot stand for Earth: the closest planet to the Sun is another one
    assert entities_changed("What is the closest planet to Earth?", "What is the closest planet?") == "dropped earth"
    assert entities_changed("What is the capital of France?", "What is the capital of the world?") == "dropped france"


def test_the_two_of_between_which_two_may_go_only_into_a_range():
    q = "Between which two latitudes does Ghana lie?"
    assert numbers_changed(q, "In what range of latitude does Ghana lie?") is None
    assert numbers_changed(q, "What is the latitude of Ghana?") == "dropped 2"  # one value: drifted
    assert numbers_changed(q, "Between which three latitudes does Ghana lie?") == "added 3"
    assert numbers_changed("Which two cities lie on the Danube?", "Which cities lie on the Danube, in range?") == (
        "dropped 2"
    )


def default_rejects(question: str, paraphrase: str) -> dict[str, str]:
    """Each default drift check that rejects `paraphrase`, with its detail."""
    checks = WrapConfig().drift_check_names
    return {name: detail for name in checks if (detail := DRIFT_CHECKS[name][1](question, paraphrase))}


@pytest.mark.parametrize(
    "question, paraphrase",
    [
        # capital: the seat of government, the city where the government sits (human wordings that moved
        # the vote, issue 37; all four were rejected as "dropped capital")
        ("What is the capital of Burkina Faso?", "Burkina Faso's seat of government is in which city?"),
        ("What is the capital of Kazakhstan?", "Kazakhstan's government sits in which city?"),
        ("What is the capital of France?", "What is the seat of government of France?"),
        ("What is the capital of France?", "What is the city where the government of France sits?"),
        # least: smallest, fewest (rejected as "dropped least; added smallest")
        ("Which planet has the least mass?", "Which planet has the smallest mass?"),
        ("Which country has the least people?", "Which country has the fewest people?"),
        ("What is the smallest continent by area?", "Which continent covers the least land area?"),
        # largest by area, tallest: "the most land area", "the greatest height" (human wordings)
        ("What is the largest country in the world by area?", "Which country covers the most land area on Earth?"),
        (
            "What is the tallest mountain in the world?",
            "What mountain has the greatest height above sea level in the world?",
        ),
        # most of: the majority of (round-2 labelled set)
        (
            "Which gas makes up most of the Earth's atmosphere?",
            "What is the gas that is the majority of the Earth's atmosphere?",
        ),
        # a name by its acronym or the other way round (round-2 set, human wordings)
        ("What is the currency of the United Kingdom?", "What is the currency of the UK?"),
        ("How many states are in the United States?", "What is the number of states in the USA?"),
        ("Who was the first President of the United States?", "Who served as the first US President?"),
        ("What is the currency of the UK?", "What is the currency of the United Kingdom?"),
        # the world wars by ordinal (human wordings: "dropped ii", "added 1")
        ("In what year did World War II end?", "What year did the Second World War end?"),
        ("In what year did World War I begin?", "What year did the First World War start?"),
        ("In what year did World War II end?", "When did WWII end?"),
        # a negative charge said as an adverb
        ("Which particle in an atom has a negative charge?", "What particle in an atom is negatively charged?"),
        # relations said otherwise: each passed before this round too, and must keep passing for the
        # renaming table of the vote's wordings
        ("Who wrote War and Peace?", "Who is the author of War and Peace?"),
        ("Who wrote War and Peace?", "War and Peace was written by whom?"),
        ("Who painted the Mona Lisa?", "Who is the painter of the Mona Lisa?"),
        ("Who painted the Mona Lisa?", "Which artist painted the Mona Lisa?"),
        ("Who painted the Mona Lisa?", "Who was the artist who painted the Mona Lisa?"),
        ("Who composed the Moonlight Sonata?", "Who is the composer of the Moonlight Sonata?"),
        ("Who invented the telephone?", "Who is the inventor of the telephone?"),
        ("Which element has atomic number 74?", "Which element has 74 protons?"),
        ("What element has the atomic number 74?", "The element with 74 protons is called what?"),
        ("What is the chemical symbol for gold?", "What is gold's symbol on the periodic table?"),
        ("In what year did the Berlin Wall fall?", "When, by year, was the Berlin Wall torn down?"),
        ("What year did the Berlin Wall fall?", "In which year did the Berlin Wall fall?"),
    ],
)
def test_faithful_renamings_pass_every_default_check(question, paraphrase):
    assert default_rejects(question, paraphrase) == {}


@pytest.mark.parametrize(
    "question, paraphrase, check, detail",
    [
        # the model's own confusion (issue 37; round-2 labelled set)
        (
            "What is the capital of France?",
            "What is the largest city in France?",
            "qualifiers",
            "dropped capital; added largest",
        ),
        (
            "What is the capital of Germany?",
            "Which is the most populous city in Germany?",
            "qualifiers",
            "dropped capital; added most, populous",
        ),
        (
            "What is the capital of Japan?",
            "Which is the smallest city in Japan?",
            "qualifiers",
            "dropped capital; added smallest",
        ),
        ("What is the capital of France?", "What is the seat of the French Academy?", "qualifiers", "dropped capital"),
        (
            "Which element has atomic number 74?",
            "Which element has atomic weight 74?",
            "asks",
            "dropped relation atomic number",
        ),
        (
            "Which element has atomic number 74?",
            "Which element has 74 neutrons?",
            "asks",
            "dropped relation atomic number",
        ),
        ("Who painted the Mona Lisa?", "Who drew the Mona Lisa?", "asks", "dropped relation painter"),
        ("Who painted the Mona Lisa?", "Who sculpted the Mona Lisa?", "asks", "dropped relation painter"),
        ("Who wrote War and Peace?", "Who composed War and Peace?", "asks", "dropped relation author"),
        # "smallest" is "least" only where what it qualifies is kept
        (
            "Which planet has the fewest moons?",
            "Which planet is the smallest?",
            "qualifiers",
            "fewest moons said as smallest",
        ),
        (
            "Which planet has the least mass?",
            "Which planet has the most mass?",
            "qualifiers",
            "dropped least; added most",
        ),
        # another name, another war, another charge
        (
            "What is the currency of the United Kingdom?",
            "What is the currency of the USA?",
            "entities",
            "dropped kingdom, united",
        ),
        (
            "When did the United States join World War I?",
            "When did the USSR join World War I?",
            "entities",
            "dropped states, united",
        ),
        ("In what year did World War II end?", "In what year did the First World War end?", "numbers", "added 1"),
        (
            "Which particle in an atom has a negative charge?",
            "Which particle in an atom has a positive charge?",
            "qualifiers",
            "dropped negative; added positive",
        ),
    ],
)
def test_renamings_that_change_the_question_stay_rejected(question, paraphrase, check, detail):
    assert default_rejects(question, paraphrase).get(check) == detail


def test_synonyms_keep_the_name_after_government():
    assert (
        with_synonyms_read("What is the city where the government of France sits?")
        == "What is the city where the capital of France?"
    )
    assert with_synonyms_read("Kazakhstan's government sits in which city?") == "Kazakhstan's capital in which city?"
    assert with_synonyms_read("Who heads the government of France?") == "Who heads the government of France?"
