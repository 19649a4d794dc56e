import pytest

from selfpara.models.client import ModelClient
from selfpara.pipeline.equivalence import (
    ContainsMatch,
    DistinctAnswers,
    Equivalence,
    ExactMatch,
    LLMJudge,
    NumericMatch,
    build_equivalence,
)
from selfpara.result import Usage
from selfpara.testing import FakeBackend


async def test_exact_decides_only_equal():
    assert await ExactMatch()("q", "The Paris.", "paris", None) is True
    assert await ExactMatch()("q", "Paris", "Lyon", None) is None


async def test_numeric_compares_stated_values():
    fn = NumericMatch()
    assert await fn("q", "The answer is 1,200.", "1200", None) is True
    assert await fn("q", r"\boxed{0.5}", "1/2", None) is True
    assert await fn("q", "#### 12", "13", None) is False
    # a number inside a long sentence does not decide a factual answer
    assert await fn("q", "He was born in 1945 in a small town near the coast.", "1945", None) is None
    assert await fn("q", "Paris", "Lyon", None) is None


async def test_contains_short_answer_in_long():
    fn = ContainsMatch()
    assert await fn("q", "Paris", "The capital of France is Paris.", None) is True
    assert await fn("q", "Lyon", "The capital of France is Paris.", None) is None


async def test_llm_judge_parses_verdict_and_counts_usage():
    replies = iter(["YES", "No.", "hmm"])
    client = ModelClient(backend=FakeBackend(lambda m, msgs, p: next(replies)))
    judge, usage = LLMJudge(client, "openai/j"), Usage()
    assert await judge("q", "a", "b", usage) is True
    assert await judge("q", "a", "c", usage) is False
    assert await judge("q", "a", "d", usage) is None
    assert usage.calls == 3


async def test_chain_cheapest_first_and_cache():
    calls = []

    def respond(model, messages, params):
        calls.append(messages[-1]["content"])
        return "YES"

    client = ModelClient(backend=FakeBackend(respond))
    agr = build_equivalence(["exact", "numeric", "llm"], client=client, judge_model="openai/j")
    assert await agr.equivalent("q", "Paris", "paris.")  # exact decides, no call
    assert calls == []
    assert await agr.equivalent("q", "42", "41") is False  # numeric decides False, no call
    assert calls == []
    assert await agr.equivalent("q", "Paris", "City of light")
    assert await agr.equivalent("q", "City of light", "Paris")  # symmetric cache hit
    assert len(calls) == 1 and agr.cache_hits == 1


async def test_undecided_pair_is_not_equivalent():
    agr = Equivalence([ExactMatch()])
    assert await agr.equivalent("q", "Paris", "Lyon") is False
    assert [v for v, _ in await agr.decide_all("q", "paris", ["Lyon", "Paris!"])] == [False, True]


async def test_a_new_function_is_one_registered_class():
    from selfpara.config import build_config
    from selfpara.errors import ConfigError
    from selfpara.pipeline.equivalence import functions as equivalence
    from tests.helpers.registries import restored

    with restored(equivalence.EQUIVALENCE_FUNCTIONS):  # the throwaway entry is gone after the test

        @equivalence.register_equivalence("samelen")
        class SameLength:
            async def __call__(self, question, a, b, usage):
                return True if len(a) == len(b) else None

        assert SameLength.name == "samelen"  # the decorator names it: the name is written once
        cfg = build_config(model="openai/x", equivalence="samelen,exact")
        assert cfg.equivalence_functions == ["samelen", "exact"]
        eq = build_equivalence(cfg.equivalence_functions, client=ModelClient(backend=FakeBackend()), judge_model="j")
        assert eq.names == ["samelen", "exact"]
        assert await eq.equivalent("q", "abc", "xyz") and not await eq.equivalent("q", "ab", "xyz")
        with pytest.raises(ConfigError, match="unknown equivalence function"):
            build_equivalence(["vibes"], client=ModelClient(backend=FakeBackend()), judge_model="j")
        with pytest.raises(ValueError, match="equivalence function name 'exact' is taken"):
            equivalence.register_equivalence("exact")(SameLength)
    assert "samelen" not in equivalence.EQUIVALENCE_FUNCTIONS


def test_registry_holds_the_builtin_functions_cheapest_first():
    from selfpara.pipeline.equivalence import EQUIVALENCE_FUNCTIONS

    builtin = ["exact", "numeric", "contains", "distinct", "core", "nli", "nli-lenient", "llm"]
    assert list(EQUIVALENCE_FUNCTIONS)[:8] == builtin
    assert [n for n, e in EQUIVALENCE_FUNCTIONS.items() if e.needs_nli] == ["nli", "nli-lenient"]
    # what an offline re-vote may use: the functions that run no model
    assert [n for n, e in EQUIVALENCE_FUNCTIONS.items() if e.calls_model] == ["nli", "nli-lenient", "llm"]


def test_nli_functions_need_an_nli_model():
    from selfpara.errors import ConfigError

    with pytest.raises(ConfigError, match="needs an NLI model"):
        build_equivalence(["nli-lenient"], client=ModelClient(backend=FakeBackend()), judge_model="j")


@pytest.mark.parametrize(
    "question, a, b",
    [
        ("What is the capital of Australia?", "Canberra", "Sydney"),
        ("What is the capital of Australia?", "The capital of Australia is Canberra.", "Sydney is the capital."),
        ("Which country is the largest by area?", "Russia", "China"),
        ("Which organ pumps blood?", "The heart.", "The liver."),
        ("At 60 miles per hour, how far will a train get in 2 hours?", "It takes 1 hour.", "120 miles"),
        ("Is Paris in France?", "Yes, it is.", "No."),
    ],
)
async def test_distinct_decides_different_without_a_judge(question, a, b):
    assert await DistinctAnswers()(question, a, b, None) is False


@pytest.mark.parametrize(
    "question, a, b",
    [
        # names shared, or only words the question already holds: undecided, the judge may look
        ("Who was the first President of the United States?", "George Washington", "It was Washington, in 1789."),
        ("What is the capital of Australia?", "Australia's capital", "The capital of Australia"),
        ("How far does it go in 2 hours at 60 mph?", "2 hours at 60 mph gives 120 miles.", "120 miles"),
        ("What is the capital of France?", "Paris", "Paris, France"),
        ("Q?", "word " * 31, "other " * 31),  # too long to decide cheaply
    ],
)
async def test_distinct_leaves_the_rest_undecided(question, a, b):
    assert await DistinctAnswers()(question, a, b, None) is None


async def test_distinct_runs_before_the_judge_and_evidence_names_the_decider():
    judged = []

    def judge(model, messages, params):
        judged.append(messages[-1]["content"])
        return "YES"  # a small judge that merges everything

    client = ModelClient(backend=FakeBackend(judge))
    eq = build_equivalence(["exact", "numeric", "contains", "distinct", "llm"], client=client, judge_model="openai/j")
    q = "What is the capital of Australia?"
    assert await eq.decide(q, "Canberra", "Sydney") == (False, "distinct")
    assert await eq.decide(q, "Canberra", "It is Canberra.") == (True, "contains")
    assert await eq.decide(q, "Canberra, the capital", "Canberra city") == (True, "llm")
    assert await eq.decide(q, "Sydney", "Canberra") == (False, "distinct")  # cached, order-free
    assert len(judged) == 1 and eq.cache_hits == 1
    assert (await Equivalence([ExactMatch()]).decide(q, "a", "b")) == (False, "none")


async def test_vote_records_each_compared_pair():
    from selfpara.pipeline.vote import vote
    from selfpara.result import Answer

    eq = Equivalence([ExactMatch(), ContainsMatch(), DistinctAnswers()])
    ans = [Answer(variant=i, text=t) for i, t in enumerate(["Lyon", "Paris", "It is Paris.", "Paris, France"])]
    out = await vote("What is the capital of France?", ans, eq)
    pairs = {(c.a, c.b): (c.equivalent, c.decided_by) for c in out.comparisons}
    assert pairs[(1, 0)] == (False, "distinct")
    assert pairs[(2, 1)] == (True, "contains")
    assert pairs[(3, 0)] == (False, "distinct") and pairs[(3, 1)] == (True, "contains")
    # the original lost; the returned member is the cluster's first (it matches every other member),
    # found without comparing 2 with 3: no judge call spent on it
    assert out.returned == 1 and (2, 3) not in pairs and (3, 2) not in pairs


async def test_answers_are_heard_against_every_wording_and_a_judge_sees_the_question():
    """An answer restates the wording it was asked in: the text-reading functions take every wording's words as
    asked (issue 47: 'Great Britain' of one wording's answer is no answer to the sea question), while a model
    judging the pair is shown the question itself."""
    prompts_seen = []

    def judge(model, messages, params):
        prompts_seen.append(messages[-1]["content"])
        return "NO"

    client = ModelClient(backend=FakeBackend(judge))
    eq = build_equivalence(["exact", "contains", "distinct", "core", "llm"], client=client, judge_model="openai/j")
    q = "What sea separates gb from Scandinavia?"
    other = "Which sea lies between Great Britain and Scandinavia?"
    a = "The sea that separates GB from Scandinavia is the North Sea."
    b = "The sea that lies between Great Britain and Scandinavia is the North Sea."
    assert await eq.decide(q, a, b) == (False, "llm")  # heard against the question alone: a name apart
    assert await eq.decide(q, a, b, wordings=[other]) == (True, "core")
    assert len(prompts_seen) == 1 and other not in prompts_seen[0] and "gb from Scandinavia" in prompts_seen[0]
    # a different answer stays apart, whatever the wordings
    assert await eq.decide(
        q, a, "The sea between Great Britain and Scandinavia is the Baltic Sea.", wordings=[other]
    ) == (
        False,
        "distinct",
    )


async def test_the_text_reading_functions_read_answers_without_accents():
    eq = build_equivalence(
        ["exact", "numeric", "contains", "distinct", "core"],
        client=ModelClient(backend=FakeBackend()),
        judge_model="unused",
    )
    question = "What was Rene Descartes' occupation?"
    a = "René Descartes was a French philosopher and mathematician."
    b = "Rene Descartes was a French philosopher and mathematician."
    assert await eq.decide(question, a, b) == (True, "exact")
