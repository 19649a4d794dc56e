import asyncio

import pytest

from selfpara import ConfigError, InputError, SelfParaphraser, UpstreamError
from selfpara.models.client import ModelClient
from selfpara.pipeline.prompts import JUDGE_MARKER, PARAPHRASE_MARKER
from selfpara.testing import FakeBackend, default_responder, last_user_text
from tests.helpers.backends import GatedBackend


def make(responder=None, delay_s=0.0, **settings):
    fake = FakeBackend(responder, delay_s=delay_s)
    client = ModelClient(backend=fake, retries=1, backoff_s=0.001, timeout_s=5)
    settings.setdefault("model", "openai/fake")
    settings.setdefault("renamings", False)  # these tests script the model's paraphrases (see test_renamings.py)
    return SelfParaphraser(client=client, **settings), fake


async def test_end_to_end_structure_and_accounting():
    sp, fake = make(k=3, equivalence="exact")
    r = await sp.aanswer("What is the capital of France?")
    assert r.answer == "Paris" and r.k_requested == 3 and r.k_kept == 3
    assert [v.index for v in r.variants] == [0, 1, 2, 3] and r.variants[0].text == "What is the capital of France?"
    assert r.vote_share == 1.0 and r.original_won and r.entropy == 0.0
    assert [a.cluster for a in r.answers] == [0, 0, 0, 0]
    # 1 paraphrase + 1 judge per paraphrase (auto check = llm for API models) + 4 answers
    assert r.usage.calls == len(fake.calls) == 1 + 3 + 4
    assert r.usage.prompt_tokens > 0 and r.timings.total_s >= r.timings.answer_s


async def test_context_and_system_prompt_go_with_every_wording():
    sp, fake = make(k=2, equivalence="exact", paraphrase_check="off")
    msgs = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
        {"role": "user", "content": "What is the capital of France?"},
    ]
    await sp.aanswer(msgs, temperature=0.3, max_tokens=17)
    answer_calls = [c for c in fake.calls if PARAPHRASE_MARKER not in last_user_text(c[1])]
    assert len(answer_calls) == 3
    for _, messages, params in answer_calls:
        assert messages[:3] == msgs[:3]
        assert params["temperature"] == 0.3 and params["max_tokens"] == 17


async def test_majority_overrules_original():
    def respond(model, messages, params):
        text = last_user_text(messages)
        if text == "What is the capital of France?":
            return "Lyon"
        return default_responder()(model, messages, params)

    sp, _ = make(respond, k=3, equivalence="exact", paraphrase_check="off")
    given = ["Which city is the capital of France?", "Name the capital of France.", "France's capital is which city?"]
    r = await sp.aanswer("What is the capital of France?", paraphrases=given)  # wordings the caller wrote
    assert r.answer == "Paris" and not r.original_won and r.vote_share == 0.75
    assert [c.size for c in r.clusters] == [1, 3] and r.winner == 1
    # the same majority from the paraphrase call alone does not overrule (selfpara.pipeline.independence)
    r = await sp.aanswer("What is the capital of France?")
    assert r.answer == "Lyon" and r.original_won and "paraphrase call" in (r.original_kept_reason or "")


async def test_original_answered_in_parallel_with_paraphrasing():
    question = "What is the capital of France?"
    original_asked = asyncio.Event()

    class Overlapping(GatedBackend):
        """The paraphrase reply waits for the original's answer call; the paraphrases' answers pass a gate."""

        async def complete(self, model, messages, params):
            text = last_user_text(messages)
            if PARAPHRASE_MARKER in text:
                await asyncio.wait_for(original_asked.wait(), 10)  # fails the paraphrasing if asked after it
            elif text == question:
                original_asked.set()
            else:
                return await super().complete(model, messages, params)
            return await FakeBackend.complete(self, model, messages, params)

    backend = Overlapping(width=4)  # the 4 paraphrases' answers: one round, all at once
    client = ModelClient(backend=backend, retries=0, timeout_s=30)
    sp = SelfParaphraser(client=client, model="openai/fake", k=4, equivalence="exact", paraphrase_check="off")
    r = await sp.aanswer(question)
    assert r.answer == "Paris" and r.k_kept == 4 and "paraphrase_failed" not in r.flags
    assert backend.peak == 4


async def test_overrides_do_not_leak():
    sp, _ = make(k=3, equivalence="exact", paraphrase_check="off")
    r1 = await sp.aanswer("What is the capital of France?", k=1)
    r2 = await sp.aanswer("What is the capital of France?")
    assert (r1.k_requested, r2.k_requested) == (1, 3) and sp.config.k == 3


async def test_all_paraphrases_rejected_returns_raw_flagged():
    def respond(model, messages, params):
        text = last_user_text(messages)
        return "1. What is the capital of France?" if PARAPHRASE_MARKER in text else "Paris"

    sp, _ = make(respond, k=2, equivalence="exact", paraphrase_check="off")
    r = await sp.aanswer("What is the capital of France?")
    assert r.k_kept == 0 and "no_paraphrases" in r.flags and r.answer == "Paris"
    assert r.rejected[0].reason == "overlap"


async def test_judge_rejections_reported():
    def respond(model, messages, params):
        text = last_user_text(messages)
        if JUDGE_MARKER in text:
            return "NO" if "(v1)" in text else "YES"
        return default_responder()(model, messages, params)

    sp, _ = make(respond, k=3, equivalence="exact", paraphrase_check="llm")
    r = await sp.aanswer("What is the capital of France?")
    assert r.k_kept == 2 and [x.reason for x in r.rejected] == ["not_equivalent"]


async def test_partial_failure_votes_over_the_rest():
    def respond(model, messages, params):
        text = last_user_text(messages)
        if "(v1)" in text and PARAPHRASE_MARKER not in text:
            return UpstreamError("boom", status=500)
        return default_responder()(model, messages, params)

    sp, _ = make(respond, k=3, equivalence="exact", paraphrase_check="off")
    r = await sp.aanswer("What is the capital of France?")
    assert "partial_failure" in r.flags and r.failed_variants == [2]
    assert r.n_voted == 3 and r.answer == "Paris"


async def test_paraphrase_failure_degrades_to_raw():
    def respond(model, messages, params):
        if PARAPHRASE_MARKER in last_user_text(messages):
            return UpstreamError("down", status=502, retryable=True)
        return "Paris"

    sp, _ = make(respond, k=3, equivalence="exact")
    r = await sp.aanswer("What is the capital of France?")
    assert r.flags == ["paraphrase_failed"] and r.answer == "Paris" and r.k_kept == 0


async def test_every_answer_failing_raises_with_status():
    def respond(model, messages, params):
        if PARAPHRASE_MARKER in last_user_text(messages):
            return default_responder()(model, messages, params)
        return UpstreamError("bad key", status=401)

    sp, _ = make(respond, k=2, equivalence="exact", paraphrase_check="off")
    with pytest.raises(UpstreamError) as info:
        await sp.aanswer("What is the capital of France?")
    assert info.value.status == 401


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "   ",
        [],
        [{"role": "assistant", "content": "hi"}],
        [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}],
    ],
)
async def test_bad_questions(bad):
    sp, fake = make()
    with pytest.raises(InputError):
        await sp.aanswer(bad)
    assert fake.calls == []


@pytest.mark.parametrize(
    "override",
    [
        {"k": 0},
        {"k": 21},
        {"equivalence": "vibes"},
        {"equivalence": "nli"},
        {"nli_model": "/nonexistent", "equivalence": "nli"},
    ],
)
async def test_bad_settings(override):
    sp, _ = make()
    with pytest.raises(ConfigError):
        await sp.aanswer("What is the capital of France?", **override)


def test_sync_entry_point_runs_twice():
    sp, _ = make(k=1, equivalence="exact", paraphrase_check="off")
    assert sp.answer("What is the capital of France?").answer == "Paris"
    assert sp.answer("What is the capital of France?").answer == "Paris"


async def test_paraphrase_only_entry_point():
    sp, fake = make(k=3, equivalence="exact", paraphrase_check="off")
    kept, rejected, sources = await sp.paraphrase("What is the capital of France?")
    assert len(kept) == 3 and rejected == [] and len(fake.calls) == 1
    assert [sources[t] for t in kept] == ["list"] * 3


async def test_drifted_paraphrases_are_rejected_before_the_judge():
    q = "If Tom had 3 apples and got 4 more, what is his total now?"

    def respond(model, messages, params):
        text = last_user_text(messages)
        if PARAPHRASE_MARKER in text:
            return (
                "1. How many apples does Tom have now after receiving 4 more?\n"
                "2. Tom had three apples, then received four extra; what's his total?\n"
                "3. Having 3 apples and getting 4 more, what does someone hold now?"
            )
        if JUDGE_MARKER in text:
            return "YES"
        return "8" if "receiving" in text else "7"

    sp, fake = make(respond, k=3, equivalence="exact,numeric", paraphrase_check="llm")
    r = await sp.aanswer(q)
    assert [v.text for v in r.variants[1:]] == ["Tom had three apples, then received four extra; what's his total?"]
    assert [(x.reason, x.detail) for x in r.rejected] == [
        ("numbers_changed", "dropped 3"),
        ("entities_changed", "dropped tom"),
    ]
    assert r.rejected[0].text == "How many apples does Tom have now after receiving 4 more?"
    judged = [c for c in fake.calls if JUDGE_MARKER in last_user_text(c[1])]
    assert len(judged) == 1  # only the survivor went to the judge
    assert r.answer == "7"


async def test_paraphrase_call_is_seeded_for_reproducible_reruns():
    sp, fake = make(k=2, equivalence="exact", paraphrase_check="off")
    await sp.aanswer("What is the capital of France?")
    await sp.aanswer("What is the capital of France?", paraphrase_seed=7)
    seeds = [c[2].get("seed") for c in fake.calls if PARAPHRASE_MARKER in last_user_text(c[1])]
    assert seeds == [0, 7]
    sp, fake = make(k=2, equivalence="exact", paraphrase_check="off", model="anthropic/claude-x")
    await sp.aanswer("What is the capital of France?")
    assert all("seed" not in c[2] for c in fake.calls)  # providers that may reject it do not get it


async def test_original_kept_without_a_decisive_majority():
    # at k=3 two paraphrases that agree with each other against the original flip it only with margin 1
    def respond(model, messages, params):
        text = last_user_text(messages)
        if PARAPHRASE_MARKER in text:
            return default_responder()(model, messages, params)
        return {"What is the capital of France?": "Paris"}.get(text, "Lyon" if "(v2)" not in text else "Nice")

    sp, _ = make(respond, k=3, equivalence="exact", paraphrase_check="off")
    r = await sp.aanswer("What is the capital of France?")
    assert r.answer == "Paris" and r.original_won and "original_kept" in r.flags
    assert "short of the margin 2" in r.original_kept_reason and r.vote_share == 0.25
    given = ["Which city is the capital of France?", "Name France's capital city (v2).", "France's capital is?"]
    r = await sp.aanswer("What is the capital of France?", overrule_margin=1, paraphrases=given)
    assert r.answer == "Lyon" and not r.original_won and r.original_kept_reason is None
    assert r.flags == ["low_vote_share"]  # 2 of 4 votes: a tie-level share
    # from the paraphrase call alone (the model's list), the same lead does not overrule
    r = await sp.aanswer("What is the capital of France?", overrule_margin=1)
    assert r.answer == "Paris" and "paraphrase call" in (r.original_kept_reason or "")


async def test_logprobs_requested_only_when_the_vote_uses_them():
    sp, fake = make(k=1, equivalence="exact", paraphrase_check="off")
    await sp.aanswer("What is the capital of France?")
    await sp.aanswer("What is the capital of France?", sure_probability=0.9)
    answer_calls = [c for c in fake.calls if PARAPHRASE_MARKER not in last_user_text(c[1])]
    assert ["logprobs" in c[2] for c in answer_calls] == [False, False, True, True]


async def test_small_local_self_judge_is_flagged():
    sp, _ = make(k=2, model="openai/qwen2.5-1.5b-instruct")
    r = await sp.aanswer("What is the capital of France?")
    assert "judge_is_model_under_test" in r.flags
    r = await sp.aanswer("What is the capital of France?", judge_model="openai/gpt-4o")
    assert "judge_is_model_under_test" not in r.flags


def _scattered(model, messages, params):
    """Every wording gets its own answer: the vote share is 1/4 at k=3."""
    text = last_user_text(messages)
    if PARAPHRASE_MARKER in text:
        return default_responder()(model, messages, params)
    return {"(v0)": "Lyon", "(v1)": "Nice", "(v2)": "Lille"}.get(text[-4:], "Paris")


async def test_low_vote_share_policy_flag_abstain_off():
    sp, _ = make(_scattered, k=3, equivalence="exact", paraphrase_check="off")
    q = "What is the capital of France?"
    flagged = await sp.aanswer(q)  # default: flag below 0.6
    assert flagged.vote_share == 0.25 and flagged.answer == "Paris" and "low_vote_share" in flagged.flags
    assert not flagged.abstained and flagged.withheld_answer is None
    abstained = await sp.aanswer(q, low_vote_share="abstain", abstention_text="Not sure.")
    assert abstained.answer == "Not sure." and abstained.withheld_answer == "Paris" and abstained.abstained
    assert "low_vote_share" in abstained.flags
    off = await sp.aanswer(q, low_vote_share="off")
    assert off.answer == "Paris" and "low_vote_share" not in off.flags
    # at or above the threshold nothing happens
    high = await sp.aanswer(q, low_vote_share="abstain", low_vote_share_threshold=0.25)
    assert high.answer == "Paris" and "low_vote_share" not in high.flags


def _one_good_paraphrase(model, messages, params):
    """Paraphrases: one good rewording, one that changes a number, one unrelated; answers name their seed."""
    text = last_user_text(messages)
    if PARAPHRASE_MARKER in text:
        return "1. What is France's capital city called?\n2. Capital of France 2?\n3. Hello there"
    return f"answer seed {params.get('seed')} at {params['temperature']}"


async def test_top_up_fills_the_slots_no_paraphrase_filled_with_seeded_samples_of_the_original():
    q = "What is the capital of France?"
    sp, fake = make(_one_good_paraphrase, k=3, equivalence="exact", paraphrase_check="off", paraphrase_seed=5)
    r = await sp.aanswer(q, top_up_temperature=0.7)
    assert r.k_kept == 1 and r.k_topped_up == 2 and len(r.rejected) == 2
    assert [(v.index, v.top_up) for v in r.variants] == [(0, False), (1, False), (2, True), (3, True)]
    assert all(v.text == q for v in r.variants if v.top_up)
    # the original and the kept paraphrase at the request's temperature, unseeded; slot i at 0.7 with seed 5 + i
    assert [a.text for a in r.answers] == [
        "answer seed None at 0.0",
        "answer seed None at 0.0",
        "answer seed 7 at 0.7",
        "answer seed 8 at 0.7",
    ]
    assert r.usage.calls == 5 and r.vote_share == pytest.approx(0.5)  # four answers voted, two alike


async def test_without_top_up_only_kept_paraphrases_are_voted():
    sp, fake = make(_one_good_paraphrase, k=3, equivalence="exact", paraphrase_check="off")
    r = await sp.aanswer("What is the capital of France?")
    assert r.k_kept == 1 and r.k_topped_up == 0 and len(r.answers) == 2
    assert all(
        p["temperature"] == 0.0 and "seed" not in p
        for _, m, p in fake.calls
        if PARAPHRASE_MARKER not in last_user_text(m)
    )


async def test_a_failed_paraphrase_call_is_topped_up_to_a_full_vote():
    def respond(model, messages, params):
        if PARAPHRASE_MARKER in last_user_text(messages):
            return UpstreamError("paraphraser down", status=500, retryable=False)
        return "Paris" if params["temperature"] == 0.0 else "Lyon"

    sp, _ = make(respond, k=3, equivalence="exact", top_up_temperature=0.7, overrule_margin=1)
    r = await sp.aanswer("What is the capital of France?")
    assert "paraphrase_failed" in r.flags and r.k_kept == 0 and r.k_topped_up == 3
    assert r.answer == "Lyon"  # three samples against the greedy original, margin 1


def test_top_up_seeds_go_only_to_models_that_take_them_and_not_with_adaptive_k():
    from selfpara.config import build_config

    assert build_config(model="openai/x", top_up_temperature=0.7).top_up_seed(2) == 2
    assert build_config(model="anthropic/claude-x", top_up_temperature=0.7).top_up_seed(2) is None
    assert build_config(model="openai/x", top_up_temperature=0.7, paraphrase_seed=None).top_up_seed(1) is None
    with pytest.raises(ConfigError, match="adaptive"):
        build_config(model="openai/x", top_up_temperature=0.7, adaptive=True)
