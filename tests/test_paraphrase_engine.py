"""The paraphrase calls on the real embedded engine (SmolLM2): structure, not words."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from typing import Any

import pytest

from selfpara.config import build_config
from selfpara.models.client import ModelClient
from selfpara.paraphraser import SelfParaphraser
from selfpara.pipeline.paraphrase import parse_paraphrases
from selfpara.pipeline.paraphrase.calls import list_request
from selfpara.pipeline.prompts import FORM_MARKER, SHORT_FORMS
from selfpara.result import Completion, Message, Usage

PROBLEM = "Mia buys 3 apples for $2 each. Leo buys 4 pears for $5 each. How many dollars do Mia and Leo spend together?"
QUESTION = "What sweet food do honeybees make?"  # no renaming reads it: every slot is the model's


class Recording:
    """The real engine, each call's start and end written into one event log, in the order they happen."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.events: list[tuple[str, str]] = []

    async def complete(self, model: str, messages: list[Message], params: dict[str, Any]) -> Completion:
        text = str(messages[-1]["content"])
        form = next((f.name for f in SHORT_FORMS if FORM_MARKER in text and f.instruction in text), None)
        name = f"form:{form}" if form else f"answer:{text}"
        self.events.append(("start", name))
        try:
            return await self.engine.complete(model, messages, params)
        finally:
            self.events.append(("end", name))


@pytest.mark.model
async def test_the_list_call_returns_parseable_candidates() -> None:
    cfg = build_config(model="local/smollm2", k=2)
    for question in ("What is the capital of France?", PROBLEM):
        model, messages, params = list_request(question, cfg, 2)
        params["max_tokens"] = min(params["max_tokens"], 96)  # two lines are enough to read the shape
        reply = await ModelClient(timeout_s=600).complete(model, messages, usage=Usage(), kind="paraphrase", **params)
        candidates = parse_paraphrases(reply.text)
        assert candidates, reply.text
        assert all(c.strip() and "\n" not in c and not c.startswith(("1.", "-", "<question>")) for c in candidates)


@pytest.mark.model
async def test_form_calls_run_at_once_and_each_kept_wording_is_answered_as_it_lands() -> None:
    from selfpara.models.engines.llamacpp import llamacpp_model

    backend = Recording(llamacpp_model("local/smollm2"))
    client = ModelClient(backend=backend, timeout_s=600)
    sp = SelfParaphraser(model="local/smollm2", k=3, max_tokens=8, adaptive=False, drift_checks="off", client=client)
    result = await sp.aanswer(QUESTION)
    events = backend.events
    forms = [f"form:{f.name}" for f in SHORT_FORMS[:3]]
    starts = [events.index(("start", f)) for f in forms]
    ends = [events.index(("end", f)) for f in forms]
    assert max(starts) < min(ends)  # three sequences in flight at once: the engine decodes them together
    assert events.index(("start", f"answer:{QUESTION}")) < min(ends)  # the original does not wait for them
    for variant in result.variants[1:]:
        assert variant.source is not None and variant.source.startswith("form:")
        form = forms.index(variant.source)
        answered = events.index(("start", f"answer:{variant.text}"))
        assert answered > max(ends[: form + 1])  # answered once it (and the forms before it) landed ...
        if max(ends[: form + 1]) < max(ends):
            assert answered < max(ends)  # ... not once every form landed
    assert len(result.answers) == 1 + result.k_kept and all(a.ok for a in result.answers)
