"""Settings of the proxy: the upstream it wraps, its own key, and its limits, from defaults, a TOML
or JSON file, the environment and flags (each over the one before; keys only from the environment,
which the file and the flags name). See docs/proxy.md#settings.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from selfpara.config import MAX_K, WrapConfig, build_config
from selfpara.config.file import read_settings_file, warn_if_uncalibrated
from selfpara.errors import ConfigError, config_error
from selfpara.models.http_backend import endpoint_from_env, known_base, resolve_transport
from selfpara.models.routing.model_list import RouterConfig
from selfpara.server.upstreams import ClientBase, parse_client_bases

MIN_PROXY_KEY_CHARS = 16
"""The shortest proxy key accepted: a short key can be guessed, and masking it in logs would show it
(selfpara.util.redaction.MIN_MASKED_CHARS). `openssl rand -hex 24` makes a 48-character one."""


def check_proxy_key(key: SecretStr | None, what: str = "the proxy key") -> SecretStr | None:
    """`key`, or ValueError (never showing it) when no client could send it or it is too short: a key
    with whitespace or a control character (a trailing newline from `echo`, 16 spaces) or a non-ASCII
    one never matches what arrives in `Authorization: Bearer ...`, so every client would get 401."""
    if key is None:
        return key
    value = key.get_secret_value()
    if not all("!" <= c <= "~" for c in value):
        raise ValueError(
            f"{what} holds a character no client can send in an Authorization header (whitespace, a line "
            "break, a control character or a non-ASCII letter); use printable ASCII only "
            "(`openssl rand -hex 24` makes one)"
        )
    if len(value) < MIN_PROXY_KEY_CHARS:
        raise ValueError(
            f"{what} is too short: use at least {MIN_PROXY_KEY_CHARS} characters (`openssl rand -hex 24` makes one)"
        )
    return key


class ServerSettings(BaseModel):
    """Everything one proxy process needs. Immutable; one per `create_app` call."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    upstream: WrapConfig = Field(default_factory=WrapConfig, description="The wrapped model and default settings.")
    api_key: SecretStr | None = Field(None, description="Proxy key clients must send as `Authorization: Bearer ...`.")
    metrics_key: SecretStr | None = Field(
        None,
        description="The operator's key for /metrics: with it, /metrics also serves the series that count the "
        "call cache's hits and the upstream calls (a client reading them could tell whether a question was "
        "asked before); the proxy key, or none, opens the rest only.",
    )

    any_model: bool = Field(
        False, description="Serve every requested model name with the upstream (default: only its own names, else 404)."
    )
    client_api_bases: list[str] = Field(
        default_factory=list,
        description="Upstreams a request may name as `selfpara.api_base`, as HOST[:PORT] ('*.example.com' for "
        "subdomains, '*' any host; no port: any port). A host matched only by a wildcard may not be loopback, "
        "link-local or this proxy (selfpara.server.upstreams). Empty: none. The server's upstream key is never "
        "sent there; the request may bring its own `selfpara.api_key`.",
    )
    allowed_helper_models: list[str] | None = Field(
        None,
        description="Models a request may name as judge_model / paraphrase_model (they are called with the "
        "server's key). None: the upstream and the server's own judge and paraphrase models; ['*']: any.",
    )

    max_body_bytes: int = Field(1_000_000, ge=1024, description="Largest request body (413 above).")
    max_messages: int = Field(256, ge=1, description="Most messages in one request.")
    max_k: int = Field(10, ge=1, le=MAX_K, description="Largest k a request may ask for.")
    max_max_tokens: int = Field(4096, ge=1, description="Largest max_tokens a request may ask for.")
    max_prompts: int = Field(
        32, ge=1, description="Most prompts in one /v1/completions request (each is a completion the upstream makes)."
    )
    max_upstream_calls: int = Field(
        64,
        ge=1,
        description="Most upstream calls one wrapped request may make, retries included (the request's "
        "max_calls); calls beyond it are not made: an LLM judge's pair stays undecided, an answer fails, and the "
        "answer is flagged call_limit_reached. At least 3 max_k + 2, what a request of max_k needs without judges.",
    )
    max_concurrent_requests: int = Field(64, ge=1, description="Requests handled at once; more get 429 at once.")
    upstream_concurrency: int = Field(
        256, ge=1, description="Upstream calls in flight at once, over all requests (one shared ModelClient)."
    )

    max_upstream_response_bytes: int = Field(
        4 * 2**20,
        ge=1024,
        description="Largest upstream response body (or whole event stream) the proxy reads or relays; "
        "beyond it the call fails and the client gets 502 upstream_response_too_large. 4 MiB holds "
        "max_max_tokens of text many times over, and its logprobs with a few top_logprobs; a wrapped "
        "report repeats each answer, so an upstream's huge answer would be multiplied.",
    )
    cache_max_bytes: int = Field(
        256 * 2**20,
        ge=1024,
        description="Bytes of answers the memory call cache keeps (least recently used dropped beyond it), "
        "on top of its entry bound `cache_size`.",
    )
    cache_max_connections: int | None = Field(
        None,
        ge=1,
        description="Redis connections of the call cache (per worker); None: upstream_concurrency, one per "
        "call in flight. Lookups beyond it wait up to cache_pool_timeout_s.",
    )
    cache_pool_timeout_s: float = Field(
        2.0,
        gt=0,
        description="Seconds a call-cache lookup waits for a free Redis connection; past it the call goes "
        "upstream without the cache and /ready reports the cache as degraded.",
    )
    allowed_hosts: list[str] | None = Field(
        None,
        description="Host header values served (port ignored; '*.example.com' matches subdomains; ['*']: any). "
        "None: on a loopback connection only loopback names (localhost, 127.0.0.1, ::1), so a DNS-rebinding "
        "web page cannot drive the proxy; any on other interfaces.",
    )

    keepalive_s: float = Field(
        5.0, gt=0, description="Seconds between SSE keep-alive comments while the pipeline runs."
    )
    stream_chunk_chars: int = Field(
        48, ge=1, description="About how many characters each streamed content chunk carries."
    )
    backoff_s: float = Field(0.5, ge=0, description="First retry wait of an upstream call (doubles per attempt).")
    ready_cache_s: float = Field(
        5.0,
        ge=0,
        description="Seconds a readiness result (good or bad) is reused: /ready probes the upstream at "
        "most once per period, however often it is called.",
    )
    request_timeout_s: float = Field(
        300.0,
        gt=0,
        description="Whole-request deadline: a request still running after this many seconds is "
        "cancelled and answered 504 request_timeout (stages x retries x call timeout can add up far beyond it).",
    )
    body_timeout_s: float = Field(30.0, gt=0, description="Seconds a client has to send its whole body (408 after).")
    header_timeout_s: float = Field(
        10.0, gt=0, description="Seconds a client has to send its request head; the connection is closed after."
    )
    preload: bool = Field(True, description="Load the embedded model at startup (when it is the upstream).")
    router_config: RouterConfig | None = Field(
        None,
        description="A litellm model_list file (YAML or JSON; a path is loaded when the settings are made) "
        "naming several deployments of the upstream model: calls are balanced over them, failed calls go to "
        "another, failing ones cool down (docs/scale-out.md). Excludes api_base.",
    )
    metrics: bool = Field(
        True, description="Serve Prometheus metrics at /metrics (it needs the proxy key when one is set)."
    )

    @model_validator(mode="before")
    @classmethod
    def _upstream_transport(cls, data: Any) -> Any:
        """`upstream_transport` (a file key, a keyword) sets the upstream's `transport`, as
        `--upstream-transport` does."""
        if isinstance(data, dict) and "upstream_transport" in data:
            data = dict(data)
            transport = data.pop("upstream_transport")
            if transport is not None:
                upstream = data.get("upstream") or WrapConfig()
                if isinstance(upstream, WrapConfig):
                    data["upstream"] = upstream.with_overrides(transport=transport)
                else:
                    data["upstream"] = {**upstream, "transport": transport}
        return data

    @field_validator("api_key")
    @classmethod
    def _long_enough(cls, key: SecretStr | None) -> SecretStr | None:
        return check_proxy_key(key)

    @field_validator("metrics_key")
    @classmethod
    def _metrics_key(cls, key: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        proxy_key = info.data.get("api_key")
        if key is not None and proxy_key is not None and key.get_secret_value() == proxy_key.get_secret_value():
            raise ValueError("the metrics key must differ from the proxy key, which every client holds")
        return check_proxy_key(key, "the metrics key")

    @field_validator("client_api_bases")
    @classmethod
    def _bases(cls, entries: list[str]) -> list[str]:
        parse_client_bases(entries)
        return entries

    @field_validator("router_config")
    @classmethod
    def _serves_the_upstream(cls, config: RouterConfig | None, info: ValidationInfo) -> RouterConfig | None:
        """The file must name deployments of the upstream model that its transport can reach."""
        upstream = info.data.get("upstream")
        if config is not None and isinstance(upstream, WrapConfig):
            if upstream.api_base:
                raise ValueError("give the upstream's api_base or a router_config, not both")
            config.over_http(config.require_group(upstream.model), upstream.transport)
        return config

    @model_validator(mode="after")
    def _consistent(self) -> ServerSettings:
        if self.upstream.k > self.max_k:
            raise ValueError(f"upstream k={self.upstream.k} exceeds max_k={self.max_k}")
        if self.max_upstream_calls < 3 * self.max_k + 2:
            raise ValueError(
                f"max_upstream_calls={self.max_upstream_calls} is below {3 * self.max_k + 2}, what a request of "
                f"max_k={self.max_k} needs before any judge call (its paraphrases, their checks, k + 1 answers)"
            )
        if self.upstream.max_tokens > self.max_max_tokens:
            raise ValueError(
                f"upstream max_tokens={self.upstream.max_tokens} exceeds max_max_tokens={self.max_max_tokens}"
            )
        return self

    # ---- model names -------------------------------------------------------------

    def model_names(self) -> list[str]:
        """Names that route to the upstream: the litellm string, its bare name, and `selfpara/` aliases."""
        model = self.upstream.model
        names = [model]
        bare = model.split("/", 1)[1] if "/" in model else None
        if bare and bare not in names:
            names.append(bare)
        names += [f"selfpara/{n}" for n in list(names)]
        return names

    def serves(self, requested: str) -> bool:
        return bool(requested) and (self.any_model or requested in self.model_names())

    def helper_model(self, name: str) -> str | None:
        """The model to call when a request names `name` as its judge or paraphrase model, or None when
        it may not: one the operator chose, since it is called with the server's key (any model of the
        upstream's provider was allowed before: a client spent the key on `openai/o1-pro`). A name the
        proxy serves the upstream by (`fake`, `selfpara/fake`) is the upstream's litellm string: passed as
        it was, every call of it failed "unknown model" and the answer was a silent `no_paraphrases`."""
        if name in self.model_names():
            return self.upstream.model
        allowed = self.allowed_helper_models
        if allowed is not None:
            return name if "*" in allowed or name in allowed else None
        return name if name in {self.upstream.judge_model, self.upstream.paraphrase_model} - {None} else None

    def client_bases(self) -> list[ClientBase]:
        """`client_api_bases`, parsed."""
        return parse_client_bases(self.client_api_bases)

    def router_group(self) -> str:
        """The router config's model_name that serves the upstream ("" without a router config)."""
        return self.router_config.group_for(self.upstream.model) or "" if self.router_config else ""

    def resolved_transport(self, environ: Mapping[str, str] | None = None) -> str:
        """The upstream's `transport` with auto resolved: "http" or "litellm" (or "embedded"; with a
        router config, "http+litellm" when its group has deployments of each)."""
        if self.router_config is not None:
            over_http = self.router_config.over_http(self.router_group(), self.upstream.transport)
            return "http" if all(over_http) else "litellm" if not any(over_http) else "http+litellm"
        return resolve_transport(self.upstream.transport, self.upstream.model, upstream_base_url(self, environ))

    def secrets(self) -> list[str | None]:
        """Secrets that must never appear in a response or a log line."""
        out: list[str | None] = []
        for key in (self.api_key, self.metrics_key, self.upstream.api_key):
            if key is not None:
                out.append(key.get_secret_value())
        out.append(upstream_api_key(self))
        if self.router_config is not None:
            out += self.router_config.secrets()
        out.append(urlsplit(self.upstream.cache).password)  # a Redis URL's password
        out.append(urlsplit(self.upstream.api_base or "").password)  # and the upstream's
        return out


def load_settings(
    config_file: str | Path | None = None,
    *,
    upstream: Mapping[str, Any] | None = None,
    server: Mapping[str, Any] | None = None,
    api_key_env: str | None = None,
    upstream_key_env: str | None = None,
    environ: Mapping[str, str] | None = None,
    no_auth: bool = False,
    metrics_key_env: str | None = None,
) -> ServerSettings:
    """Build ServerSettings from a file, explicit values (flags) and the environment.

    Args:
        config_file: TOML or JSON file (docs/proxy.md#settings, `selfpara.config.file`); None for none.
        upstream: WrapConfig fields; None values are ignored. They override the file.
        server: ServerSettings fields; None values are ignored. They override the file.
        api_key_env: variable holding the proxy's key (overrides the file's `api_key_env`).
        upstream_key_env: variable holding the upstream's key; default: none, so litellm
            reads the provider's own variable (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...).
        environ: the environment (default `os.environ`).
        no_auth: serve without a proxy key (`--no-auth`); a key variable named anyway is an error.
        metrics_key_env: variable holding the operator's /metrics key (overrides the file's `metrics_key_env`).

    Raises ConfigError on any bad value, a key written into the file, a named
    variable that is not set, or a proxy key shorter than MIN_PROXY_KEY_CHARS.
    """
    env = os.environ if environ is None else environ
    source = read_settings_file(config_file) if config_file else None
    data = dict(source.server) if source else {}
    file_upstream = dict(source.upstream) if source else {}
    file_key_env = data.pop("api_key_env", None)
    file_upstream_key_env = data.pop("upstream_key_env", None)
    file_metrics_key_env = data.pop("metrics_key_env", None)

    up = {**file_upstream, **{k: v for k, v in (upstream or {}).items() if v is not None}}
    srv = {**data, **{k: v for k, v in (server or {}).items() if v is not None}}

    key_env = api_key_env or file_key_env
    if no_auth and key_env:
        raise ConfigError(f"--no-auth, but the settings name a proxy key variable ({key_env}): drop one of them")
    for what, name, into in (
        ("proxy", key_env, srv),
        ("metrics", metrics_key_env or file_metrics_key_env, srv),
        ("upstream", upstream_key_env or file_upstream_key_env, up),
    ):
        if name:
            value = env.get(name)
            if not value:
                raise ConfigError(f"{what} key variable {name} is not set (or empty)")
            into["metrics_key" if what == "metrics" else "api_key"] = SecretStr(value)

    wrap = build_config(**up)
    if source is not None:
        warn_if_uncalibrated(wrap, source)
    try:
        return ServerSettings(upstream=wrap, **srv)
    except ValidationError as exc:
        raise config_error(exc, "server settings", default_loc="server") from None


def upstream_base_url(settings: ServerSettings, environ: Mapping[str, str] | None = None) -> str | None:
    """The upstream's base URL, where one is known: the setting, else `known_base` (the environment's,
    Ollama's default). None for providers whose endpoint we do not probe."""
    return settings.upstream.api_base or known_base(settings.upstream.model, environ)


def upstream_api_key(settings: ServerSettings, environ: Mapping[str, str] | None = None) -> str | None:
    """The upstream's key: the configured one, else the provider variable litellm would read."""
    if settings.upstream.api_key is not None:
        return settings.upstream.api_key.get_secret_value()
    return endpoint_from_env(settings.upstream.model, environ)[1]
