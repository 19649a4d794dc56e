"""Chat-message content as text: the one reading of OpenAI content (a string or a list of parts).

Every place that turns a message's `content` into text (the pipeline's question, the
embedded model's chat template, the proxy) uses `content_text`, so that all of them
join parts the same way and refuse the same inputs.
"""

from __future__ import annotations

from selfpara.errors import InputError

PART_SEPARATOR = "\n"
"""Text parts are joined with a newline, so that words of adjacent parts never run together."""


def is_text_content(content: object) -> bool:
    """Whether `content` is text only: None, a string, or a list of `{"type": "text", "text": str}` parts."""
    if content is None or isinstance(content, str):
        return True
    if not isinstance(content, list):
        return False
    return all(isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str) for p in content)


def content_text(content: object) -> str:
    """The text of one message's `content`.

    Args:
        content: a string (returned as is), None (""), or OpenAI content parts, whose
            `text` parts are joined with PART_SEPARATOR.

    Raises:
        InputError: for a part that is not text (image, audio, file, ...), a text part
            whose `text` is not a string, or content of any other type.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise InputError(f"message content must be a string or a list of content parts, not {type(content).__name__}")
    texts: list[str] = []
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind != "text":
            raise InputError(f"only text content can be used; got a {kind or type(part).__name__!r} part")
        text = part.get("text")
        if not isinstance(text, str):
            raise InputError(f"a text content part needs a string `text`, not {type(text).__name__}")
        texts.append(text)
    return PART_SEPARATOR.join(texts)
