"""Every environment variable selfpara reads, and the cache folder they place.

The names are declared here and nowhere else: a command's option names its variable
(typer's `envvar=MODEL_ENV`), code that reads one imports its constant. `ENV_VARS` lists
them all with who reads them and what for; docs/cli.md's table of variables is made from
it (`python scripts/doc_tables.py`; tests/test_settings_source.py checks they agree and
that no module spells a variable's name itself).

A leaf module: it imports nothing of selfpara, so any module may import it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class EnvVar:
    """One environment variable the project reads.

    Attributes:
        name: the variable's name.
        read_by: who reads it: commands (`ask`, `serve`, `bench`, `doctor`), `library` (any
            use of the package), `proxy` (the server, also when started without the CLI).
        what: what it sets, one line for the docs' table.
    """

    name: str
    read_by: tuple[str, ...]
    what: str


# ---- the CLI's settings (a flag's variable: the flag wins) ------------------------------
MODEL_ENV = "SELFPARA_MODEL"
API_BASE_ENV = "SELFPARA_API_BASE"
K_ENV = "SELFPARA_K"
EQUIVALENCE_ENV = "SELFPARA_EQUIVALENCE"
JUDGE_MODEL_ENV = "SELFPARA_JUDGE_MODEL"
TRANSPORT_ENV = "SELFPARA_TRANSPORT"
ROUTER_CONFIG_ENV = "SELFPARA_ROUTER_CONFIG"
CALL_CACHE_ENV = "SELFPARA_CALL_CACHE"
"""The call cache (WrapConfig.cache): memory, off, redis://... or sqlite:///...; replicas name one Redis here."""
CONFIG_ENV = "SELFPARA_CONFIG"
HOST_ENV = "SELFPARA_HOST"
PORT_ENV = "SELFPARA_PORT"
LOG_FORMAT_ENV = "SELFPARA_LOG_FORMAT"

# ---- keys (only ever read from the environment) -----------------------------------------
PROXY_KEY_ENV = "SELFPARA_PROXY_KEY"
"""Holds the proxy's own key; `serve` uses it when no other variable is named for the key."""

# ---- internal and folders ---------------------------------------------------------------
SERVE_SPEC_ENV = "SELFPARA_SERVE_SPEC"
"""The settings `serve --workers N` hands its worker processes (JSON; never a key)."""
CACHE_DIR_ENV = "SELFPARA_CACHE_DIR"
"""The cache folder (not the call cache of CALL_CACHE_ENV): the assembled model file, engine checks, bench calls."""
XDG_CACHE_HOME_ENV = "XDG_CACHE_HOME"
DATA_DIR_ENV = "SELFPARA_DATA_DIR"
"""The folder holding the public benchmark files `bench --dataset simpleqa` (etc.) looks in."""

# ---- other tools' variables, read as they read them -------------------------------------
OPENAI_API_BASE_ENV = "OPENAI_API_BASE"
OPENAI_BASE_URL_ENV = "OPENAI_BASE_URL"
OPENAI_API_KEY_ENV = "OPENAI_API_KEY"
HOSTED_VLLM_API_BASE_ENV = "HOSTED_VLLM_API_BASE"
HOSTED_VLLM_API_KEY_ENV = "HOSTED_VLLM_API_KEY"
OLLAMA_API_BASE_ENV = "OLLAMA_API_BASE"
LITELLM_LOCAL_COST_MAP_ENV = "LITELLM_LOCAL_MODEL_COST_MAP"
"""Set to True (unless the user set it) before litellm is imported, so that it reads its price list offline."""
LITELLM_LOG_ENV = "LITELLM_LOG"
"""litellm's own log level; DEBUG asks for its debug output, which selfpara otherwise silences."""

ENV_VARS: tuple[EnvVar, ...] = (
    EnvVar(MODEL_ENV, ("ask", "serve", "bench"), "`--model`: the model (the proxy's upstream)"),
    EnvVar(API_BASE_ENV, ("ask", "serve", "bench"), "`--api-base`: the model's base URL"),
    EnvVar(K_ENV, ("ask", "serve"), "`--k`: paraphrases per question"),
    EnvVar(EQUIVALENCE_ENV, ("ask", "serve"), "`--equivalence`: answer-equivalence functions"),
    EnvVar(JUDGE_MODEL_ENV, ("ask", "serve"), "`--judge-model`: model of the LLM judges"),
    EnvVar(TRANSPORT_ENV, ("ask", "serve"), "`--transport` / `--upstream-transport`"),
    EnvVar(
        CALL_CACHE_ENV,
        ("serve",),
        "`--cache`: the call cache, `memory` (default), `off`, `redis://HOST:PORT/DB` or `sqlite:///PATH`",
    ),
    EnvVar(
        ROUTER_CONFIG_ENV,
        ("serve",),
        "`--router-config`: several deployments of the upstream ([scale-out.md](scale-out.md))",
    ),
    EnvVar(CONFIG_ENV, ("serve",), "`--config`: the settings file"),
    EnvVar(HOST_ENV, ("serve",), "`--host`: the interface the proxy listens on"),
    EnvVar(PORT_ENV, ("serve",), "`--port`: the port the proxy listens on"),
    EnvVar(LOG_FORMAT_ENV, ("serve",), "`--log-format`: `text` or `json`"),
    EnvVar(PROXY_KEY_ENV, ("serve",), "the proxy's own key: when set, clients must send it as a bearer token"),
    EnvVar(SERVE_SPEC_ENV, ("proxy",), "internal: the settings `serve --workers N` hands its workers"),
    EnvVar(
        CACHE_DIR_ENV,
        ("library", "bench", "doctor"),
        "the cache folder (default `$XDG_CACHE_HOME/selfpara`, else `~/.cache/selfpara`): the assembled "
        "default model, engine checks, `bench`'s call cache",
    ),
    EnvVar(
        XDG_CACHE_HOME_ENV,
        ("library", "bench", "doctor"),
        "the cache folder's parent, when SELFPARA_CACHE_DIR is unset",
    ),
    EnvVar(DATA_DIR_ENV, ("bench",), "the folder holding the public benchmark files (`--dataset simpleqa`, ...)"),
    EnvVar(
        OPENAI_API_BASE_ENV,
        ("library", "serve"),
        "base URL of `openai/` models when none is given (as litellm reads it)",
    ),
    EnvVar(OPENAI_BASE_URL_ENV, ("library", "serve"), "the same, the OpenAI client's name"),
    EnvVar(OPENAI_API_KEY_ENV, ("library", "serve"), "key of `openai/` models when none is given"),
    EnvVar(HOSTED_VLLM_API_BASE_ENV, ("library", "serve"), "base URL of `hosted_vllm/` models"),
    EnvVar(HOSTED_VLLM_API_KEY_ENV, ("library", "serve"), "key of `hosted_vllm/` models"),
    EnvVar(
        OLLAMA_API_BASE_ENV, ("serve",), "the Ollama server the proxy's health check probes (default localhost:11434)"
    ),
    EnvVar(LITELLM_LOCAL_COST_MAP_ENV, ("library",), "set to `True` unless set: litellm reads its price list offline"),
    EnvVar(
        LITELLM_LOG_ENV,
        ("library",),
        "`DEBUG`: litellm's own debug output, its banners and tips included (silenced otherwise, `--verbose` too)",
    ),
)
"""Every variable, in the order docs/cli.md lists them. Other providers' variables
(ANTHROPIC_API_KEY, ...) are litellm's to read, not selfpara's."""


def cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The cache folder: $SELFPARA_CACHE_DIR, else $XDG_CACHE_HOME/selfpara, else ~/.cache/selfpara.

    Args:
        environ: the environment to read (default `os.environ`).
    """
    env = os.environ if environ is None else environ
    explicit = env.get(CACHE_DIR_ENV)
    if explicit:
        return Path(explicit).expanduser()
    xdg = env.get(XDG_CACHE_HOME_ENV)
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "selfpara"


def env_table() -> str:
    """The markdown table of ENV_VARS (docs/cli.md)."""
    lines = ["| variable | read by | sets |", "|---|---|---|"]
    for var in ENV_VARS:
        lines.append(f"| `{var.name}` | {', '.join(f'`{r}`' for r in var.read_by)} | {var.what} |")
    return "\n".join(lines)
