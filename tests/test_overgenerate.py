"""Over-generation (`paraphrase_calls` > 1): several paraphrase calls, the k most different survivors kept."""

from __future__ import annotations

import pytest

from selfpara import SelfParaphraser, UpstreamError
from selfpara.config import build_config
from selfpara.llm import ModelClient
from selfpara.overgenerate import most_different
from selfpara.pipeline import paraphrase_request
from selfpara.prompts import DIVERSITY_HINTS, PARAPHRASE_MARKER
from selfpara.testing import FakeBackend, FakeStreamingBackend, last_user_text

QUESTION = "What is the capital of France?"
# Word overlaps (|shared| / shorter length) with QUESTION: 4/6, 2/6; then 4/6, 2/6 (and 4/8 with v1).
FIRST_CALL = "1. Tell me the capital of France (v0)\n2. France has its capital in which city (v1)"
SECOND_CALL = "1. Name the capital of France (v2)\n2. Which city serves as capital for France (v3)"


def test_most_different_takes_the_farthest_then_the_farthest_from_both() -> None:
    # "e f g h" and "e f g i" share nothing with the question: the earlier wins the tie. Then
    # "e f g i" is 3/4 from it and "a b c x" 3/4 from the question, "a e j k" only 1/4 from either.
    chosen, surplus = most_different("a b c d", ["a b c x", "e f g h", "e f g i", "a e j k"], 2)
    assert chosen == ["e f g h", "a e j k"]
    assert [(r.text, r.reason, r.detail) for r in surplus] == [
        ("a b c x", "surplus", "overlap 0.75 with a wording kept"),
        ("e f g i", "surplus", "overlap 0.75 with a wording kept"),
    ]


def test_most_different_keeps_k_or_fewer_in_their_order() -> None:
    assert most_different("a b c d", ["a b c x", "e f g h"], 2) == (["a b c x", "e f g h"], [])
    assert most_different("a b c d", [], 3) == ([], [])


def test_each_call_has_its_own_hints_temperature_and_seed() -> None:
    cfg = build_config(model="openai/fake", k=3, paraphrase_calls=3, paraphrase_seed=7)
    prompts = []
    for call, (temperature, seed) in enumerate([(0.7, 7), (1.0, 107), (1.3, 207)]):
        _, messages, params = paraphrase_request(QUESTION, cfg, call)
        assert params["temperature"] == pytest.approx(temperature) and params["seed"] == seed
        prompts.append(messages[-1]["content"])
    assert f"(1) {DIVERSITY_HINTS[3]}" in prompts[1] and f"(3) {DIVERSITY_HINTS[5]}" in prompts[1]
    assert f"(1) {DIVERSITY_HINTS[6]}" in prompts[2] and f"(3) {DIVERSITY_HINTS[0]}" in prompts[2]  # wraps round
    assert build_config(paraphrase_calls=2, paraphrase_temperature=1.9).paraphrase_call_params(1)[0] == 2.0


def test_several_calls_are_never_streamed() -> None:
    assert not build_config(model="openai/fake", paraphrase_calls=2, adaptive=True).streams_paraphrases
    with pytest.raises(ValueError, match="stream_paraphrases and paraphrase_calls"):
        build_config(model="openai/fake", paraphrase_calls=2, stream_paraphrases=True)
    with pytest.raises(ValueError):
        build_config(paraphrase_calls=4)


def by_call(replies: dict[float, str | Exception], answer: str = "Paris"):
    """A responder whose paraphrase reply depends on the call's temperature (0.7: the first call)."""

    def respond(model, messages, params):
        if PARAPHRASE_MARKER in last_user_text(messages):
            return replies[round(params["temperature"], 2)]
        return answer

    return respond


def make(backend, **settings) -> SelfParaphraser:
    client = ModelClient(backend=backend, retries=0, backoff_s=0.001, timeout_s=5, concurrency=16)
    settings = {"model": "openai/fake", "k": 2, "paraphrase_check": "off", "equivalence": "exact", **settings}
    return SelfParaphraser(client=client, **settings)


def paraphrase_calls(backend: FakeBackend) -> int:
    return sum(PARAPHRASE_MARKER in last_user_text(m) for _, m, _ in backend.calls)


async def test_a_request_pools_both_calls_and_votes_the_k_most_different() -> None:
    backend = FakeBackend(by_call({0.7: FIRST_CALL, 1.0: SECOND_CALL}))
    r = await make(backend, paraphrase_calls=2).aanswer(QUESTION)
    assert paraphrase_calls(backend) == 2
    assert [v.text for v in r.variants[1:]] == [
        "France has its capital in which city (v1)",
        "Which city serves as capital for France (v3)",
    ]
    assert len(r.answers) == 3 and r.answer == "Paris" and r.flags == []
    assert sorted((p.text, p.reason) for p in r.rejected) == [
        ("Name the capital of France (v2)", "surplus"),
        ("Tell me the capital of France (v0)", "surplus"),
    ]


async def test_one_call_keeps_its_survivors_in_order_as_before() -> None:
    backend = FakeBackend(by_call({0.7: FIRST_CALL}))
    r = await make(backend).aanswer(QUESTION)
    assert paraphrase_calls(backend) == 1
    assert [v.text for v in r.variants[1:]] == [
        "Tell me the capital of France (v0)",
        "France has its capital in which city (v1)",
    ]


async def test_paraphrase_gives_what_a_request_votes() -> None:
    sp = make(FakeBackend(by_call({0.7: FIRST_CALL, 1.0: SECOND_CALL})), paraphrase_calls=2)
    kept, rejected = await sp.paraphrase(QUESTION)
    r = await sp.aanswer(QUESTION)
    assert kept == [v.text for v in r.variants[1:]]
    assert sorted(x.text for x in rejected) == sorted(x.text for x in r.rejected)


async def test_a_failed_call_leaves_the_others_candidates_and_says_so() -> None:
    sp = make(
        FakeBackend(by_call({0.7: UpstreamError("upstream 500", status=500), 1.0: SECOND_CALL})), paraphrase_calls=2
    )
    r = await sp.aanswer(QUESTION)
    assert r.flags == ["paraphrase_failed"] and r.k_kept == 2 and len(r.answers) == 3
    kept, _ = await sp.paraphrase(QUESTION)  # the library's paraphrase step degrades the same way
    assert kept == ["Name the capital of France (v2)", "Which city serves as capital for France (v3)"]


async def test_when_every_call_fails_the_original_is_answered_and_flagged() -> None:
    down = UpstreamError("upstream 503", status=503)
    sp = make(FakeBackend(by_call({0.7: down, 1.0: down})), paraphrase_calls=2)
    r = await sp.aanswer(QUESTION)
    assert r.flags == ["paraphrase_failed"] and r.k_kept == 0 and r.answer == "Paris"
    with pytest.raises(UpstreamError, match="503"):
        await sp.paraphrase(QUESTION)


async def test_rewrites_fill_the_slots_over_generation_leaves() -> None:
    problem = "Mia buys 3 apples for $2 each. Leo buys 4 pears for $5 each. How many dollars do they spend?"
    empty = "1. " + problem  # a copy: rejected as a near-copy in both calls
    sp = make(FakeBackend(by_call({0.7: empty, 1.0: empty}, answer="26")), paraphrase_calls=2, rewrites="all", k=2)
    r = await sp.aanswer(problem)
    assert r.k_kept == 2 and all(v.rewrite for v in r.variants[1:])


async def test_adaptive_k_with_several_calls_awaits_them_whole() -> None:
    backend = FakeStreamingBackend(by_call({0.7: FIRST_CALL, 1.0: SECOND_CALL}))
    r = await make(backend, paraphrase_calls=2, adaptive=True, k=3).aanswer(QUESTION)
    assert not backend.streams and r.answer == "Paris" and paraphrase_calls(backend) == 2
    assert r.variants[1].text == "France has its capital in which city (v1)"  # the most different answered first


async def test_adaptive_k_settled_before_the_calls_came_back_is_not_flagged_no_paraphrases() -> None:
    # k=2 at margin 2: two answers to come cannot outvote the original, so the vote is settled at once.
    backend = FakeBackend(by_call({0.7: FIRST_CALL, 1.0: SECOND_CALL}))
    r = await make(backend, paraphrase_calls=2, adaptive=True).aanswer(QUESTION)
    assert r.k_kept == 0 and r.answer == "Paris" and r.flags == []
