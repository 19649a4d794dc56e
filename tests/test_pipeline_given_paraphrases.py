"""`SelfParaphraser.aanswer(paraphrases=..., seeds=...)`: answering a caller's own wordings."""

import pytest

from selfpara import InputError, SelfParaphraser
from selfpara.models.client import ModelClient
from selfpara.pipeline.prompts import PARAPHRASE_MARKER
from selfpara.testing import FakeBackend, last_user_text

Q = "What is the capital of France?"


def make(responder, **settings):
    fake = FakeBackend(responder)
    client = ModelClient(backend=fake, retries=0, backoff_s=0.001, timeout_s=5)
    return SelfParaphraser(client=client, model="openai/fake", equivalence="exact", **settings), fake


async def test_given_paraphrases_are_answered_as_given_without_generation_or_filtering():
    answers = {Q: "Paris", "Name France's capital.": "Paris", "France's capital city?": "Lyon"}
    sp, fake = make(lambda model, messages, params: answers[last_user_text(messages)], k=5)
    # The second wording repeats the original: the lexical filter would reject it; given wordings are kept.
    r = await sp.aanswer(Q, paraphrases=["Name France's capital.", Q, " France's capital city? "])
    assert [v.text for v in r.variants] == [Q, "Name France's capital.", Q, "France's capital city?"]
    assert r.k_kept == 3 and r.rejected == [] and "no_paraphrases" not in r.flags
    assert not any(PARAPHRASE_MARKER in last_user_text(m) for _, m, _ in fake.calls)
    assert len(fake.calls) == 4 and r.usage.calls == 4  # answers only: no paraphrase call, no judge
    assert r.answer == "Paris" and r.vote_share == pytest.approx(0.75)
    assert [a.cluster for a in r.answers] == [0, 0, 0, 1]


async def test_seeds_go_to_the_answer_calls_in_variant_order_and_unseeded_calls_send_none():
    sp, fake = make(lambda model, messages, params: f"s{params.get('seed')}", temperature=0.7)
    r = await sp.aanswer(Q, paraphrases=[Q, Q], seeds=[11, 12, 13])
    by_seed = sorted(p["seed"] for _, _, p in fake.calls)
    assert by_seed == [11, 12, 13] and {p["temperature"] for _, _, p in fake.calls} == {0.7}
    assert [a.text for a in r.answers] == ["s11", "s12", "s13"]  # answer i was drawn with seeds[i]
    fake.calls.clear()
    await sp.aanswer(Q, paraphrases=[Q])
    assert all("seed" not in p for _, _, p in fake.calls)


async def test_no_given_paraphrase_answers_the_original_alone_and_says_so():
    sp, fake = make(lambda model, messages, params: "Paris")
    r = await sp.aanswer(Q, paraphrases=[])
    assert len(fake.calls) == 1 and r.k_kept == 0 and "no_paraphrases" in r.flags


async def test_an_empty_given_paraphrase_is_an_input_error_before_any_call():
    sp, fake = make(lambda model, messages, params: "Paris")
    with pytest.raises(InputError, match="empty"):
        await sp.aanswer(Q, paraphrases=["Name it.", "  "])
    assert fake.calls == []
