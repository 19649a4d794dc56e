"""The proxy's logs: one line per record, as text or as a JSON object (with the request id
when there is one); secrets redacted and control characters escaped in both, so a client
cannot forge a log line (a model name holding a newline stays on its line)."""

from __future__ import annotations

import json
import logging
import re
import time
from typing import TextIO

from selfpara.util.redaction import redact

_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f\x85\u2028\u2029]")


def printable(value: object, limit: int | None = None) -> str:
    """`value` for a log line: control characters escaped (\\n, \\x1b, ...), cut at `limit`."""
    text = str(value) if limit is None else str(value)[:limit]
    return _UNPRINTABLE.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)


class TextFormatter(logging.Formatter):
    """`time level logger: message` per line; secrets redacted and control characters escaped in the
    whole record (its traceback too), so a multi-line message or a traceback stays on the record's one
    line (as `\\n`)."""

    def __init__(self, secrets: list[str | None] | None = None) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")
        self._secrets = list(secrets or [])

    def format(self, record: logging.LogRecord) -> str:
        return printable(redact(super().format(record), self._secrets))


class JsonFormatter(logging.Formatter):
    """`{"ts", "level", "logger", "message", "request_id"?, "exc"?, ...}` per line; keys redacted.

    A record's `fields` (an `extra`: the request line's status, model, latency_ms, error, ...) become
    keys of their own, so that a log reader filters on `status` without parsing the message.
    """

    def __init__(self, secrets: list[str | None] | None = None) -> None:
        super().__init__()
        self._secrets = list(secrets or [])

    def format(self, record: logging.LogRecord) -> str:
        out = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": redact(record.getMessage(), self._secrets),
        }
        request_id = getattr(record, "request_id", None)
        if request_id:
            out["request_id"] = request_id
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            for key, value in fields.items():
                clean = redact(value, self._secrets) if isinstance(value, str) else value
                out.setdefault(str(key), clean)
        if record.exc_info:
            out["exc"] = redact(self.formatException(record.exc_info), self._secrets)
        return json.dumps(out, ensure_ascii=False, default=str)


class RedactingFilter(logging.Filter):
    """Removes the given secrets (and key-shaped strings) from every record's message."""

    def __init__(self, secrets: list[str | None]) -> None:
        super().__init__()
        self._secrets: list[str | None] = [s for s in secrets if s]

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(message, self._secrets)
        if clean != message:
            record.msg, record.args = clean, None
        return True


def server_log_handler(fmt: str, secrets: list[str | None], stream: TextIO | None = None) -> logging.Handler:
    """The handler `selfpara serve` logs through (to `stream`, default stderr): JSON or text, secrets
    redacted from every record, tracebacks included."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter(secrets) if fmt == "json" else TextFormatter(secrets))
    handler.addFilter(RedactingFilter(secrets))
    return handler


def setup_server_logging(fmt: str, verbose: bool, secrets: list[str | None]) -> None:
    """Configure the root logger for `selfpara serve`: request lines at INFO, JSON or text."""
    handler = server_log_handler(fmt, secrets)
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, handlers=[handler], force=True)
    for name in ("selfpara.server", "uvicorn", "uvicorn.error"):
        logging.getLogger(name).setLevel(logging.INFO)
    for noisy in ("LiteLLM", "litellm", "LiteLLM Router", "LiteLLM Proxy", "httpx", "httpcore", "transformers"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
