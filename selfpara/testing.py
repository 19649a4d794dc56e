"""A scripted fake model backend, for unit tests, benchmarks and examples that must run offline.

It is a real Backend (see `selfpara.llm`), so everything above it — retries, timeouts,
accounting, the whole pipeline — runs unchanged.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

from selfpara.prompts import JUDGE_MARKER, PARAPHRASE_MARKER, untagged
from selfpara.result import Completion, Message

Responder = Callable[[str, list[Message], dict[str, Any]], "str | Completion | Exception"]


def last_user_text(messages: list[Message]) -> str:
    """Text of the last user message ('' if none)."""
    for message in reversed(messages):
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            return str(message["content"])
    return ""


def default_responder(answer: str = "Paris") -> Responder:
    """A responder that paraphrases by templates, judges YES, and answers `answer`."""

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
            k = int(m.group(1)) if (m := re.search(r"in (\d+) different ways", text)) else 3
            tail = " ".join((untagged("question", text) or "").split()[-3:])
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
