"""One request's run: the streamed paraphrase reply (pipelining) and adaptive k, with scripted fakes."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import random
import re

import pytest

from selfpara import SelfParaphraser, UpstreamError
from selfpara.models.client import ModelClient
from selfpara.pipeline.paraphrase import LineParser, parse_paraphrases
from selfpara.pipeline.prompts import JUDGE_MARKER, PARAPHRASE_MARKER
from selfpara.testing import FakeBackend, FakeStreamingBackend, default_responder, last_user_text
from tests.helpers.waiting import settle

QUESTION = "What is the capital of France?"
_VARIANT = re.compile(r"\(v(\d+)\)")


def by_variant(pattern, *, paraphrases=None, judge=None):
    """A responder answering variant i (0: the original) with pattern[i]; default paraphrases end in (vI)."""
    base = default_responder()

    def respond(model, messages, params):
        text = last_user_text(messages)
        if PARAPHRASE_MARKER in text:
            return paraphrases if paraphrases is not None else base(model, messages, params)
        if JUDGE_MARKER in text:
            return judge(text) if judge else "YES"
        m = _VARIANT.search(text)
        return pattern[int(m.group(1)) + 1 if m else 0]

    return respond


def make(backend, **settings):
    client = ModelClient(backend=backend, retries=0, backoff_s=0.001, timeout_s=5, concurrency=64)
    settings.setdefault("model", "openai/fake")
    settings.setdefault("stream_paraphrases", True)  # by default only adaptive k streams
    settings.setdefault("renamings", False)  # these tests script the model's paraphrases (see test_renamings.py)
    return SelfParaphraser(client=client, **settings)


# --- the line parser ------------------------------------------------------------------------------

REPLIES = [
    "1. Which city is France's capital?\n2. France's capital city is what?\n3. Name the capital of France.",
    "Here are 3 rewordings:\n- Which city is France's capital?\n\n- Name France's seat of government.\n",
    "Paraphrase 1: What city is the capital of France?\r\nParaphrase 2: France has which capital?\r\n",
    '["Which city is France\'s capital?", "Name the capital of France."]',
    '```json\n["Which city is France\'s capital?",\n "Name the capital of France."]\n```',
    '1. Which city is France\'s capital?\n2. Name it.\nAs JSON: ["a b c", "d e f"]',  # a list after lines
    "1. What is the [capital] of France?\n2. Name France's capital.",
    '1. [v1] What is the capital of France?\n2. [v2] Name France\'s capital.\n3. ["a"] x',
    "<question>\nWhich city is France's capital?\n</question>\nQuestion: x\n",
]


@pytest.mark.parametrize("reply", REPLIES)
def test_line_parser_gives_the_whole_replys_parse_for_any_chunking(reply):
    rng = random.Random(0)
    for limit in (1, 2, 5):
        for _ in range(30):
            cuts = sorted(rng.sample(range(1, len(reply)), min(len(reply) - 1, rng.randint(0, 8))))
            pieces = [reply[a:b] for a, b in itertools.pairwise([0, *cuts, len(reply)])]
            parser = LineParser(limit)
            early = [item for piece in pieces for item in parser.feed(piece)]
            rest, restart = parser.finish()
            full = parse_paraphrases(reply)[:limit]
            assert (rest if restart else early + rest) == full
            assert restart == (early != full[: len(early)])


def test_line_parser_gives_a_line_as_soon_as_it_is_complete():
    parser = LineParser(3)
    assert parser.feed("1. Which city is Fra") == []
    assert parser.feed("nce's capital?\n2. Name") == ["Which city is France's capital?"]
    assert parser.feed(" it.") == []
    assert parser.finish() == (["Name it."], False)
    # a "[" that cannot open a JSON list does not hold lines back; one that can does
    parser = LineParser(3)
    assert parser.feed("1. [v1] Which city is France's capital?\n") == ["[v1] Which city is France's capital?"]
    parser = LineParser(3)
    assert parser.feed('1. Which city is capital?\n["Which') == []
    assert parser.finish() == (["Which city is capital?", '["Which'], False)


# --- pipelining -----------------------------------------------------------------------------------


def comparable(result):
    data = result.model_dump(mode="json", exclude={"timings"})
    for a in data["answers"]:
        a.pop("latency_s")
    data["usage"].pop("prompt_tokens")
    data["usage"].pop("completion_tokens")
    return data


async def test_a_streamed_reply_gives_the_same_result_as_the_whole_reply():
    # near-copies, a dropped number, a check that says NO, answers that disagree: every path of the filter
    reply = "\n".join(
        [
            "Here are the rewordings:",
            "1. What is the capital city of France?",  # near-copy of the question
            "2. Which city serves as France's capital?",
            "3. Which city is the capital of France in 1900?",  # adds a number
            "4. Name the French capital, please.",
            "5. Tell me the capital France has, its seat of government.",
        ]
    )

    def judge(text):
        return "NO" if "seat of government" in text else "YES"

    pattern = ["Paris", "Paris", "Lyon", "Paris", "Lyon", "Lyon"]
    for k in (3, 5):
        results = []
        for backend in (FakeBackend, FakeStreamingBackend):
            sp = make(backend(by_variant(pattern, paraphrases=reply, judge=judge), delay_s=0.01), k=k)
            results.append(await sp.aanswer(QUESTION, equivalence="exact", paraphrase_check="llm"))
        whole, streamed = results
        assert [r.reason for r in whole.rejected] == (["overlap", "numbers_changed"] + ["not_equivalent"] * (k == 5))
        assert comparable(streamed) == comparable(whole)


def paraphrase_answered(messages: list) -> int | None:
    """The paraphrase (1, 2, ...) an answer call asks about; None for the original, a paraphrase or a judge call."""
    text = last_user_text(messages)
    m = _VARIANT.search(text)
    return int(m.group(1)) + 1 if m and PARAPHRASE_MARKER not in text and JUDGE_MARKER not in text else None


async def test_the_first_paraphrase_is_answered_before_the_paraphrase_stream_ends():
    first_asked = asyncio.Event()
    asked: list[int] = []

    class Noting(FakeStreamingBackend):
        async def complete(self, model, messages, params):
            if (n := paraphrase_answered(messages)) is not None:
                asked.append(n)
                first_asked.set()
            return await super().complete(model, messages, params)

    async def pause(sent: str) -> None:  # the reply holds after its first line until that line is answered
        if "\n" in sent:
            await asyncio.wait_for(first_asked.wait(), 10)  # fails the paraphrasing if nobody asks

    backend = Noting(by_variant(["Paris"] * 6), pause=pause)
    r = await make(backend, k=5, equivalence="exact", paraphrase_check="off").aanswer(QUESTION)
    assert r.k_kept == 5 and not r.flags
    assert asked == [1, 2, 3, 4, 5]  # line 1 while the rest was held, then each as its line came


async def test_an_upstream_that_cannot_stream_gets_the_whole_reply_asked():
    refused = FakeStreamingBackend(refuse_streams=UpstreamError("streaming is not supported", status=400))
    r = await make(refused, k=3, equivalence="exact", paraphrase_check="off").aanswer(QUESTION)
    assert r.k_kept == 3 and not r.flags
    paraphrase_calls = [params for _, msgs, params in refused.calls if PARAPHRASE_MARKER in last_user_text(msgs)]
    assert ["stream_options" in params for params in paraphrase_calls] == [True, False]  # refused, then whole
    assert r.usage.calls == 1 + 1 + 4 and r.usage.failed_calls == 1
    # a backend without streaming (the embedded model, FakeBackend) is asked for the whole reply at once
    plain = FakeBackend()
    r = await make(plain, k=3, equivalence="exact", paraphrase_check="off").aanswer(QUESTION)
    assert r.k_kept == 3 and r.usage.calls == 5


async def test_streaming_can_be_turned_off_and_by_default_is_only_with_adaptive_k():
    backend = FakeStreamingBackend()
    r = await make(backend, k=2, equivalence="exact", paraphrase_check="off", stream_paraphrases=False).aanswer(
        QUESTION
    )
    assert r.k_kept == 2 and not backend.streams
    sp = SelfParaphraser(
        client=ModelClient(backend=backend), model="openai/fake", k=2, paraphrase_check="off", renamings=False
    )
    assert (await sp.aanswer(QUESTION)).k_kept == 2 and not backend.streams
    assert (await sp.aanswer(QUESTION, adaptive=True)).answer == "Paris" and len(backend.streams) == 1


async def test_a_refused_key_is_not_asked_again_without_streaming():
    refused = FakeStreamingBackend(refuse_streams=UpstreamError("bad key", status=401))
    r = await make(refused, k=3, equivalence="exact", paraphrase_check="off").aanswer(QUESTION)
    assert r.flags == ["paraphrase_failed"] and r.k_kept == 0 and r.answer == "Paris"


# --- adaptive k ------------------------------------------------------------------------------------


class WholeReplyFirst(FakeStreamingBackend):
    """Answers to paraphrases wait until the paraphrase reply was read to its end: every line is in
    before the vote can settle."""

    async def complete(self, model, messages, params):
        if paraphrase_answered(messages) is not None:
            await settle(lambda: bool(self.streams) and self.streams[-1][1] is not None, "the reply was read whole")
        return await super().complete(model, messages, params)


async def test_adaptive_stops_early_on_unanimous_answers():
    backend = WholeReplyFirst(by_variant(["Paris"] * 6))
    r = await make(backend, k=5, equivalence="exact", paraphrase_check="llm", adaptive=True).aanswer(QUESTION)
    # margin 2 at k=5: the original and 2 agreeing paraphrases cannot be overruled by the other 3
    assert r.k_kept == 2 and len(r.skipped_paraphrases) == 3 and r.answer == "Paris" and r.vote_share == 1.0
    assert r.calls_saved == 3 * 2  # an answer call and a check call per skipped paraphrase
    assert r.usage.calls == 1 + 2 + 3  # paraphrase, 2 checks, 3 answers
    assert r.usage.calls + r.calls_saved == 1 + 5 + 6  # what fixed k spends


async def test_a_vote_settled_before_the_reply_ends_closes_the_stream():
    long_tail = "\n".join(
        ["1. Which city is the capital of France? (v0)", "2. Name the capital of France, please. (v1)"]
        + [f"{i}. " + " ".join(["Tell me, friend, the capital of France"] * 10) + f" (v{i - 1})" for i in (3, 4, 5)]
    )

    async def pause(sent: str) -> None:  # the rest of the reply never comes: only closing the stream ends it
        if "3. Tell" in sent:  # lines 1 and 2 are in, line 3 half sent
            await asyncio.wait_for(asyncio.Event().wait(), 10)

    backend = FakeStreamingBackend(by_variant(["Paris"] * 6, paraphrases=long_tail), pause=pause)
    sp = make(backend, k=5, equivalence="exact", paraphrase_check="off", adaptive=True)
    r = await sp.aanswer(QUESTION)
    assert r.k_kept == 2 and r.answer == "Paris" and not r.flags
    ((_, end),) = backend.streams
    assert end is None  # closed before its end: the lines it had not sent are neither listed nor counted
    assert r.skipped_paraphrases == [] and r.calls_saved == 0


async def test_adaptive_continues_on_disagreement():
    pattern = ["Paris", "Lyon", "Lyon", "Paris", "Lyon", "Lyon"]
    sp = make(FakeBackend(by_variant(pattern)), k=5, equivalence="exact", paraphrase_check="off")
    fixed = await sp.aanswer(QUESTION)
    adaptive = await sp.aanswer(QUESTION, adaptive=True)
    # four paraphrases against the original: not settled until all are in (the paraphrase call alone cannot
    # overrule, so the original's answer is returned, selfpara.pipeline.independence)
    assert fixed.answer == adaptive.answer == "Paris" and adaptive.k_kept == 5 and adaptive.calls_saved == 0


@pytest.mark.parametrize("margin", [1.0, 2.0])
async def test_adaptive_never_changes_the_answer_of_fixed_k(margin):
    k = 4
    words = ["Paris", "Lyon", "I don't know"]
    saved = 0
    for pattern in itertools.product(words, repeat=k + 1):
        backend = FakeBackend(by_variant(list(pattern)))
        sp = make(backend, k=k, equivalence="exact", paraphrase_check="off", overrule_margin=margin)
        for policy in ("flag", "abstain"):
            fixed = await sp.aanswer(QUESTION, low_vote_share=policy)
            adaptive = await sp.aanswer(QUESTION, low_vote_share=policy, adaptive=True)
            assert adaptive.answer == fixed.answer, (pattern, policy)
            assert set(adaptive.clusters[adaptive.winner].members) <= set(fixed.clusters[fixed.winner].members)
            # the answers asked are the first of fixed k's
            assert [a.text for a in adaptive.answers] == [a.text for a in fixed.answers][: len(adaptive.answers)]
            assert adaptive.usage.calls + adaptive.calls_saved == fixed.usage.calls
            saved += adaptive.calls_saved
    assert saved > 0


class _OneFormHangs(FakeBackend):
    """The first two form calls copy the question (rejected), the third never answers, and the original
    answers once the third is asked: so adaptive k weighs the original against one line still to come."""

    def __init__(self) -> None:
        super().__init__(lambda model, messages, params: "Berlin" if last_user_text(messages) == SPANISH else SPANISH)
        self.forms = 0
        self.third_asked = asyncio.Event()

    async def complete(self, model, messages, params):
        if last_user_text(messages) == SPANISH:
            await self.third_asked.wait()
        else:
            self.forms += 1
            if self.forms == 3:
                self.third_asked.set()
                await asyncio.Event().wait()  # cancelled when the request stops pursuing lines
        return await super().complete(model, messages, params)


SPANISH = "¿Cuál es la capital de Alemania?"


async def test_no_paraphrase_is_flagged_when_adaptive_k_stops_after_rejecting_every_line():
    # the question's wordings were copies (rejected) and the one line still to come could not overrule the
    # original: adaptive k stopped with the original's answer alone, which must not read as a confident vote
    sp = make(_OneFormHangs(), k=3, equivalence="exact", paraphrase_check="off", adaptive=True)
    r = await sp.aanswer(SPANISH, paraphrase_method="forms", stream_paraphrases=False)
    assert r.k_kept == 0 and r.skipped_paraphrases == [] and [x.reason for x in r.rejected] == ["overlap", "overlap"]
    assert r.n_voted == 1 and "no_paraphrases" in r.flags and r.answer == "Berlin"


async def test_given_paraphrases_are_all_answered_even_with_adaptive_k():
    sp = make(FakeBackend(), k=5, equivalence="exact", adaptive=True)
    r = await sp.aanswer(QUESTION, paraphrases=["a b", "c d", "e f"])
    assert r.k_kept == 3 and r.calls_saved == 0


# --- over HTTP: the fake upstream, both transports -----------------------------------------------


@pytest.fixture(scope="module")
def upstream():
    from tests.fake_upstream import serve_fake

    yield from serve_fake()


def streamed_paraphrases(question: str, k: int) -> list[bytes]:
    """The fake upstream's paraphrase reply as SSE chunks: the first holds line 1, each next one a line."""
    from tests.fake_upstream import paraphrases

    head = '{"id":"c","object":"chat.completion.chunk","created":1,"model":"fake","choices":[{"index":0,"delta":'
    lines = [f"{i + 1}. {p}\n" for i, p in enumerate(paraphrases(question, k))]
    events = [head + json.dumps({"role": "assistant", "content": lines[0]}) + ',"finish_reason":null}]}']
    events += [head + json.dumps({"content": line}) + ',"finish_reason":null}]}' for line in lines[1:]]
    events += [head + '{},"finish_reason":"stop"}]}', "[DONE]"]
    return [f"data: {e}\n\n".encode() for e in events]


@pytest.mark.parametrize("transport", ["http", "litellm"])
async def test_over_http_each_paraphrase_is_answered_while_the_reply_still_streams(upstream, transport):
    upstream.reset()
    # line 1 comes, the rest is held until the test lets it go: line 1 must be answered meanwhile
    upstream.raw(streamed_paraphrases(QUESTION, 4), when="paraphrase", stream=True, held=True)
    sp = SelfParaphraser(
        model="openai/fake",
        api_base=upstream.url,
        api_key="sk-test-0000",
        transport=transport,
        k=4,
        equivalence="exact",
        paraphrase_check="off",
        retries=0,
        stream_paraphrases=True,
        renamings=False,
    )
    request = asyncio.create_task(sp.aanswer(QUESTION))
    await asyncio.to_thread(upstream.wait_for_calls, kind="answer", contains="[v1]")
    assert not upstream.calls_of("answer")[-1].text.startswith("[v2]")  # only line 1 had come
    upstream.release()
    r = await request
    assert r.k_kept == 4 and r.answer == "Paris" and r.usage.completion_tokens > 0
    (paraphrase,) = upstream.calls_of("paraphrase")
    assert paraphrase.body["stream"] is True
    assert sorted(c.variant for c in upstream.calls_of("answer")) == [0, 1, 2, 3, 4]


async def test_over_http_a_refused_stream_is_asked_for_whole(upstream):
    upstream.reset()
    upstream.not_sse(when="paraphrase")  # a plain JSON answer to the stream request
    sp = SelfParaphraser(
        model="openai/fake", api_base=upstream.url, k=3, equivalence="exact", paraphrase_check="off", renamings=False
    )
    r = await sp.aanswer(QUESTION, stream_paraphrases=True)
    assert [c.body.get("stream") for c in upstream.calls_of("paraphrase")] == [True, None]
    assert r.k_kept == 3 and not r.flags


async def test_a_streamed_paraphrase_call_is_cached_like_a_whole_one():
    from selfpara.models.cache import open_call_cache

    backend = FakeStreamingBackend(delay_s=0.01)
    client = ModelClient(backend=backend, retries=0, cache=open_call_cache("memory"))
    sp = SelfParaphraser(
        client=client,
        model="openai/fake",
        k=3,
        equivalence="exact",
        paraphrase_check="off",
        stream_paraphrases=True,
        renamings=False,
    )
    first = await sp.aanswer(QUESTION)
    assert len(backend.streams) == 1 and first.usage.calls == 5 and first.usage.cache_hits == 0
    again = await sp.aanswer(QUESTION)
    assert again.usage.calls == 0 and again.usage.cache_hits == 5 and len(backend.streams) == 1
    assert comparable(again)["answers"] == comparable(first)["answers"]
    # a whole (not streamed) paraphrase call of the same request finds the same entry
    whole = await sp.aanswer(QUESTION, stream_paraphrases=False)
    assert whole.usage.calls == 0 and whole.usage.cache_hits == 5


async def test_the_form_calls_failing_alike_are_one_warning(caplog):
    # a question longer than the model's context fails every form call the same way: one warning, not one each
    def respond(model, messages, params):
        if last_user_text(messages) != QUESTION:
            raise UpstreamError("the prompt has 4453 tokens; the model runs with a context of 4096")
        return "Paris"

    sp = make(FakeBackend(respond), k=3, equivalence="exact", paraphrase_check="off", paraphrase_method="forms")
    with caplog.at_level(logging.INFO, logger="selfpara.pipeline.paraphrase.lines"):
        r = await sp.aanswer(QUESTION)
    assert "paraphrase_failed" in r.flags and r.answer == "Paris"
    said = [(rec.levelno, rec.getMessage()) for rec in caplog.records if "paraphrase call failed" in rec.getMessage()]
    assert [level for level, _ in said] == [logging.WARNING, logging.INFO, logging.INFO]
