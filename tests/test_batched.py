"""Batched decoding: the sampler, the prefix rule, the scheduler on a fake context, and the real SmolLM2."""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Iterator, Sequence

import numpy as np
import pytest

from selfpara.errors import UpstreamError
from selfpara.models.engines.batched import BatchScheduler
from selfpara.models.engines.embedded import resolve
from selfpara.models.engines.llamacpp import LlamaCppModel
from selfpara.models.engines.params import GenRequest, make_request
from selfpara.models.engines.prefix import reusable_prefix
from selfpara.models.engines.sampling import TokenSampler
from selfpara.result import Completion

# ---------------------------------------------------------------- sampling


def test_greedy_picks_the_most_likely_token_with_its_raw_logprob() -> None:
    logits = np.array([0.5, 3.0, 1.0], dtype=np.float32)
    token, lp = TokenSampler().pick(logits)
    assert token == 1
    assert lp == pytest.approx(3.0 - np.log(np.exp(0.5) + np.exp(3.0) + np.exp(1.0)))
    assert TokenSampler().pick(np.array([1e4, 0.0], dtype=np.float32))[1] == pytest.approx(0.0)  # no overflow


def test_one_seed_draws_one_sequence_and_another_seed_another() -> None:
    logits = np.zeros(50, dtype=np.float32)

    def draws(seed: int) -> list[int]:
        sampler = TokenSampler(temperature=1.0, seed=seed)
        return [sampler.pick(logits)[0] for _ in range(20)]

    assert draws(7) == draws(7)
    assert draws(7) != draws(8)


def test_temperature_sampling_follows_the_distribution() -> None:
    logits = np.log(np.array([0.7, 0.2, 0.1]))
    sampler = TokenSampler(temperature=1.0, seed=0)
    counts = np.bincount([sampler.pick(logits)[0] for _ in range(4000)], minlength=3) / 4000
    assert counts == pytest.approx([0.7, 0.2, 0.1], abs=0.03)


def test_top_p_keeps_only_the_nucleus() -> None:
    logits = np.log(np.array([0.5, 0.3, 0.15, 0.05]))
    sampler = TokenSampler(temperature=1.0, top_p=0.75, seed=1)
    drawn = {sampler.pick(logits)[0] for _ in range(500)}
    assert drawn == {0, 1}  # 0.5 + 0.3 reach 0.75; the tail is never drawn


# ---------------------------------------------------------------- the prefix rule


@pytest.mark.parametrize(
    ("cached", "body", "tokens", "kept"),
    [
        (list(range(12)), 9, list(range(10)), 9),  # same body again: all of it
        (list(range(12)), 9, [*range(9), 42], 9),  # same body, another last token: all of the body
        (list(range(10)), 9, [*range(6), 99, 98, 97], 4),  # 6 in common: one whole chunk of 4
        (list(range(10)), 9, list(range(14)), 8),  # a longer prompt: whole chunks of the old body only
        (list(range(12)), 5, list(range(12)), 4),  # tokens past the body were decoded one by one
        ([5, 6, 7], 2, list(range(10)), 0),
        ([], 0, [1], 0),
    ],
)
def test_a_prefix_is_kept_only_where_a_fresh_evaluation_computes_it_alike(
    cached: list[int], body: int, tokens: list[int], kept: int
) -> None:
    assert reusable_prefix(cached, body, tokens, 4) == kept


# ---------------------------------------------------------------- the scheduler, on a fake context


class FakeSlots:
    """A context whose next token is the previous one plus one, ending at 0 (the end token).

    A sequence's tokens thus depend on its own prompt only: mixing two sequences shows.
    """

    def __init__(self, n_slots: int = 4, n_ctx_slot: int = 64, vocab: int = 100) -> None:
        self.n_slots, self.n_ctx_slot, self.vocab = n_slots, n_ctx_slot, vocab
        self.held_tokens: list[list[int]] = [[] for _ in range(n_slots)]
        self.steps: list[list[int]] = []  # the slots of each step
        self.prefilled: list[tuple[int, int]] = []  # (slot, tokens kept)
        self.fail_decode = False
        self.step_started = threading.Event()
        self.gate: threading.Event | None = None  # when set, each step waits for it

    def reuse(self, slot: int, tokens: Sequence[int]) -> int:
        return reusable_prefix(self.held_tokens[slot], len(self.held_tokens[slot]), tokens, 4)

    def held(self, slot: int) -> int:
        return len(self.held_tokens[slot])

    def prefill(self, slot: int, tokens: Sequence[int]) -> None:
        self.prefilled.append((slot, self.reuse(slot, tokens)))
        self.held_tokens[slot] = list(tokens[:-1])

    def decode(self, rows: Sequence[tuple[int, int, int]]) -> list[np.ndarray]:
        self.step_started.set()
        if self.gate is not None:
            self.gate.wait(5)
        if self.fail_decode:
            raise RuntimeError("decode exploded")
        self.steps.append([slot for slot, _, _ in rows])
        out = []
        for _slot, token, _pos in rows:
            logits = np.zeros(self.vocab, dtype=np.float32)
            logits[(token + 1) % self.vocab] = 10.0
            out.append(logits)
        return out

    def forget(self, slot: int) -> None:
        self.held_tokens[slot] = []


class Harness:
    """A scheduler on FakeSlots in its own thread; prompts are token lists written as text."""

    def __init__(self, slots: FakeSlots, *, start: bool = True) -> None:
        self.slots = slots
        self.requests: queue.SimpleQueue[GenRequest | None] = queue.SimpleQueue()
        self.closing = threading.Event()
        self.scheduler = BatchScheduler(
            slots,
            self.requests,
            self.closing,
            tokenize=lambda req: [int(t) for t in str(req.messages[-1]["content"]).split()],
            is_end=lambda token: token == 0,
            detokenize=lambda tokens: " ".join(map(str, tokens)),
            title="Fake",
        )
        self.thread = threading.Thread(target=self.scheduler.run, daemon=True)
        if start:
            self.thread.start()

    def submit(self, prompt: str, **params: object) -> GenRequest:
        req = make_request([{"role": "user", "content": prompt}], {"max_tokens": 5, **params})
        self.requests.put(req)
        return req

    def stop(self) -> None:
        self.closing.set()
        self.requests.put(None)
        self.thread.join(5)
        assert not self.thread.is_alive()


def test_requests_are_decoded_together_each_with_its_own_tokens() -> None:
    h = Harness(FakeSlots(), start=False)
    reqs = [h.submit(p) for p in ("1 10", "2 20", "3 30", "4 40", "5 50", "6 96")]
    h.thread.start()  # all six wait: four start together
    results = [r.future.result(5) for r in reqs]
    h.stop()
    assert [r.text for r in results[:5]] == ["11 12 13 14 15", "21 22 23 24 25", "31 32 33 34 35",
                                             "41 42 43 44 45", "51 52 53 54 55"]  # fmt: skip
    assert results[0].finish_reason == "length" and results[0].completion_tokens == 5
    assert results[5].text == "97 98 99" and results[5].finish_reason == "stop"  # 100 wraps to the end token 0
    assert results[0].prompt_tokens == 2 and results[0].logprob is not None
    assert h.scheduler.peak == 4  # four slots, the fifth and sixth waited for a free one


def test_a_request_arriving_mid_generation_joins_at_the_next_step() -> None:
    slots = FakeSlots()
    slots.gate = threading.Event()
    h = Harness(slots)
    first = h.submit("1 10", max_tokens=4)
    assert slots.step_started.wait(5)
    second = h.submit("2 20", max_tokens=2)
    slots.gate.set()
    assert first.future.result(5).text == "11 12 13 14" and second.future.result(5).text == "21 22"
    h.stop()
    assert [len(s) for s in slots.steps][:2] == [1, 2]  # the second joined the first's second step


def test_a_cancelled_sequence_stops_and_the_others_go_on() -> None:
    slots = FakeSlots()
    slots.gate = threading.Event()
    h = Harness(slots)
    kept = h.submit("1 10", max_tokens=6)
    dropped = h.submit("2 20", max_tokens=6)
    assert slots.step_started.wait(5)
    dropped.abandoned.set()
    slots.gate.set()
    stopped, finished = dropped.future.result(5), kept.future.result(5)
    h.stop()
    assert stopped.finish_reason == "abandoned" and stopped.completion_tokens < 6
    assert finished.text == "11 12 13 14 15 16" and finished.finish_reason == "length"


def test_a_failed_step_is_a_502_for_its_sequences_and_the_next_request_works() -> None:
    slots = FakeSlots()
    h = Harness(slots)
    slots.fail_decode = True
    failed = h.submit("1 10")
    with pytest.raises(UpstreamError) as err:
        failed.future.result(5)
    assert err.value.status == 502 and "decode exploded" in str(err.value)
    slots.fail_decode = False
    assert h.submit("1 10").future.result(5).text == "11 12 13 14 15"
    h.stop()


def test_a_prompt_longer_than_a_slot_is_a_400() -> None:
    h = Harness(FakeSlots(n_ctx_slot=3))
    with pytest.raises(UpstreamError) as err:
        h.submit("1 2 3 4").future.result(5)
    assert err.value.status == 400 and "context of 3 per sequence" in str(err.value)
    assert h.submit("1 2").future.result(5).completion_tokens == 1  # budget: 3 - 2 tokens
    h.stop()


def test_a_slot_holding_the_prompt_prefix_is_chosen() -> None:
    slots = FakeSlots(n_slots=2)
    h = Harness(slots)
    h.submit("7 7 7 7 7 7 1").future.result(5)
    h.submit("9 9").future.result(5)  # goes to the empty slot, not over the long prefix
    h.submit("9 9 9").future.result(5)  # reuses nothing: takes the slot holding least
    h.submit("7 7 7 7 7 7 2").future.result(5)
    h.stop()
    assert [slot for slot, _ in slots.prefilled] == [0, 1, 1, 0]
    assert slots.prefilled[-1][1] == 6  # the slot that held "7 7 7 7 7 7" kept it


def test_closing_ends_the_running_and_refuses_the_waiting() -> None:
    slots = FakeSlots(n_slots=1)
    slots.gate = threading.Event()
    h = Harness(slots)
    running = h.submit("1 10", max_tokens=50)
    waiting = h.submit("2 20")
    assert slots.step_started.wait(5)
    h.closing.set()
    h.requests.put(None)
    slots.gate.set()
    h.thread.join(5)
    assert running.future.result(1).finish_reason == "abandoned"
    with pytest.raises(UpstreamError) as err:
        waiting.future.result(1)
    assert err.value.status == 503


# ---------------------------------------------------------------- the real SmolLM2 GGUF (offline)

PROMPTS = [
    "What is the capital of France?",
    "Name a colour of the sky.",
    "What is 3 times 4?",
    "Say hello.",
    "Who wrote Hamlet?",
    "Name a fruit that is yellow.",
    "How many legs does a dog have?",
    "What is the opposite of hot?",
]


@pytest.fixture(scope="module")
def engines() -> Iterator[dict[str, LlamaCppModel]]:
    spec = resolve("local/smollm2")
    made = {"single": LlamaCppModel(spec, parallel=1), "batched": LlamaCppModel(spec, parallel=8)}
    yield made
    for engine in made.values():
        engine.close()


async def _ask(engine: LlamaCppModel, prompt: str, **params: object) -> Completion:
    return await engine.complete("local/smollm2", [{"role": "user", "content": prompt}], {"max_tokens": 12, **params})


@pytest.mark.model
async def test_real_eight_concurrent_calls_match_one_at_a_time_and_do_not_mix(
    engines: dict[str, LlamaCppModel],
) -> None:
    queued = [await _ask(engines["single"], p) for p in PROMPTS]
    batched = await asyncio.gather(*(_ask(engines["batched"], p) for p in PROMPTS))
    assert [(r.text, r.completion_tokens, r.prompt_tokens, r.finish_reason) for r in batched] == [
        (r.text, r.completion_tokens, r.prompt_tokens, r.finish_reason) for r in queued
    ]
    assert [r.logprob for r in batched] == pytest.approx([r.logprob for r in queued], abs=1e-3)
    assert len({r.text for r in batched}) == len(PROMPTS)  # each got its own answer


@pytest.mark.model
async def test_real_seeded_samples_reproduce_when_decoded_together(engines: dict[str, LlamaCppModel]) -> None:
    engine = engines["batched"]

    async def round_() -> list[str]:
        calls = [_ask(engine, "Write a random word.", temperature=1.0, seed=s, max_tokens=6) for s in (1, 2, 3, 4)]
        return [r.text for r in await asyncio.gather(*calls)]

    first, second = await round_(), await round_()
    assert first == second
    assert len(set(first)) > 1  # four seeds, not one sample four times


@pytest.mark.model
async def test_real_cancelled_call_stops_without_disturbing_the_others(
    engines: dict[str, LlamaCppModel], monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = engines["batched"]
    alone = await _ask(engine, PROMPTS[0], max_tokens=24)
    together = threading.Event()  # a decode step held both sequences: the long story is under way
    decode = engine._slots.decode  # type: ignore[union-attr]

    def watched(rows: Sequence[tuple[int, int, int]]) -> list[np.ndarray]:
        if len(rows) >= 2:
            together.set()
        return decode(rows)

    monkeypatch.setattr(engine._slots, "decode", watched)
    long = asyncio.ensure_future(_ask(engine, "Write a long story about a dragon.", max_tokens=400))
    beside = asyncio.ensure_future(_ask(engine, PROMPTS[0], max_tokens=24))
    assert await asyncio.to_thread(together.wait, 120)
    long.cancel()
    result = await beside
    assert (result.text, result.completion_tokens) == (alone.text, alone.completion_tokens)
    with pytest.raises(asyncio.CancelledError):
        await long
