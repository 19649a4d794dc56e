"""Structured logs for the proxy: one JSON object per line, with the request id when there is one."""

from __future__ import annotations

import json
import logging
import time

from selfpara.llm import redact


class JsonFormatter(logging.Formatter):
    """`{"ts", "level", "logger", "message", "request_id"?, "exc"?}` per line; keys redacted."""

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
        if record.exc_info:
            out["exc"] = redact(self.formatException(record.exc_info), self._secrets)
        return json.dumps(out, ensure_ascii=False)


class RedactingFilter(logging.Filter):
    """Removes the given secrets (and key-shaped strings) from every record's message."""

    def __init__(self, secrets: list[str | None]) -> None:
        super().__init__()
        self._secrets = [s for s in secrets if s]

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(message, self._secrets)
        if clean != message:
            record.msg, record.args = clean, None
        return True


def setup_server_logging(fmt: str, verbose: bool, secrets: list[str | None]) -> None:
    """Configure the root logger for `selfpara serve`: request lines at INFO, JSON or text."""
    if fmt == "json":
        handler = logging.StreamHandler()
        handler.setFormatter(JsonFormatter(secrets))
        logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, handlers=[handler], force=True)
    else:
        from selfpara.cli.common import setup_logging

        setup_logging(verbose)
    root = logging.getLogger()
    for handler in root.handlers:
        handler.addFilter(RedactingFilter(secrets))
    for name in ("selfpara.server", "uvicorn", "uvicorn.error"):
        logging.getLogger(name).setLevel(logging.INFO)
    for noisy in ("LiteLLM", "litellm", "LiteLLM Router", "LiteLLM Proxy", "httpx", "httpcore"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
