"""One rewording per call, in one named form: the prompts, the calls made at once, each line answered
as its turn lands, and failures that degrade."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from selfpara import SelfParaphraser
from selfpara.errors import UpstreamError
from selfpara.models.client import ModelClient
from selfpara.pipeline.prompts import (
    FORM_MARKER,
    PARAPHRASE_MARKER,
    SHORT_FORMS,
    WORD_PROBLEM_FORMS,
    form_messages,
    forms_for,
    is_word_problem,
    untagged,
)
from selfpara.result import Completion, Message
from selfpara.testing import last_user_text

Q = "What sweet food do honeybees make?"  # no renaming reads it
PROBLEM = "Mia buys 3 apples for $2 each. Leo buys 4 pears. How many fruits do they buy?"


def form_of(text: str) -> str | None:
    return next((f.name for f in (*SHORT_FORMS, *WORD_PROBLEM_FORMS) if f.instruction in text), None)


def test_each_form_asks_for_one_line_with_its_own_example() -> None:
    for form in (*SHORT_FORMS, *WORD_PROBLEM_FORMS):
        messages = form_messages(Q, form)
        assert [m["role"] for m in messages] == ["user", "assistant", "user"]
        asked = str(messages[-1]["content"])
        assert FORM_MARKER in asked and form.instruction in asked and "one line" in asked
        assert untagged("question", asked) == Q
        assert messages[1]["content"] == form.example[1] and "\n" not in form.example[1]


def test_which_forms_a_question_gets() -> None:
    assert forms_for(Q) == SHORT_FORMS
    assert [f.name for f in forms_for("Which insect makes honey?")] == ["name", "subject first", "tell", "could you"]
    assert "tell" not in [f.name for f in forms_for("Tell me which insect makes honey.")]
    assert is_word_problem(PROBLEM) and forms_for(PROBLEM) == WORD_PROBLEM_FORMS
    assert not is_word_problem("What is 3.5 times 2?")  # a decimal point ends no sentence


class Gate:
    """A fake model whose form calls all wait until `k` of them have started (so they must be in flight at
    once), then land one by one in the order `finish` gives, each once the line of the one before was asked
    as a question (so a request that waited for every form before answering any would never end)."""

    def __init__(
        self, k: int, finish: list[str], fail: set[str] = frozenset(), *, wait_for_answers: bool = True
    ) -> None:
        self.k, self.finish, self.fail, self.wait_for_answers = k, finish, fail, wait_for_answers
        self.started: list[str] = []
        self.events: list[str] = []
        self.all_started = asyncio.Event()
        self.turn = {name: asyncio.Event() for name in finish}

    async def complete(self, model: str, messages: list[Message], params: dict[str, Any]) -> Completion:
        text = last_user_text(messages)
        if FORM_MARKER not in text:
            self.events.append(f"answer {text}")
            landed = next((f for f in self.finish if f"landed {f}" in self.events and _line(f, "") in text), None)
            if landed is not None and self.finish.index(landed) + 1 < len(self.finish):
                self.turn[self.finish[self.finish.index(landed) + 1]].set()
            return Completion(text="Honey")
        form = form_of(text) or "?"
        self.started.append(form)
        if len(self.started) == self.k:
            self.all_started.set()
            self.turn[self.finish[0]].set()
        await self.all_started.wait()
        await self.turn[form].wait()
        self.events.append(f"landed {form}")
        if not self.wait_for_answers and self.finish.index(form) + 1 < len(self.finish):
            self.turn[self.finish[self.finish.index(form) + 1]].set()
        if form in self.fail:
            following = self.finish.index(form) + 1  # no line to answer: the next lands now
            if following < len(self.finish):
                self.turn[self.finish[following]].set()
            raise UpstreamError("the upstream failed", status=500)
        return Completion(text="1. " + _line(form, untagged("question", text) or ""))


def _line(form: str, question: str) -> str:
    return f"{form.capitalize()} version: {question}"


async def answered(sp: SelfParaphraser, question: str) -> Any:
    """The request's result; a request that waits for what never comes fails here rather than hanging."""
    return await asyncio.wait_for(sp.aanswer(question), timeout=30)


def paraphraser(backend: Any, **settings: Any) -> SelfParaphraser:
    client = ModelClient(backend=backend, retries=0, backoff_s=0.001, timeout_s=5)
    defaults = {"model": "local/smollm2", "k": 3, "equivalence": "exact", "adaptive": False, "drift_checks": "off"}
    return SelfParaphraser(client=client, **{**defaults, **settings})


async def test_the_form_calls_are_in_flight_at_once_and_each_line_is_answered_in_its_turn() -> None:
    gate = Gate(3, finish=["which", "name", "subject first"])
    r = await answered(paraphraser(gate), Q)
    assert sorted(gate.started) == ["name", "subject first", "which"]  # all three started before any landed
    assert [v.source for v in r.variants[1:]] == ["form:which", "form:name", "form:subject first"]
    # each line is asked as soon as its form landed, before the next form lands
    assert gate.events.index(f"answer {_line('which', Q)}") < gate.events.index("landed name")


async def test_lines_are_given_in_form_order_whichever_call_lands_first() -> None:
    gate = Gate(3, finish=["subject first", "name", "which"], wait_for_answers=False)  # the last form lands first
    r = await answered(paraphraser(gate), Q)
    assert [v.source for v in r.variants[1:]] == ["form:which", "form:name", "form:subject first"]
    assert [v.index for v in r.variants] == [0, 1, 2, 3]


async def test_a_failed_form_call_leaves_the_others_and_says_so() -> None:
    gate = Gate(3, finish=["which", "name", "subject first"], fail={"name"})
    r = await answered(paraphraser(gate), Q)
    assert [v.source for v in r.variants[1:]] == ["form:which", "form:subject first"]
    assert "paraphrase_failed" in r.flags and r.k_kept == 2


async def test_forms_ask_only_for_the_slots_the_renamings_leave() -> None:
    gate = Gate(1, finish=["which"])
    r = await answered(paraphraser(gate, k=3), "In what year did the Berlin Wall fall?")  # two renamings
    assert gate.started == ["which"]
    assert [v.source for v in r.variants[1:]] == ["renaming:year", "renaming:year", "form:which"]


@pytest.mark.parametrize(("model", "by"), [("local/smollm2", "forms"), ("openai/gpt-4o-mini", "list")])
def test_auto_asks_an_embedded_model_for_forms_and_a_remote_one_for_a_list(model: str, by: str) -> None:
    from selfpara.config import build_config

    assert build_config(model=model).paraphrases_by == by
    assert build_config(model=model, paraphrase_method="forms").paraphrases_by == "forms"
    assert build_config(model="openai/x", paraphrase_model="local/smollm2").paraphrases_by == "forms"


def test_the_fake_model_answers_form_calls_with_one_line() -> None:
    from selfpara.testing import default_responder

    respond = default_responder()
    lines = [respond("m", form_messages(Q, f), {}) for f in SHORT_FORMS]
    assert all("\n" not in line for line in lines) and len(set(lines)) == len(lines)
    assert PARAPHRASE_MARKER in str(form_messages(Q, SHORT_FORMS[0])[-1]["content"])


class Counting:
    """A fake model that records the forms asked for and answers each question with `answers(question)`."""

    def __init__(self, answers: Any, echo: frozenset[str] = frozenset()) -> None:
        self.answers, self.echo = answers, echo  # forms in `echo` give the question back unchanged
        self.forms: list[str] = []

    async def complete(self, model: str, messages: list[Message], params: dict[str, Any]) -> Completion:
        text = last_user_text(messages)
        if FORM_MARKER in text:
            form = form_of(text) or "?"
            self.forms.append(form)
            question = untagged("question", text) or ""
            return Completion(text=question if form in self.echo else _line(form, question))
        return Completion(text=self.answers(text))


async def test_with_adaptive_k_a_vote_the_first_form_settles_never_asks_for_the_others() -> None:
    model = Counting(lambda question: "Honey")
    r = await answered(paraphraser(model, adaptive=True), Q)
    assert model.forms == ["which"]
    assert [v.source for v in r.variants[1:]] == ["form:which"] and r.answer == "Honey"
    assert r.calls_saved >= 2  # the 'name' and 'subject first' calls


async def test_with_adaptive_k_an_open_vote_asks_for_the_next_forms() -> None:
    model = Counting(lambda question: "Sugar" if question.startswith("Which version") else "Honey")
    r = await answered(paraphraser(model, adaptive=True), Q)
    assert model.forms[:2] == ["which", "name"]  # 'which' disagreed with the original: the vote wanted more
    assert r.answer == "Honey" and r.k_kept >= 2


async def test_with_adaptive_k_a_rejected_form_line_is_replaced_by_the_next_form() -> None:
    model = Counting(lambda question: "Honey", echo=frozenset({"which"}))
    r = await answered(paraphraser(model, adaptive=True), Q)
    assert model.forms == ["which", "name"]  # 'which' gave the question back (rejected): 'name' was asked
    assert [v.source for v in r.variants[1:]] == ["form:name"]
    assert [x.reason for x in r.rejected] == ["overlap"]
