from selfpara.pipeline.lexicon import quantities
from selfpara.pipeline.lexicon.text import contains_phrase, is_abstention, normalize_answer, overlap, words


def test_words_are_lowercase_alnum_apostrophe_tokens():
    assert words("Don't STOP—it's 3.5 km!") == ["don't", "stop", "it's", "3", "5", "km"]


def test_overlap_is_multiset_intersection_over_shorter():
    assert overlap("the cat the dog", "the the") == 1.0
    assert overlap("a b c d", "a x") == 0.5
    assert overlap("", "anything") == 1.0


def test_normalize_answer_drops_case_punctuation_articles():
    assert normalize_answer("The  Eiffel Tower!") == "eiffel tower"


def test_abstention_detection():
    assert is_abstention("I don't know.")
    assert is_abstention("I'm not sure about that.")
    assert not is_abstention("Paris")
    assert not is_abstention("Unknowns aside, the answer is Paris " + "word " * 50)


def test_contains_phrase_on_word_boundaries():
    assert contains_phrase("The capital is Paris.", "paris")
    assert not contains_phrase("Parisian food", "Paris")


def test_math_final_answer_forms():
    assert quantities.final_answer(r"so \boxed{\frac{1}{2}} done") == r"\frac{1}{2}"
    assert quantities.final_answer("work...\n#### 1,200") == "1,200"
    assert quantities.final_answer("The answer is 7.") == "7"
    assert quantities.final_answer("3 apples and 4 pears") == "4"
    assert quantities.final_answer("no numbers") is None


def test_math_values_compare_by_value():
    assert quantities.same_value("0.5", r"\frac{1}{2}")
    assert quantities.same_value("1,200", "1200")
    assert quantities.same_value("$5", "5")
    assert not quantities.same_value("5", "6")
    assert quantities.same_value("x + 1", "x+1")
    assert quantities.to_number("3/0") is None


def test_hedged_answer_is_not_an_abstention():
    assert not is_abstention("I'm not sure, but it's Lyon.")
    assert is_abstention("I don't know. Sorry about that.")
