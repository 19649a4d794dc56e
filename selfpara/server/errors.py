"""Errors of the proxy in the OpenAI error format, and the mapping from selfpara's errors.

Every error body is `{"error": {"message", "type", "param", "code"}}`, as OpenAI sends
it, so the `openai` client raises the usual exception classes:

    400 invalid_request_error   malformed body, bad settings, limits (k, max_tokens, messages)
    401 invalid_request_error   missing or wrong proxy key          (code invalid_api_key)
    404 invalid_request_error   unknown model / route               (code model_not_found)
    413 invalid_request_error   body too large                      (code request_too_large)
    429 rate_limit_error        the proxy's own concurrency limit   (code proxy_overloaded)
    502 upstream_error          upstream failed (after retries)     (code upstream_failed, ...)
    504 upstream_error          upstream timed out (after retries)  (code upstream_timeout)
"""

from __future__ import annotations

from typing import Any

from fastapi.responses import JSONResponse

from selfpara.errors import ConfigError, InputError, SelfparaError, UpstreamError, UpstreamTimeout
from selfpara.llm import redact


class ProxyError(Exception):
    """An error the proxy answers with: HTTP status plus the OpenAI error fields."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",  # noqa: A002 - OpenAI's field name
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
    413: ("invalid_request_error", "request_too_large"),
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


def from_selfpara(exc: SelfparaError, secrets: list[str | None] = ()) -> ProxyError:  # type: ignore[assignment]
    """Map a selfpara error to the proxy's answer.

    Upstream statuses are translated, not echoed: a client must not mistake the
    upstream rejecting the *server's* key (401) or a misconfigured upstream model (404)
    for a problem with its own key or model name, so both become 502. The upstream
    rejecting the request itself (400: context too long, bad parameter) stays 400.
    """
    message = redact(str(exc) or type(exc).__name__, list(secrets))
    if isinstance(exc, (InputError, ConfigError)):
        return bad_request(message)
    if isinstance(exc, UpstreamTimeout):
        return ProxyError(504, message, type="upstream_error", code="upstream_timeout")
    if isinstance(exc, UpstreamError):
        if exc.status == 504:
            return ProxyError(504, message, type="upstream_error", code="upstream_timeout")
        if exc.status == 400:
            return ProxyError(400, message, type="invalid_request_error", code="upstream_rejected_request")
        code = {
            401: "upstream_auth_failed",
            404: "upstream_model_not_found",
            429: "upstream_rate_limited",
        }.get(exc.status, "upstream_failed")
        return ProxyError(502, message, type="upstream_error", code=code)
    return ProxyError(500, message, type="server_error", code="internal_error")


def error_response(err: ProxyError, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(err.body(), status_code=err.status, headers={**err.headers, **(headers or {})})
