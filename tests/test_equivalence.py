import pytest

from selfpara.equivalence import ContainsMatch, Equivalence, ExactMatch, LLMJudge, NumericMatch, build_equivalence
from selfpara.result import Completion, Usage
from selfpara.testing import FakeBackend
from selfpara.llm import ModelClient


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
    assert await agr.equivalent_any("q", "paris", ["Lyon", "Paris!"]) == 1


async def test_a_new_function_is_one_registered_class(monkeypatch):
    from selfpara import equivalence
    from selfpara.config import build_config
    from selfpara.errors import ConfigError

    monkeypatch.setitem(equivalence.EQUIVALENCE_FUNCTIONS, "samelen", None)  # undone after the test

    @equivalence.register_equivalence("samelen")
    class SameLength:
        name = "samelen"

        async def __call__(self, question, a, b, usage):
            return True if len(a) == len(b) else None

    cfg = build_config(model="openai/x", equivalence="samelen,exact")
    assert cfg.equivalence_functions == ["samelen", "exact"]
    eq = build_equivalence(cfg.equivalence_functions, client=ModelClient(backend=FakeBackend()), judge_model="j")
    assert eq.names == ["samelen", "exact"]
    assert await eq.equivalent("q", "abc", "xyz") and not await eq.equivalent("q", "ab", "xyz")
    with pytest.raises(ConfigError, match="unknown equivalence function"):
        build_equivalence(["vibes"], client=ModelClient(backend=FakeBackend()), judge_model="j")


def test_registry_holds_the_builtin_functions_cheapest_first():
    from selfpara.equivalence import EQUIVALENCE_FUNCTIONS

    assert list(EQUIVALENCE_FUNCTIONS)[:6] == ["exact", "numeric", "contains", "nli", "nli-lenient", "llm"]
    assert [n for n, e in EQUIVALENCE_FUNCTIONS.items() if e.needs_nli] == ["nli", "nli-lenient"]


def test_nli_functions_need_an_nli_model():
    from selfpara.errors import ConfigError

    with pytest.raises(ConfigError, match="needs an NLI model"):
        build_equivalence(["nli-lenient"], client=ModelClient(backend=FakeBackend()), judge_model="j")
