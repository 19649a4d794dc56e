"""Secrets out of a relayed event stream, also when one is split across events.

Each event of a passthrough stream is scrubbed whole before it is sent (`output.scrub`), but an upstream
that streams "Bearer sk-…" eight characters at a time never puts the key into one event: each piece
passed, and the client read the server's key off the stream. So the text an event adds to a field that
grows over the stream (a choice's `delta.content`, a completion's `text`, a tool call's arguments, a
Responses `*.delta`) goes through a `StreamScrubber`: per field it holds back the end of the text that
could be the start of a secret until the next piece shows whether it is one, masks every whole secret,
and sends what it held once that field ends (the choice's finish event, the Responses part's `.done`
event, or, for a stream cut short, one more event before `[DONE]`). A held piece is never longer than
the longest secret, so the client sees the text as late as that, no later.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from selfpara.util.redaction import maskable

_DELTA_FIELDS = ("content", "reasoning_content", "refusal")
Key = tuple[Any, ...]


class StreamScrubber:
    """Scrubs the growing text fields of one stream's events (see the module doc).

    Args:
        secrets: what must not reach the client (those too short to mask are left, as `maskable` says).
    """

    def __init__(self, secrets: Sequence[str | None]) -> None:
        self.secrets = sorted(set(maskable(secrets)), key=len, reverse=True)
        self.held: dict[Key, str] = {}
        self._last: dict[str, Any] = {}  # the last event seen, the shape of one made up at the end

    def events(self, item: dict[str, Any]) -> list[dict[str, Any]]:
        """`item` with its text fields scrubbed (changed in place), preceded by an event carrying held
        text when `item` ends a Responses part."""
        if not self.secrets:
            return [item]
        self._last = item
        before: list[dict[str, Any]] = []
        kind = item.get("type")
        if isinstance(kind, str) and "choices" not in item:  # the Responses API's events
            key: Key = ("responses", kind.rsplit(".", 1)[0], item.get("item_id"), item.get("content_index"))
            if kind.endswith(".delta") and isinstance(item.get("delta"), str):
                item["delta"] = self.feed(key, item["delta"])
            elif kind.endswith(".done") and self.held.get(key):
                before.append({**_responses_part(item), "type": f"{key[1]}.delta", "delta": self.held.pop(key)})
            return [*before, item]
        for choice in item.get("choices") or []:
            if isinstance(choice, dict):
                self._choice(choice)
        return [item]

    def rest(self) -> list[dict[str, Any]]:
        """Events carrying what is still held (the stream ended without finishing those fields)."""
        out = []
        for key, text in list(self.held.items()):
            if not text:
                continue
            if key[0] == "responses":
                out.append({**_responses_part(self._last), "type": f"{key[1]}.delta", "delta": text})
                continue
            choice: dict[str, Any] = {"index": key[0], "finish_reason": None}
            _place(choice, key[1:], text)
            shell = {k: v for k, v in self._last.items() if k in ("id", "object", "created", "model")}
            out.append({**copy.deepcopy(shell), "choices": [choice]})
        self.held.clear()
        return out

    def feed(self, key: Key, text: str) -> str:
        """The part of `text` (after what `key` held) that can be sent now, secrets masked."""
        buffer = self.held.pop(key, "") + text
        for secret in self.secrets:
            buffer = buffer.replace(secret, "***")
        keep = self._partial(buffer)
        if keep:
            self.held[key] = buffer[-keep:]
            return buffer[:-keep]
        return buffer

    def _partial(self, text: str) -> int:
        """Length of the longest end of `text` that is the start of a secret."""
        longest = 0
        for secret in self.secrets:
            for start in range(max(0, len(text) - len(secret) + 1), len(text) - longest):
                if text[start] == secret[0] and secret.startswith(text[start:]):
                    longest = len(text) - start
                    break
        return longest

    def _choice(self, choice: dict[str, Any]) -> None:
        index = choice.get("index", 0)
        delta = choice.get("delta")
        if isinstance(delta, dict):
            for name in _DELTA_FIELDS:
                if isinstance(delta.get(name), str):
                    delta[name] = self.feed((index, "delta", name), delta[name])
            for call in delta.get("tool_calls") or []:
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict) and isinstance(function.get("arguments"), str):
                    key = (index, "tool", call.get("index", 0))
                    function["arguments"] = self.feed(key, function["arguments"])
        if isinstance(choice.get("text"), str):
            choice["text"] = self.feed((index, "text"), choice["text"])
        if choice.get("finish_reason") is not None:  # the choice is done: what it held goes with it
            for key in [k for k in self.held if k[0] == index]:
                _place(choice, key[1:], self.held.pop(key))


def _place(choice: dict[str, Any], where: Key, text: str) -> None:
    """Append `text` to a choice's field `where` (("delta", name), ("tool", i) or ("text",)), made if missing."""
    if where[0] == "text":
        choice["text"] = (choice.get("text") or "") + text
        return
    delta = choice.setdefault("delta", {})
    if where[0] == "delta":
        delta[where[1]] = (delta.get(where[1]) or "") + text
        return
    calls = delta.setdefault("tool_calls", [])
    call = next((c for c in calls if isinstance(c, dict) and c.get("index", 0) == where[1]), None)
    if call is None:
        call = {"index": where[1], "function": {}}
        calls.append(call)
    function = call.setdefault("function", {})
    function["arguments"] = (function.get("arguments") or "") + text


def _responses_part(item: dict[str, Any]) -> dict[str, Any]:
    """The fields that say which output part a Responses event is about."""
    return {k: item[k] for k in ("item_id", "output_index", "content_index") if k in item}
