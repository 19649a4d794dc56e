"""Secrets out of text: what errors and logs may show of an upstream's message."""

from __future__ import annotations

import re
from collections.abc import Iterable

MIN_MASKED_CHARS = 8
"""A known secret shorter than this is not masked: replacing every "a" of a log line by *** shows
the key is "a". So short a key is no secret anyway (vLLM's conventional `EMPTY`); the proxy's own
key must be longer (`selfpara.server.settings.MIN_PROXY_KEY_CHARS`)."""

_KEYLIKE = re.compile(r"\b(sk|key|pk|rk)-[A-Za-z0-9_\-*]{4,}")
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{6,}")
# `Authorization: Token abc`, `"authorization": "Digest ..."`: the credential after any scheme
_AUTHORIZATION = re.compile(r"""(?i)\b(authorization\\?["']?\s*[:=]\s*\\?["']?(?:[a-z][a-z0-9-]*\s+)?)[^\s"',;\\]+""")
# `scheme://user:PASSWORD@host`: the password runs to the last @ of the URL (`p@ss99`, `pa/ss99`), the
# user may be empty (`redis://:pw@host`)
_URL_PASSWORD = re.compile(r"""(\b[a-z][a-z0-9+.\-]*://[^/\s:@"'<>]*):[^\s"'<>]*@""", re.IGNORECASE)
# `password=...`, `"passwd": "..."`, `api_key: ...`, `aws_secret_access_key=...`, `\"password\": \"...\"`
# (JSON escaped inside a string): the value after a secret's name, prefixed or not (`db_password`); a
# quoted value to its closing quote; a bare null, true or false is no secret (and JSON stays JSON)
_NAMED = re.compile(
    r"""(?ix)\b((?:[a-z0-9]+[_-])*(?:
        pass(?:word|wd|phrase)?|pwd|secret(?:[_-]?access)?(?:[_-]?key)?|client[_-]?secret|private[_-]?key
        |api[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token
    ))(\\?["']?\s*[:=]\s*\\?["']?)(?:(?<=")[^"\\]+|(?<=')[^'\\]+|(?!(?:null|true|false)\b)[^\s"',;&}\\]+)"""
)
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")
_AWS_KEY_ID = re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b")
_GITHUB = re.compile(r"\b(gh[pousr]_|github_pat_)[A-Za-z0-9_]{20,}")


def maskable(secrets: Iterable[str | None]) -> list[str]:
    """The secrets long enough to mask (see MIN_MASKED_CHARS)."""
    return [s for s in secrets if s and len(s) >= MIN_MASKED_CHARS]


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """Remove secrets from `text`: the given ones (MIN_MASKED_CHARS or longer), anything shaped like
    a key (`sk-...`, an AWS access key id, a GitHub token, a JWT), bearer tokens and any credential
    after `Authorization:`, passwords in URLs (`postgres://user:***@host`, `redis://:***@host`) and the
    value after a secret's name (`password=***`, `aws_secret_access_key=***`, escaped JSON too)."""
    for secret in maskable(secrets):
        text = text.replace(secret, "***")
    text = _BEARER.sub(lambda m: m.group(1) + " ***", text)
    text = _AUTHORIZATION.sub(lambda m: m.group(1) + "***", text)
    text = _URL_PASSWORD.sub(lambda m: m.group(1) + ":***@", text)
    text = _NAMED.sub(lambda m: m.group(1) + m.group(2) + "***", text)
    text = _JWT.sub("eyJ***", text)
    text = _AWS_KEY_ID.sub(lambda m: m.group(1) + "***", text)
    text = _GITHUB.sub(lambda m: m.group(1) + "***", text)
    return _KEYLIKE.sub(lambda m: m.group(1) + "-***", text)
