"""Secrets out of text: what errors and logs may show of an upstream's message."""

from __future__ import annotations

import re

_KEYLIKE = re.compile(r"\b(sk|key|pk|rk)-[A-Za-z0-9_\-*]{4,}")
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{6,}")
_URL_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.\-]*://[^/\s:@]+):[^@\s/]+@", re.IGNORECASE)


def redact(text: str, secrets: list[str | None] = ()) -> str:  # type: ignore[assignment]
    """Remove secrets from `text`: the given ones, anything shaped like a key, bearer
    tokens, and passwords in URLs (`postgres://user:***@host`)."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    text = _BEARER.sub(lambda m: m.group(1) + " ***", text)
    text = _URL_PASSWORD.sub(lambda m: m.group(1) + ":***@", text)
    return _KEYLIKE.sub(lambda m: m.group(1) + "-***", text)
