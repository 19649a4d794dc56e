"""Errors selfpara raises. Every message is safe to show a user: no secrets, no traceback needed."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError


class SelfparaError(Exception):
    """Base class of every error selfpara raises on purpose."""


class InputError(SelfparaError, ValueError):
    """The caller's input cannot be used (empty question, malformed messages, ...)."""


class ConfigError(SelfparaError, ValueError):
    """A setting is out of range, unknown, or points at something unreadable.

    Attributes:
        problems: (field path, problem) pairs when the error comes from a settings check
            (`config_error`), so that a caller can name each field as its user knows it (the
            CLI names the flag); empty otherwise. A problem of the whole object has path "".
    """

    def __init__(self, message: str, problems: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__(message)
        self.problems = problems


class MissingCredential(ConfigError):
    """A model needs a key that is nowhere to be found: found before any call, never retried.

    Attributes:
        model: the model that needs it.
        variables: the environment variables, any one of which would give it.
    """

    def __init__(self, model: str, variables: tuple[str, ...]) -> None:
        super().__init__(
            f"{model} needs an API key and none is set: set {' or '.join(variables)} "
            "(or give the key, or the base URL of a server that needs none); nothing was sent"
        )
        self.model = model
        self.variables = variables


def config_error(
    exc: ValidationError,
    what: str = "settings",
    *,
    name: Callable[[str], str] | None = None,
    default_loc: str = "config",
) -> ConfigError:
    """One readable ConfigError from a pydantic ValidationError: `invalid <what>: <field>: <problem>; ...`.

    Args:
        exc: the validation failure.
        what: what was being validated, for the message ("settings", "server settings", ...).
        name: turns a dotted field path into the name the user knows (e.g. a CLI flag).
        default_loc: the name used for a problem of the whole object (a cross-field check).
    """
    problems = []
    structured = []
    for err in exc.errors():
        path = ".".join(str(p) for p in err["loc"])
        loc = name(path) if name and path else path or default_loc
        message = str(err["msg"]).removeprefix("Value error, ")
        problems.append(f"{loc}: {message}")
        structured.append((path, message))
    return ConfigError(f"invalid {what}: {'; '.join(problems)}", problems=tuple(structured))


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


class CallLimitReached(UpstreamError):
    """The request made as many model calls as its settings allow (`max_calls`): this one was not made."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"not called: the request reached its limit of {limit} model calls (max_calls)", status=502)
