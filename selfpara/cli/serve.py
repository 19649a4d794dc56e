"""`selfpara serve`: run the OpenAI-compatible proxy."""

from __future__ import annotations

import contextlib
import json
import logging
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from enum import Enum
from pathlib import Path
from typing import Any, Optional

import typer
from rich.markup import escape

from selfpara.cli import app
from selfpara.cli.choices import ParaphraseCheck, Transport
from selfpara.cli.common import EXIT_INTERRUPTED, clean_errors, err_console
from selfpara.cli.conventions import Command
from selfpara.cli.presets import default
from selfpara.errors import ConfigError
from selfpara.models.names import EMBEDDED_MODEL
from selfpara.pipeline.equivalence import EQUIVALENCE_FUNCTIONS
from selfpara.util.envvars import (
    API_BASE_ENV,
    CALL_CACHE_ENV,
    CONFIG_ENV,
    EQUIVALENCE_ENV,
    HOST_ENV,
    JUDGE_MODEL_ENV,
    K_ENV,
    LOG_FORMAT_ENV,
    MODEL_ENV,
    PORT_ENV,
    PROXY_KEY_ENV,
    ROUTER_CONFIG_ENV,
    SERVE_SPEC_ENV,
    TRANSPORT_ENV,
)
from selfpara.util.extras import install_note
from selfpara.util.hosts import is_loopback
from selfpara.util.redaction import redact


class LogFormat(str, Enum):
    text = "text"
    json = "json"


_FIELD_FLAGS = {
    "timeout_s": "timeout",
    "transport": "upstream_transport",
    "max_max_tokens": "max_tokens_limit",
    "keepalive_s": "keepalive",
}
"""Settings whose flag has another name, for errors that name the flag."""


@app.command(cls=Command)
def serve(
    ctx: typer.Context,
    model: Optional[str] = typer.Option(
        None,
        "--model",
        "-m",
        envvar=MODEL_ENV,
        help="Upstream litellm model, e.g. openai/NAME for any "
        f"OpenAI-compatible server (default: the embedded model {EMBEDDED_MODEL}). "
        + escape(install_note("qwen", ("llama_cpp",))),
    ),
    host: str = typer.Option(
        "127.0.0.1", envvar=HOST_ENV, help="Interface to listen on (0.0.0.0 for every interface)."
    ),
    port: int = typer.Option(8000, envvar=PORT_ENV, help="Port to listen on."),
    api_key_env: Optional[str] = typer.Option(
        None,
        "--api-key-env",
        metavar="NAME",
        help="Environment variable holding the proxy's own key; "
        f"clients then must send `Authorization: Bearer <key>`. Default: {PROXY_KEY_ENV} when it is set, "
        "else the settings file's api_key_env, else no key.",
    ),
    metrics_key_env: Optional[str] = typer.Option(
        None,
        "--metrics-key-env",
        metavar="NAME",
        help="Environment variable holding the operator's key for /metrics: only with it does /metrics serve the "
        "call cache's hits and the upstream calls, which would tell a client what others asked (the proxy key "
        "opens the rest). Default: the settings file's metrics_key_env, else none.",
    ),
    no_auth: bool = typer.Option(
        False,
        "--no-auth",
        help=f"Serve without a proxy key, on purpose: needed when {PROXY_KEY_ENV} is set but empty (otherwise an "
        "error, so that a key lost on its way does not open the proxy); refused together with a key.",
    ),
    upstream_key_env: Optional[str] = typer.Option(
        None,
        "--upstream-key-env",
        metavar="NAME",
        help="Environment variable holding the upstream's key "
        "(default: the provider's own, e.g. OPENAI_API_KEY, read by litellm).",
    ),
    config: Optional[Path] = typer.Option(
        None,
        "--config",
        "-c",
        envvar=CONFIG_ENV,
        help="TOML or JSON settings file (see docs/proxy.md); flags and environment variables override it.",
    ),
    api_base: Optional[str] = typer.Option(
        None,
        "--api-base",
        envvar=API_BASE_ENV,
        help="Upstream base URL (default: OPENAI_API_BASE / OPENAI_BASE_URL for openai/ models).",
    ),
    k: Optional[int] = typer.Option(
        None, "--k", "-k", envvar=K_ENV, help=f"Default paraphrases per question (default {default('k', 'serve')})."
    ),
    equivalence: Optional[str] = typer.Option(
        None,
        "--equivalence",
        envvar=EQUIVALENCE_ENV,
        help="Default answer-equivalence functions (do two answers say the same?): auto or of "
        f"{EQUIVALENCE_FUNCTIONS.help_names()}.",
    ),
    judge_model: Optional[str] = typer.Option(None, envvar=JUDGE_MODEL_ENV, help="Default model for the LLM judges."),
    paraphrase_check: Optional[ParaphraseCheck] = typer.Option(
        None, help="Check each paraphrase keeps the question (default auto: llm, off on embedded models)."
    ),
    temperature: Optional[float] = typer.Option(None, help="Default answer temperature."),
    max_tokens: Optional[int] = typer.Option(
        None, help=f"Default max tokens per answer (default {default('max_tokens', 'serve')})."
    ),
    timeout: Optional[float] = typer.Option(None, "--timeout", help="Timeout of one upstream call, seconds."),
    retries: Optional[int] = typer.Option(None, help="Retries of a transient upstream failure."),
    max_concurrent_requests: Optional[int] = typer.Option(None, help="Requests handled at once; beyond: 429."),
    upstream_concurrency: Optional[int] = typer.Option(None, help="Upstream calls in flight at once, all requests."),
    max_body_bytes: Optional[int] = typer.Option(None, help="Largest request body; beyond: 413."),
    max_messages: Optional[int] = typer.Option(None, help="Most messages per request."),
    max_k: Optional[int] = typer.Option(None, help="Largest k a request may ask for."),
    max_tokens_limit: Optional[int] = typer.Option(None, help="Largest max_tokens a request may ask for."),
    keepalive: Optional[float] = typer.Option(None, help="Seconds between SSE keep-alives while streaming."),
    upstream_transport: Optional[Transport] = typer.Option(
        None,
        envvar=TRANSPORT_ENV,
        help="The upstream's transport (WrapConfig.transport): auto (default), "
        "litellm or http (lean OpenAI-API client for openai/ and hosted_vllm/ upstreams: less CPU per call).",
    ),
    router_config: Optional[Path] = typer.Option(
        None,
        "--router-config",
        envvar=ROUTER_CONFIG_ENV,
        help="litellm model_list file (YAML or JSON) naming several deployments of the upstream model: "
        "load balancing, failover, cooldowns (docs/scale-out.md). Instead of --api-base.",
    ),
    metrics: Optional[bool] = typer.Option(
        None, "--metrics/--no-metrics", help="Serve Prometheus metrics at /metrics (default on; needs the proxy key)."
    ),
    cache: Optional[str] = typer.Option(
        None,
        "--cache",
        envvar=CALL_CACHE_ENV,
        help="The call cache (identical deterministic upstream calls answered once): memory (default), off, "
        "redis://HOST:PORT/DB (shared by replicas and workers) or sqlite:///PATH. Not the cache folder "
        "(SELFPARA_CACHE_DIR).",
    ),
    workers: int = typer.Option(1, min=1, help="Worker processes (each a full proxy; limits apply per worker)."),
    any_model: Optional[bool] = typer.Option(
        None,
        "--any-model/--own-models",
        help="Serve every requested model name with the upstream (default: only its own names; others get 404).",
    ),
    client_api_base: Optional[list[str]] = typer.Option(
        None,
        "--client-api-base",
        metavar="HOST[:PORT]",
        help="An upstream requests may name (selfpara.api_base); repeat for more; '*.example.com' for subdomains, "
        "'*' any host (never loopback, link-local or this proxy unless named). The server's upstream key is never "
        "sent there. Default: none.",
    ),
    allowed_host: Optional[list[str]] = typer.Option(
        None,
        "--allowed-host",
        help="A Host name the proxy serves (repeat for more; '*.example.com' for subdomains); default: on loopback "
        "only loopback names, elsewhere any.",
    ),
    graceful_timeout: float = typer.Option(30.0, help="Seconds to let in-flight requests finish on shutdown."),
    log_format: LogFormat = typer.Option(
        LogFormat.text, envvar=LOG_FORMAT_ENV, help="text or json; either way one record per line."
    ),
    access_log: bool = typer.Option(False, help="Also log uvicorn's access lines (each request is logged anyway)."),
    check: bool = typer.Option(False, "--check", help="Print the resolved settings (no keys) and exit."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="More logging."),
) -> None:
    """Run the OpenAI-compatible proxy: POST /v1/chat/completions answers by self-paraphrase vote."""
    with clean_errors(ctx, _FIELD_FLAGS):  # a bad value from the settings file stays exit code 1
        import os

        from selfpara.server.settings import load_settings

        if no_auth:
            if api_key_env is not None or os.environ.get(PROXY_KEY_ENV):
                raise ConfigError(
                    f"--no-auth, but a proxy key is given ({api_key_env or PROXY_KEY_ENV}): drop one of them"
                )
        elif api_key_env is None and PROXY_KEY_ENV in os.environ:
            # The proxy's key under its conventional name needs no flag; a key is read only from
            # the environment (by load_settings), never taken from a flag or a file. Set but empty
            # is an error there: an open proxy is chosen with --no-auth, not by a key gone missing.
            if not os.environ[PROXY_KEY_ENV]:
                raise ConfigError(
                    f"{PROXY_KEY_ENV} is set but empty: give the proxy a key, or pass --no-auth to serve without one"
                )
            api_key_env = PROXY_KEY_ENV
        config_file = str(config) if config else None
        upstream: dict[str, object] = {
            "model": model,
            "api_base": api_base,
            "k": k,
            "equivalence": equivalence,
            "judge_model": judge_model,
            "paraphrase_check": paraphrase_check.value if paraphrase_check else None,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "timeout_s": timeout,
            "retries": retries,
            "transport": upstream_transport.value if upstream_transport else None,
            "cache": cache,
        }
        server: dict[str, object] = {
            "max_concurrent_requests": max_concurrent_requests,
            "upstream_concurrency": upstream_concurrency,
            "max_body_bytes": max_body_bytes,
            "max_messages": max_messages,
            "max_k": max_k,
            "max_max_tokens": max_tokens_limit,
            "keepalive_s": keepalive,
            "any_model": any_model,
            "client_api_bases": list(client_api_base) if client_api_base else None,
            "allowed_hosts": list(allowed_host) if allowed_host else None,
            "router_config": str(router_config) if router_config else None,
            "metrics": metrics,
        }
        load_args: dict[str, Any] = {
            "config_file": config_file,
            "upstream": upstream,
            "server": server,
            "api_key_env": api_key_env,
            "upstream_key_env": upstream_key_env,
            "no_auth": no_auth,
            "metrics_key_env": metrics_key_env,
        }
        settings = load_settings(**load_args)
        if settings.router_config is not None:  # the judge's deployments are checked when built: now, not in a worker
            from selfpara.server.state import default_client

            default_client(settings)
        if check:
            public = settings.model_dump(mode="json", exclude={"api_key", "metrics_key", "upstream"})
            public["upstream"] = settings.upstream.public_dict()
            public["auth"] = settings.api_key is not None
            public["metrics_key"] = settings.metrics_key is not None
            public["upstream_key"] = "set" if settings.upstream.api_key is not None else "provider environment"
            # a password in a URL (--api-base, the cache's) is masked like every other secret
            typer.echo(redact(json.dumps(public, indent=2, default=str), settings.secrets()))
            return

        import uvicorn

        from selfpara.server.logs import setup_server_logging
        from selfpara.server.protocol import uvicorn_options

        # The proxy writes nothing to stdout: what libraries print (litellm's "Provider List") goes
        # to stderr with the logs, in this process and in worker processes, which inherit the fd.
        process_stdout = sys.__stdout__
        if process_stdout is not None and sys.stdout is process_stdout:  # not a test runner's capture
            process_stdout.flush()
            os.dup2(sys.stderr.fileno(), process_stdout.fileno())
        setup_server_logging(log_format.value, verbose, settings.secrets())
        started = (
            f"selfpara proxy: http://{host}:{port}/v1 -> {settings.upstream.model}"
            f" (k={settings.upstream.k}, auth {'on' if settings.api_key else 'off'}"
            f"{f', {workers} workers' if workers > 1 else ''})"
        )
        open_proxy = settings.api_key is None and not is_loopback(host)
        warning = (
            f"no proxy key, listening on {host}: whoever reaches this port spends the upstream's key; "
            f"set {PROXY_KEY_ENV}"
        )
        if log_format is LogFormat.json:  # every line a JSON object, these two as well
            server_log = logging.getLogger("selfpara.server")
            server_log.info(started)
            if open_proxy:
                server_log.warning(warning)
        else:
            err_console().print(started, highlight=False, markup=False, soft_wrap=True)  # one line, also redirected
            if open_proxy:
                err_console().print(f"[yellow]warning:[/yellow] {escape(warning)}", highlight=False, soft_wrap=True)

        def run(app: str | Callable[..., Any], **extra: Any) -> None:
            """Serve `app` (an ASGI app, or the import string of an app factory)."""
            uvicorn.run(
                app,
                host=host,
                port=port,
                log_config=None,  # keep the logging configured above
                access_log=access_log,
                timeout_graceful_shutdown=graceful_timeout,  # type: ignore[arg-type]  # uvicorn waits float seconds
                proxy_headers=False,
                **uvicorn_options(settings),  # the header read timeout
                **extra,
            )

        with _interrupt_seen() as interrupted:
            if workers > 1:  # each worker process builds its own app from the same spec
                spec = {"settings": load_args, "log_format": log_format.value, "verbose": verbose}
                os.environ[SERVE_SPEC_ENV] = json.dumps(spec)
                run("selfpara.server.app:app_from_env", factory=True, workers=workers)
            else:
                from selfpara.server import create_app

                run(create_app(settings))
        if interrupted.is_set():  # uvicorn ends quietly on Ctrl-C: the command still says it was interrupted
            if log_format is LogFormat.json:  # as a JSON line, like the others
                logging.getLogger("selfpara.server").info("interrupted")
                raise typer.Exit(EXIT_INTERRUPTED)
            raise KeyboardInterrupt


@contextlib.contextmanager
def _interrupt_seen() -> Iterator[threading.Event]:
    """An event set when Ctrl-C (SIGINT) reaches the process while the proxy serves.

    uvicorn takes SIGINT over while it serves, shuts down gracefully, gives the signal back to the
    handler it found (this one) and then swallows the KeyboardInterrupt that handler raises, so
    `uvicorn.run` returns as if the server had ended by itself; the event lets `serve` end with
    exit code 130 (docs/cli.md) instead of 0. Only in the main thread, where signals are handled;
    the handler found before is put back after.
    """
    seen = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield seen
        return

    def on_interrupt(signum: int, frame: Any) -> None:
        seen.set()
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        yield seen
    finally:
        if previous is not None:  # None: a handler not set from Python, which cannot be put back
            signal.signal(signal.SIGINT, previous)
