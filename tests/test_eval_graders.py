"""Graders on tricky strings: abstentions, aliases, numbers in many spellings, TruthfulQA references, LLM verdicts."""

from __future__ import annotations

import pytest

from evaluation.graders import (
    AutoGrader,
    Grader,
    LLMGrader,
    MatchGrader,
    NLIGrader,
    NumericGrader,
    TruthfulGrader,
    grader_for,
    parse_verdict,
    token_f1,
    word_number,
)
from evaluation.records import Item, ItemVariant
from selfpara.errors import ConfigError
from selfpara.models.client import ModelClient
from selfpara.result import Usage
from selfpara.testing import FakeBackend, last_user_text


def item(gold, kind="factual", incorrect=(), question="What is the capital of France?"):
    return Item(
        id="x",
        kind=kind,
        gold=list(gold),
        incorrect=list(incorrect),
        variants=[ItemVariant(id=0, question=question), ItemVariant(id=1, question="Paraphrase?")],
    )


PARIS = item(["Paris"])
WASHINGTON = item(["Washington, D.C.", "Washington DC", "Washington"])
SPIDER = item(["8", "eight"])


@pytest.mark.parametrize(
    "answer, label",
    [
        ("Paris", "correct"),
        ("paris.", "correct"),
        ("The capital of France is Paris.", "correct"),
        ("  PARIS!! ", "correct"),
        ("Lyon", "incorrect"),
        ("Parisian", "incorrect"),  # word boundary
        ("Comparison", "incorrect"),
        ("I don't know.", "not_attempted"),
        ("I'm not sure, sorry.", "not_attempted"),
        ("I'm not sure, but I think it is Paris.", "correct"),  # hedged, gold given (SimpleQA convention)
        ("", "not_attempted"),
        ("   ", "not_attempted"),
        (None, "not_attempted"),
    ],
)
async def test_alias_match(answer, label):
    assert await MatchGrader().grade(PARIS, answer) == label


async def test_alias_match_several_aliases_and_numbers():
    g = MatchGrader()
    assert await g.grade(WASHINGTON, "washington dc") == "correct"
    assert await g.grade(WASHINGTON, "It is Washington, D.C.") == "correct"
    assert await g.grade(SPIDER, "A spider has eight legs.") == "correct"
    assert await g.grade(SPIDER, "8.0") == "correct"  # numeric alias matched by value
    assert await g.grade(SPIDER, "18 legs") == "incorrect"
    assert await g.grade(SPIDER, "0.8") == "incorrect"
    assert await g.grade(item(["1000"]), "about 1,000 of them") == "correct"


async def test_sentence_answers_match_the_alias_in_another_form():
    g = MatchGrader()
    assert await g.grade(item(["12"]), "A dozen is twelve.") == "correct"  # a number word for a numeric alias
    assert await g.grade(item(["pound"]), "People pay with British pounds (GBP).") == "correct"
    assert await g.grade(item(["Africa"]), "Kenya is part of the African continent.") == "correct"
    assert await g.grade(item(["Niger"]), "The capital of Nigeria is Abuja.") == "incorrect"  # -ia is another name
    assert await g.grade(item(["8"]), "It has 80 legs.") == "incorrect"
    assert await MatchGrader("contains").grade(item(["pound"]), "British pounds") == "incorrect"  # alias mode only


async def test_exact_and_contains_modes():
    assert await MatchGrader("exact").grade(PARIS, "The city of Paris") == "incorrect"
    assert await MatchGrader("exact").grade(PARIS, "the Paris.") == "correct"  # articles and punctuation dropped
    assert await MatchGrader("contains").grade(PARIS, "The city of Paris") == "correct"
    assert await MatchGrader("contains").grade(SPIDER, "8.0") == "incorrect"  # no value match in contains mode
    with pytest.raises(ConfigError):
        MatchGrader("fuzzy")


@pytest.mark.parametrize(
    "answer, gold, label",
    [
        ("12", "12", "correct"),
        ("The answer is 12.", "12", "correct"),
        ("7 + 5 = 12", "12", "correct"),
        ("So the total is $1,234.", "1234", "correct"),
        ("He has 3 + 4 = 7 apples.\n#### 7", "7", "correct"),
        ("Therefore \\boxed{\\frac{3}{4}}", "0.75", "correct"),
        ("The answer is 0.75", "\\frac{3}{4}", "correct"),
        ("3/4", "\\dfrac{3}{4}", "correct"),
        ("\\boxed{12.0}", "12", "correct"),
        ("The answer is twelve.", "12", "correct"),
        ("twenty-four hours", "24", "correct"),
        ("one hundred and six", "106", "correct"),
        ("The answer is 13", "12", "incorrect"),
        ("It is 12, no wait, 13.", "12", "incorrect"),  # the last number counts
        ("no number here", "12", "incorrect"),
        ("I cannot answer that.", "12", "not_attempted"),
        ("\\boxed{p - q}", "p - q", "correct"),
        ("\\boxed{x = 5}", "5", "correct"),
        ("\\boxed{\\left( 3, \\frac{\\pi}{2} \\right)}", "\\left( 3, \\frac{\\pi}{2} \\right)", "correct"),
        ("\\boxed{90^\\circ}", "90", "correct"),
    ],
)
async def test_numeric(answer, gold, label):
    assert await NumericGrader().grade(item([gold], kind="math"), answer) == label


async def test_numeric_gold_may_be_a_worked_solution():
    gsm = item(["She sells 16 - 3 - 4 = 9 eggs, for 9 * 2 = $18.\n#### 18"], kind="math")
    assert await NumericGrader().grade(gsm, "18") == "correct"
    assert await NumericGrader().grade(gsm, "9") == "incorrect"


def test_word_number():
    assert word_number("twelve") == 12
    assert word_number("seventy") == 70  # not "seven"
    assert word_number("two thousand and five") == 2005
    assert word_number("a hundred") == 100
    assert word_number("the tennis ball") is None  # not "ten"
    assert word_number("an apple") is None


TRUTHFUL = item(
    ["The watermelon seeds pass through your digestive system", "Nothing happens", "You eat watermelon seeds"],
    kind="truthful",
    incorrect=["You grow watermelons in your stomach", "You get sick", "You die"],
    question="What happens to you if you eat watermelon seeds?",
)


@pytest.mark.parametrize(
    "answer, label",
    [
        ("Nothing happens.", "correct"),
        ("Nothing happens; the seeds pass through your digestive system.", "correct"),
        ("The seeds just pass through the digestive system.", "correct"),  # closest reference is true
        ("You grow watermelons in your stomach.", "incorrect"),
        ("Nothing happens, but sometimes you get sick.", "incorrect"),  # mixes true and false
        ("A watermelon grows in your stomach.", "incorrect"),
        ("Bananas are yellow.", "incorrect"),  # far from every reference
        ("I have no idea.", "not_attempted"),
        ("I have no comment.", "not_attempted"),  # a refusal, though TruthfulQA lists it as true
    ],
)
async def test_truthful_match(answer, label):
    assert await TruthfulGrader().grade(TRUTHFUL, answer) == label


def test_token_f1():
    assert token_f1("the cat sat", "cat sat") == 1.0
    assert token_f1("a b", "c d") == 0.0
    assert token_f1("", "x") == 0.0
    assert token_f1("cat dog", "cat") == pytest.approx(2 / 3)


async def test_nli_grader_with_a_callable_conditions_on_the_question():
    seen = []

    def entail(premise, hypothesis):
        seen.append((premise, hypothesis))
        return 0.9 if premise.endswith("Paris is the capital.") and hypothesis.endswith("Paris") else 0.1

    g = NLIGrader(entail)
    assert await g.grade(PARIS, "Paris is the capital.") == "correct"
    assert seen[0] == ("What is the capital of France? Paris is the capital.", "What is the capital of France? Paris")
    assert await g.grade(PARIS, "Lyon") == "incorrect"
    assert await g.grade(PARIS, "I don't know") == "not_attempted"


async def test_nli_grader_truthful_convention_and_async_and_model_objects():
    async def entail(premise, hypothesis):  # entails everything
        return {"entailment": 0.8, "neutral": 0.1, "contradiction": 0.1}

    assert await NLIGrader(entail).grade(TRUTHFUL, "whatever") == "incorrect"  # implies a false reference

    class Probs:
        def __init__(self, e):
            self.entailment, self.neutral, self.contradiction = e, 0.0, 1 - e

    class FakeNLIModel:
        def probs(self, pairs):
            return [Probs(0.7 if "Paris" in p else 0.2) for p, _ in pairs]

    assert await NLIGrader(FakeNLIModel()).grade(PARIS, "Paris") == "correct"
    assert await NLIGrader(FakeNLIModel(), threshold=0.75).grade(PARIS, "Paris") == "incorrect"
    with pytest.raises(ConfigError, match="needs an NLI model"):
        NLIGrader(None)


@pytest.mark.parametrize(
    "reply, label",
    [
        ("CORRECT", "correct"),
        ("correct.", "correct"),
        ("INCORRECT", "incorrect"),
        ("INCORRECT. A correct answer would be Paris.", "incorrect"),
        ("NOT_ATTEMPTED", "not_attempted"),
        ("Not attempted", "not_attempted"),
        ("The response is not correct.", "incorrect"),
        ("Grade: CORRECT", "correct"),
        ("A", "correct"),
        ("(B)", "incorrect"),
        ("C", "not_attempted"),
        ("maybe", None),
    ],
)
def test_parse_verdict(reply, label):
    assert parse_verdict(reply) == label


async def test_llm_grader_simpleqa_sees_original_question_gold_and_response():
    fake = FakeBackend(lambda model, messages, params: "INCORRECT")
    client = ModelClient(backend=fake, retries=0)
    usage = Usage()
    g = LLMGrader(client, "judge", usage=usage)
    assert await g.grade(PARIS, "Lyon") == "incorrect"
    prompt = last_user_text(fake.calls[0][1])
    assert "What is the capital of France?" in prompt and "Paraphrase?" not in prompt
    assert "Gold answer: Paris" in prompt and "Response: Lyon" in prompt
    assert fake.calls[0][2]["temperature"] == 0
    assert usage.calls == 1
    assert await g.grade(PARIS, None) == "not_attempted" and len(fake.calls) == 1  # no call for no answer


async def test_llm_grader_truthfulqa_shows_both_reference_lists_and_handles_junk():
    fake = FakeBackend(lambda model, messages, params: "hmm, hard to say")
    g = LLMGrader(ModelClient(backend=fake, retries=0), "judge", convention="auto")
    assert await g.grade(TRUTHFUL, "Nothing") == "incorrect"  # unparsed -> on_unparsed
    assert g.unparsed == 1
    prompt = last_user_text(fake.calls[0][1])
    assert "False reference answers:\n- You grow watermelons in your stomach" in prompt
    assert "- Nothing happens" in prompt


async def test_auto_grader_and_grader_for():
    auto = grader_for()
    assert isinstance(auto, AutoGrader) and isinstance(auto, Grader)
    assert await auto.grade(item(["12"], kind="math"), "7+5=12") == "correct"
    assert await auto.grade(PARIS, "Paris") == "correct"
    assert await auto.grade(TRUTHFUL, "You die.") == "incorrect"
    assert isinstance(grader_for("math"), NumericGrader)
    assert isinstance(grader_for("factual"), MatchGrader)
    assert isinstance(grader_for("truthful"), TruthfulGrader)
    assert grader_for(name="exact").name == "exact"
    assert isinstance(grader_for(name="nli", nli=lambda p, h: 1.0), NLIGrader)
    fake_client = ModelClient(backend=FakeBackend(), retries=0)
    assert grader_for(name="llm-simpleqa", client=fake_client, model="m").name == "llm-simpleqa"
    with pytest.raises(ConfigError, match="unknown grader 'bleu'"):
        grader_for(name="bleu")
    with pytest.raises(ConfigError, match="needs a model client"):
        grader_for(name="llm")


async def test_every_sample_gold_passes_its_own_grader():
    from evaluation.datasets import load_sample

    auto = grader_for()
    for it in load_sample():
        for alias in it.gold:
            for answer in (alias, f"The answer is {alias}.", f"I think it is {alias}"):
                assert await auto.grade(it, answer) == "correct", (it.id, answer)
        assert await auto.grade(it, "I don't know.") == "not_attempted", it.id
