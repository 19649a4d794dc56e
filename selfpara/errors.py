"""Errors selfpara raises. Every message is safe to show a user: no secrets, no traceback needed."""

from __future__ import annotations


class SelfparaError(Exception):
    """Base class of every error selfpara raises on purpose."""


class InputError(SelfparaError, ValueError):
    """The caller's input cannot be used (empty question, malformed messages, ...)."""


class ConfigError(SelfparaError, ValueError):
    """A setting is out of range, unknown, or points at something unreadable."""


class UpstreamError(SelfparaError):
    """A model call failed and retrying did not (or cannot) help.

    Attributes:
        status: an HTTP-like status that fits the failure (502 upstream failed,
            504 timed out, 401 bad key, 404 unknown model, 429 rate limited, 400 rejected).
        retryable: whether the failure was transient (and retries ran out).
    """

    def __init__(self, message: str, *, status: int = 502, retryable: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable


class UpstreamTimeout(UpstreamError):
    """A model call did not finish within its timeout (after retries)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, status=504, retryable=True)
