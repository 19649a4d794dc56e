"""Errors of the proxy in OpenAI's error format (`{"error": {"message", "type", "param", "code"}}`,
so the `openai` client raises its usual classes), and the mapping from selfpara's errors. The
statuses and codes: docs/proxy.md#errors.
"""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse

from selfpara.errors import ConfigError, InputError, MissingCredential, SelfparaError, UpstreamError, UpstreamTimeout
from selfpara.models.upstream_data import UpstreamInvalidResponse, UpstreamRetryLater
from selfpara.util.redaction import redact


class ProxyError(Exception):
    """An error the proxy answers with: HTTP status plus the OpenAI error fields."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        code: str | None = None,
        param: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.code = code
        self.param = param
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


def bad_request(message: str, *, param: str | None = None, code: str | None = None) -> ProxyError:
    return ProxyError(400, message, param=param, code=code)


_STATUS_DEFAULTS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    404: ("invalid_request_error", "not_found"),
    405: ("invalid_request_error", "method_not_allowed"),
    408: ("invalid_request_error", "request_body_timeout"),
    413: ("invalid_request_error", "request_too_large"),
    415: ("invalid_request_error", "unsupported_media_type"),
    429: ("rate_limit_error", "proxy_overloaded"),
    500: ("server_error", "internal_error"),
    502: ("upstream_error", "upstream_failed"),
    503: ("server_error", "not_ready"),
    504: ("upstream_error", "upstream_timeout"),
}


def for_status(status: int, message: str) -> ProxyError:
    """A ProxyError with the type and code that fit `status`."""
    type_, code = _STATUS_DEFAULTS.get(status, ("invalid_request_error" if status < 500 else "server_error", None))
    return ProxyError(status, message, type=type_, code=code)


# The generic reasons an upstream failure is shown with, by code.
_UPSTREAM_REASONS = {
    "upstream_timeout": "the upstream did not answer in time (after retries)",
    "upstream_rejected_request": "the upstream rejected the request",
    "upstream_auth_failed": "the upstream rejected the proxy's credentials",
    "upstream_model_not_found": "the upstream does not serve the configured model",
    "upstream_rate_limited": "the upstream is rate-limiting the proxy",
    "upstream_failed": "the upstream failed (after retries)",
    "upstream_invalid_response": "the upstream's answer cannot be relayed as JSON (NaN, Infinity, invalid "
    "Unicode or a malformed body or event)",
    "upstream_response_too_large": "the upstream's answer exceeds this proxy's limit (max_upstream_response_bytes)",
}


def too_large() -> ProxyError:
    """The error for an upstream answer over max_upstream_response_bytes."""
    code = "upstream_response_too_large"
    return ProxyError(502, _UPSTREAM_REASONS[code], type="upstream_error", code=code)


def unrelayable() -> ProxyError:
    """The error for an answer that cannot be encoded as JSON (NaN, Infinity, a lone surrogate)."""
    code = "upstream_invalid_response"
    return ProxyError(502, _UPSTREAM_REASONS[code], type="upstream_error", code=code)


def upstream_code(exc: UpstreamError) -> str:
    """The error code of an upstream failure: translated, not echoed (see `from_selfpara`)."""
    if isinstance(exc, UpstreamTimeout) or exc.status == 504:
        return "upstream_timeout"
    if isinstance(exc, UpstreamInvalidResponse):
        return exc.code
    return {
        400: "upstream_rejected_request",
        401: "upstream_auth_failed",
        404: "upstream_model_not_found",
        429: "upstream_rate_limited",
    }.get(exc.status, "upstream_failed")


def public_reason(error: str) -> str:
    """The generic reason shown to clients for an upstream error message (as stored in a
    report's `answers[i].error` or `rejected[i].detail`); the message itself stays in the log."""
    text = error.lower()
    if "no answer within" in text or "timed out" in text:
        return _UPSTREAM_REASONS["upstream_timeout"]
    if "rejected the api key" in text:
        return _UPSTREAM_REASONS["upstream_auth_failed"]
    if "rate limited" in text:
        return _UPSTREAM_REASONS["upstream_rate_limited"]
    if "unknown model" in text:
        return _UPSTREAM_REASONS["upstream_model_not_found"]
    if "rejected the request" in text:
        return _UPSTREAM_REASONS["upstream_rejected_request"]
    return _UPSTREAM_REASONS["upstream_failed"]


def from_selfpara(exc: SelfparaError, secrets: list[str | None] = (), request_id: str | None = None) -> ProxyError:  # type: ignore[assignment]
    """Map a selfpara error to the proxy's answer.

    Upstream statuses are translated, not echoed: a client must not mistake the
    upstream rejecting the *server's* key (401) or a misconfigured upstream model (404)
    for a problem with its own key or model name, so both become 502. The upstream
    rejecting the request itself (400: context too long, bad parameter) stays 400.
    Upstream text is not shown (it may hold internal URLs, paths or credentials): the
    message is a generic reason and the request id to find the details in the log.
    """
    see_log = f" (request id {request_id}; details in the proxy's log)" if request_id else ""
    if isinstance(exc, MissingCredential):  # the proxy's own configuration, not the client's request
        return ProxyError(
            502, "the proxy has no key for its upstream" + see_log, type="upstream_error", code="upstream_auth_failed"
        )
    if isinstance(exc, (InputError, ConfigError)):  # our own messages about the request
        return bad_request(redact(str(exc) or type(exc).__name__, list(secrets)))
    if isinstance(exc, UpstreamError):
        code = upstream_code(exc)
        message = _UPSTREAM_REASONS[code] + see_log
        if code == "upstream_timeout":
            return ProxyError(504, message, type="upstream_error", code=code)
        if code == "upstream_rejected_request":
            return ProxyError(400, message, type="invalid_request_error", code=code)
        headers = {"Retry-After": str(exc.retry_after_s)} if isinstance(exc, UpstreamRetryLater) else None
        return ProxyError(502, message, type="upstream_error", code=code, headers=headers)
    return ProxyError(500, "internal error" + see_log, type="server_error", code="internal_error")


RETRIED_UPSTREAM = frozenset(
    {
        "upstream_failed",
        "upstream_timeout",
        "upstream_auth_failed",
        "upstream_model_not_found",
        "upstream_invalid_response",
        "upstream_response_too_large",
    }
)
"""Codes of upstream failures a client's own retry would only repeat: the proxy retried the transient ones
already, and the others (a key, a model name, an answer that cannot be relayed) fail again alike."""


def error_response(err: ProxyError, headers: dict[str, str] | None = None) -> JSONResponse:
    """The JSON error response of `err`; `X-Should-Retry: false` on a failure no retry of the client mends
    (one the upstream asked to retry later carries its `Retry-After` instead)."""
    no_retry = {"X-Should-Retry": "false"} if err.code in RETRIED_UPSTREAM and "Retry-After" not in err.headers else {}
    return JSONResponse(err.body(), status_code=err.status, headers={**no_retry, **err.headers, **(headers or {})})
