"""Doubt first (`sure_probability`): a sure original's answer is returned with no vote; a doubtful one is voted."""

import math

from selfpara import SelfParaphraser
from selfpara.models.client import ModelClient
from selfpara.pipeline.doubt import doubt_of
from selfpara.pipeline.prompts import PARAPHRASE_MARKER
from selfpara.result import Answer, Completion
from selfpara.testing import FakeBackend, default_responder, last_user_text

QUESTION = "What is the capital of France?"


def responder(original_logprob: float | None, original: str = "Lyon", others: str = "Paris"):
    """The original answered `original` with `original_logprob`; every other wording `others`."""

    def respond(model, messages, params):
        text = last_user_text(messages)
        if PARAPHRASE_MARKER in text:
            return default_responder()(model, messages, params)
        if text == QUESTION:
            return Completion(text=original, logprob=original_logprob)
        return Completion(text=others, logprob=-0.01)

    return respond


def make(respond, **settings):
    fake = FakeBackend(respond)
    client = ModelClient(backend=fake, retries=0, timeout_s=5)
    settings = {
        "model": "openai/fake",
        "renamings": False,
        "equivalence": "exact",
        "paraphrase_check": "off",
        **settings,
    }
    return SelfParaphraser(client=client, **settings), fake


async def test_a_sure_answer_is_returned_with_one_call_and_says_why():
    sp, fake = make(responder(math.log(0.97)), k=3, sure_probability=0.9)
    r = await sp.aanswer(QUESTION)
    assert r.answer == "Lyon" and len(fake.calls) == 1 and r.usage.calls == 1
    assert not r.doubt.voted and r.doubt.reason == "answer sure: p = 0.97 >= 0.90"
    assert r.k_kept == 0 and r.vote_share == 1.0 and "no_paraphrases" not in r.flags


async def test_a_doubtful_answer_is_voted():
    sp, fake = make(responder(math.log(0.5)), k=3, sure_probability=0.9, overrule_margin=2)
    r = await sp.aanswer(QUESTION)
    assert r.doubt.voted and r.doubt.reason == "in doubt: p = 0.50 < 0.90" and r.doubt.probability == 0.5
    assert r.k_kept == 3 and len(r.answers) == 4  # the rewordings were asked and voted


async def test_without_token_probabilities_the_vote_runs_and_says_so():
    sp, _ = make(responder(None), k=2, sure_probability=0.9)
    r = await sp.aanswer(QUESTION)
    assert r.doubt.voted and r.doubt.probability is None and "no token probabilities" in r.doubt.reason


async def test_off_votes_on_every_question_and_given_wordings_are_always_voted():
    sp, fake = make(responder(math.log(0.99)), k=2)
    r = await sp.aanswer(QUESTION)
    assert r.doubt.voted and "off" in r.doubt.reason and r.k_kept == 2
    sp, _ = make(responder(math.log(0.99)), sure_probability=0.9)
    r = await sp.aanswer(QUESTION, paraphrases=["Which city is the capital of France?"])
    assert r.doubt.voted and r.k_kept == 1


async def test_a_failed_original_is_left_to_the_vote():
    def respond(model, messages, params):
        if last_user_text(messages) == QUESTION:
            return RuntimeError("boom")
        return responder(None)(model, messages, params)

    sp, _ = make(respond, k=2, sure_probability=0.9)
    r = await sp.aanswer(QUESTION)
    assert r.doubt.voted and "failed" in r.doubt.reason and r.answer == "Paris" and "original_failed" in r.flags


async def test_the_vote_budget_holds_the_calls_per_answer_over_a_wrappers_life():
    sp, _ = make(responder(math.log(0.5)), k=2, sure_probability=0.9, vote_budget=1.5)
    results = [await sp.aanswer(QUESTION) for _ in range(12)]
    voted = [r for r in results if r.doubt.voted]
    held = [r for r in results if not r.doubt.voted]
    assert results[0].doubt.voted and results[0].doubt.budget == 1.5  # a fresh wrapper votes its first doubt
    assert voted and held and all(r.usage.calls == 1 and r.answer == "Lyon" for r in held)
    assert held[0].doubt.reason.startswith("in doubt: p = 0.50 < 0.90, but the vote budget is spent (")
    calls = sum(r.usage.calls for r in results)
    assert calls <= 1.5 * len(results) + 3  # within the budget, plus what the last vote reserved (k + 1)
    assert calls > len(results) + 3  # and spent: more than one vote ran


async def test_concurrent_doubts_see_each_others_reservations():
    import asyncio

    sp, _ = make(responder(math.log(0.5)), k=2, sure_probability=0.9, vote_budget=1.5)
    results = await asyncio.gather(*(sp.aanswer(QUESTION) for _ in range(5)))
    # the first admitted reserves k + 1 = 3 calls before its vote is done: the four beside it, earning 0.5 each,
    # find the credit still negative
    assert sum(r.doubt.voted for r in results) == 1
    assert sum(r.usage.calls for r in results) <= 1.5 * len(results) + 3


async def test_a_vote_budget_of_off_votes_every_doubt_and_a_failed_original_votes_whatever_the_credit():
    sp, _ = make(responder(math.log(0.5)), k=2, sure_probability=0.9, vote_budget="off")
    assert all([(await sp.aanswer(QUESTION)).doubt.voted for _ in range(4)])

    def respond(model, messages, params):
        if last_user_text(messages) == QUESTION:
            return RuntimeError("boom")
        return responder(None)(model, messages, params)

    sp, _ = make(respond, k=2, sure_probability=0.9, vote_budget=1.1)
    results = [await sp.aanswer(QUESTION) for _ in range(3)]  # each vote costs more than the requests earn
    assert all(r.doubt.voted and r.answer == "Paris" for r in results)
    assert sp.budget.credit < 0  # charged all the same


def test_the_budget_banks_at_most_what_twenty_answers_earn_and_settles_what_a_vote_spent():
    from selfpara.pipeline.budget import BANKED_ANSWERS, VoteBudget

    budget = VoteBudget()
    for _ in range(100):
        assert budget.admit(1.5, doubtful=False, reserve=3) is False
    assert budget.credit == BANKED_ANSWERS * 0.5
    assert budget.admit(1.5, doubtful=True, reserve=3) is True and budget.credit == BANKED_ANSWERS * 0.5 - 3
    budget.settle(3, 5)  # the vote spent two calls more than it reserved
    assert budget.credit == BANKED_ANSWERS * 0.5 - 5
    assert VoteBudget().admit(1.0, doubtful=True, reserve=3) is False  # a budget of one call: never vote


async def test_the_proxy_counts_what_doubt_first_did_with_each_answer():
    from selfpara.server.metrics import vote_outcome

    sp, _ = make(responder(math.log(0.5)), k=2, sure_probability=0.9, vote_budget=1.5)
    first, second = await sp.aanswer(QUESTION), await sp.aanswer(QUESTION)
    sure, _ = make(responder(math.log(0.99)), k=2, sure_probability=0.9)
    assert vote_outcome(first.doubt) == "voted" and vote_outcome(second.doubt) == "over_budget"
    assert vote_outcome((await sure.aanswer(QUESTION)).doubt) == "sure"


def test_doubt_of_reads_the_mean_token_probability():
    assert doubt_of(Answer(variant=0, text="x", logprob=math.log(0.9)), 0.9).voted is False
    assert doubt_of(Answer(variant=0, text="x", logprob=math.log(0.89)), 0.9).voted is True


def test_the_proxy_says_whether_the_vote_ran_in_its_headers_and_report() -> None:
    from tests.fake_upstream import serve_fake
    from tests.helpers.proxy import chat, post, settings_for, start

    for upstream in serve_fake():
        with start(settings_for(upstream)) as proxy:
            # the fake's every token has log-probability -0.5: p = 0.61
            sure = post(proxy, chat(QUESTION, selfpara={"sure_probability": 0.6}))
            doubtful = post(proxy, chat(QUESTION, selfpara={"sure_probability": 0.7}))
            # the proxy's one vote budget (1.5 calls per answer): that vote spent more than three requests earn
            held = post(proxy, chat(QUESTION, selfpara={"sure_probability": 0.7}))
        assert sure.status_code == doubtful.status_code == 200, sure.text
        assert sure.headers["X-Selfpara-Voted"] == "false" and sure.headers["X-Selfpara-Calls"] == "1"
        assert sure.headers["X-Selfpara-Doubt"] == "answer sure: p = 0.61 >= 0.60"
        assert sure.json()["selfpara"]["doubt"]["voted"] is False
        assert doubtful.headers["X-Selfpara-Voted"] == "true" and int(doubtful.headers["X-Selfpara-Calls"]) > 1
        assert doubtful.headers["X-Selfpara-Doubt"] == "in doubt: p = 0.61 < 0.70"
        assert held.status_code == 200 and held.headers["X-Selfpara-Voted"] == "false"
        assert held.headers["X-Selfpara-Calls"] == "1"
        assert "the vote budget is spent" in held.headers["X-Selfpara-Doubt"]


def test_auto_is_the_measured_threshold_on_embedded_models_and_off_on_remote_ones() -> None:
    from selfpara.config import WrapConfig
    from selfpara.config.settings import SURE_PROBABILITY

    assert WrapConfig().sure_probability == "auto" and WrapConfig().sure_threshold == SURE_PROBABILITY
    assert WrapConfig(model="openai/gpt-4o-mini").sure_threshold is None  # not measured: vote on every question
    assert WrapConfig(sure_probability="off").sure_threshold is None
    assert WrapConfig(model="openai/x", sure_probability=0.8).sure_threshold == 0.8
    assert WrapConfig().wants_logprobs is False  # embedded models report them without being asked
    assert WrapConfig(model="openai/x", sure_probability=0.8).wants_logprobs is True


def test_ask_takes_off_auto_or_a_number() -> None:
    from typer.testing import CliRunner

    from selfpara.cli import app

    bad = CliRunner().invoke(app, ["ask", QUESTION, "--model", "openai/fake", "--sure-probability", "sometimes"])
    assert bad.exit_code == 2 and "--sure-probability" in bad.output and "auto or off" in bad.output
