"""A scripted fake model backend, for unit tests, benchmarks and examples that must run offline.

It is a real Backend (see `selfpara.models.client`), so everything above it — retries, timeouts,
accounting, the whole pipeline — runs unchanged.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from selfpara.pipeline.prompts import (
    FORM_MARKER,
    JUDGE_MARKER,
    PARAPHRASE_MARKER,
    SHORT_FORMS,
    WORD_PROBLEM_FORMS,
    untagged,
)
from selfpara.result import Completion, Message

Responder = Callable[[str, list[Message], dict[str, Any]], "str | Completion | Exception"]


def last_user_text(messages: list[Message]) -> str:
    """Text of the last user message ('' if none)."""
    for message in reversed(messages):
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            return str(message["content"])
    return ""


def default_responder(answer: str = "Paris") -> Responder:
    """A responder that paraphrases by templates (form i of a one-form call, or line i of a list, gets
    template i and the mark "(vi)"), judges YES, and answers `answer`."""

    # Each template shares only the question's last words, so paraphrases pass the overlap filter.
    templates = [
        "Could you tell me about {tail}",
        "I would like to learn regarding {tail}",
        "Please explain this matter: {tail}",
        "Quick one for you, friend, concerning {tail}",
        "Here is my query on {tail}",
        "Kindly clarify something involving {tail}",
        "Wondering, what do experts say on {tail}",
        "My teacher asked us; answer needed: {tail}",
        "Settle an argument between colleagues over {tail}",
        "For trivia night, respond to {tail}",
        "Give me the facts behind {tail}",
        "Share what is known regarding this, namely {tail}",
    ]

    def respond(model: str, messages: list[Message], params: dict[str, Any]) -> str:
        text = last_user_text(messages)
        if PARAPHRASE_MARKER in text:
            tail = " ".join((untagged("question", text) or "").split()[-3:])
            if FORM_MARKER in text:
                forms = [*SHORT_FORMS, *WORD_PROBLEM_FORMS]
                i = next((j for j, f in enumerate(forms) if f.instruction in text), 0) % len(SHORT_FORMS)
                return f"{templates[i % len(templates)].format(tail=tail)} (v{i})"
            k = int(m.group(1)) if (m := re.search(r"in (\d+) different ways", text)) else 3
            return "\n".join(f"{i + 1}. {templates[i % len(templates)].format(tail=tail)} (v{i})" for i in range(k))
        if JUDGE_MARKER in text:
            return "YES"
        return answer

    return respond


class FakeBackend:
    """Answers from a responder function, optionally after a delay, and records every call.

    Args:
        responder: maps (model, messages, params) to a text, a Completion, or an
            exception to raise. Default: `default_responder()`.
        delay_s: seconds each call takes (asyncio.sleep, so calls overlap like real ones).
    """

    def __init__(self, responder: Responder | None = None, *, delay_s: float = 0.0) -> None:
        self.responder = responder or default_responder()
        self.delay_s = delay_s
        self.calls: list[tuple[str, list[Message], dict[str, Any]]] = []

    async def complete(self, model: str, messages: list[Message], params: dict[str, Any]) -> Completion:
        self.calls.append((model, messages, params))
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        out = self.responder(model, messages, params)
        if isinstance(out, Exception):
            raise out
        if isinstance(out, Completion):
            return out
        prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in messages)
        return Completion(text=out, prompt_tokens=prompt_tokens, completion_tokens=len(out.split()))


class FakeStreamingBackend(FakeBackend):
    """A FakeBackend that also streams, as the http and litellm backends do (`ModelClient.stream_text`
    and the proxy's passthrough use it): the reply comes word by word, spread evenly over the
    stream's duration, so a line of a list is complete before the whole reply is.

    Args:
        responder, delay_s: as for FakeBackend (`delay_s`: what a call that does not stream takes).
        stream_s: how long a streamed reply takes (default `delay_s`).
        refuse_streams: answer every stream request with this error instead (an upstream
            that cannot stream).
        pause: awaited before each piece after the first, with the text sent so far: a test
            holds the reply there until it has seen what it waits for (no clock).
    """

    raw_endpoints = frozenset({"chat/completions"})

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        delay_s: float = 0.0,
        stream_s: float | None = None,
        refuse_streams: Exception | None = None,
        pause: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        super().__init__(responder, delay_s=delay_s)
        self.stream_s = delay_s if stream_s is None else stream_s
        self.refuse_streams = refuse_streams
        self.pause = pause
        self.streams: list[list[float | None]] = []  # [start, end] of each stream (loop time); end None: closed early

    async def raw(self, model: str, endpoint: str, body: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
        out = await self.complete(model, body["messages"], params)
        return {"choices": [{"index": 0, "message": {"role": "assistant", "content": out.text}}]}

    async def raw_stream(
        self, model: str, endpoint: str, body: dict[str, Any], params: dict[str, Any]
    ) -> AsyncIterator[dict[str, Any]]:
        messages = body["messages"]
        self.calls.append((model, messages, {**params, **{k: v for k, v in body.items() if k != "messages"}}))
        if self.refuse_streams is not None:
            raise self.refuse_streams
        out = self.responder(model, messages, params)
        if isinstance(out, Exception):
            raise out
        text = out.text if isinstance(out, Completion) else out
        pieces = re.findall(r"\S+\s*|\s+", text) or [""]
        loop = asyncio.get_running_loop()

        async def events() -> AsyncIterator[dict[str, Any]]:
            span: list[float | None] = [loop.time(), None]
            self.streams.append(span)
            for i, piece in enumerate(pieces, 1):
                if self.pause is not None and i > 1:
                    await self.pause("".join(pieces[: i - 1]))
                if self.stream_s:  # to a deadline, so that the stream takes stream_s however late each wake-up is
                    await asyncio.sleep(max(0.0, span[0] + self.stream_s * i / len(pieces) - loop.time()))  # type: ignore[operator]
                yield {"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
            span[1] = loop.time()
            yield {"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": len(pieces)}}

        return events()


def tiny_nli_model(directory: Path, labels: tuple[str, str, str] = ("entailment", "neutral", "contradiction")) -> Path:
    """Write a tiny, randomly initialised (seeded) NLI classifier into `directory` and return it: a real
    model directory for `selfpara.pipeline.equivalence.nli.NLIModel` whose verdicts mean nothing (needs the
    `nli` extra)."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "what", "which", "is", "the", "capital", "of", "france"]
    words += ["paris", "river", "vienna", "answer"]
    (directory / "vocab.txt").write_text("\n".join(words))
    BertTokenizer(str(directory / "vocab.txt")).save_pretrained(directory)
    # num_labels and the label maps are PretrainedConfig's keyword arguments, which mypy does not see
    config = BertConfig(  # type: ignore[call-arg]
        vocab_size=len(words),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        num_labels=3,
        id2label=dict(enumerate(labels)),
        label2id={name: i for i, name in enumerate(labels)},
    )
    torch.manual_seed(0)  # the same random verdicts in every run
    BertForSequenceClassification(config).save_pretrained(directory)
    return directory
