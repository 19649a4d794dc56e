"""The router config file's model: several deployments of one model, in litellm's `model_list` format
(YAML or JSON), checked when loaded. The format: docs/scale-out.md#several-servers-of-one-model-the-router-config.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_serializer, model_validator

from selfpara.errors import ConfigError
from selfpara.models.names import OPENAI_COMPATIBLE
from selfpara.util.extras import read_structured

log = logging.getLogger(__name__)

ENV_PREFIX = "os.environ/"
"""litellm's way to name a variable instead of writing a value: `api_key: os.environ/NAME`."""

IGNORED_SECTIONS = ("litellm_settings", "general_settings", "environment_variables")

POOL_PARAMS = frozenset({"weight"})
"""Deployment parameters the pool reads itself; the others (timeout, extra_headers, ...) go with
every call to litellm, so a deployment that sets one is reached through litellm."""

ROUTER_PARAMS = ("max_parallel_requests", "order", "rpm", "tpm")
"""Deployment parameters only litellm's Router read (its rate limits and its order): an error, not
a silent ignore, since that Router was replaced by the pool (docs/scale-out.md)."""

POOL_SETTINGS = ("allowed_fails", "cooldown_time", "num_retries", "routing_strategy")
"""The router_settings the pool reads; any other is an error."""

POOL_STRATEGIES = ("simple-shuffle", "least-busy")

REMOVED = "only litellm's Router read that, and the pool replaced it: docs/scale-out.md"

_SECRET_NAME = re.compile(r"key|secret|token|password|credential", re.IGNORECASE)
_USERINFO = re.compile(r"^([a-z][a-z0-9+.\-]*://)[^/@\s]*@", re.IGNORECASE)


class Deployment(BaseModel):
    """One server of a model group (one `model_list` entry)."""

    # `model_name` is litellm's key; pydantic before 2.10 warns that it starts with `model_`
    model_config = ConfigDict(frozen=True, protected_namespaces=())

    model_name: str = Field(description="The group this deployment serves.")
    model: str = Field(description="litellm model string the deployment is reached with.")
    api_base: str | None = None
    api_key: SecretStr | None = None
    params: dict[str, Any] = Field(
        default_factory=dict, description="Its other litellm_params (weight, timeout, extra_headers, ...), as written."
    )
    index: int = Field(0, description="Position in the file's model_list (0-based).")

    @field_serializer("api_base")
    def _no_userinfo(self, value: str | None) -> str | None:
        return public_url(value) if value else value

    @field_serializer("params")
    def _masked(self, params: dict[str, Any]) -> dict[str, Any]:
        return {k: "***" if _SECRET_NAME.search(k) else v for k, v in params.items()}

    def secrets(self) -> list[str]:
        """Its key and any other secret-named parameter (aws_secret_access_key, vertex_credentials, ...)."""
        out = [self.api_key.get_secret_value()] if self.api_key is not None else []
        return out + [str(v) for k, v in self.params.items() if _SECRET_NAME.search(k) and v]

    @property
    def label(self) -> str:
        """A name for logs and metrics: its base URL without credentials, else its model string."""
        return public_url(self.api_base) if self.api_base else self.model

    @property
    def weight(self) -> float:
        value = self.params.get("weight", 1)
        return float(value) if isinstance(value, (int, float)) and value > 0 else 1.0

    def http_misfit(self) -> str | None:
        """Why the lean http transport cannot reach this deployment as written (then litellm
        does), or None when it can."""
        where = f"deployment {self.index + 1} ({self.model})"
        if not self.model.startswith(OPENAI_COMPATIBLE):
            return f"{where} is not an openai/ or hosted_vllm/ model"
        if not self.api_base:
            return f"{where} has no api_base"
        passed_on = sorted(set(self.params) - POOL_PARAMS)
        if passed_on:
            return f"{where} sets {passed_on}, which only litellm passes on"
        return None


def public_url(url: str) -> str:
    """`url` without a `user:password@` part."""
    return _USERINFO.sub(r"\1", url)


class RouterConfig(BaseModel):
    """A parsed router config file. Build it with `load_router_config` (or pass the path
    where a settings field takes one: it is loaded on validation)."""

    model_config = ConfigDict(frozen=True)

    path: str = Field(description="The file it was read from.")
    deployments: list[Deployment]
    router_settings: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _from_path(cls, data: Any) -> Any:
        """A path (str or Path) is loaded from its file."""
        if isinstance(data, (str, Path)):
            loaded = load_router_config(data)
            return {name: getattr(loaded, name) for name in cls.model_fields}
        return data

    def groups(self) -> dict[str, list[Deployment]]:
        """Deployments by model_name, in file order."""
        out: dict[str, list[Deployment]] = {}
        for d in self.deployments:
            out.setdefault(d.model_name, []).append(d)
        return out

    def group_for(self, model: str) -> str | None:
        """The model_name that serves `model`: `model` itself, else its name without the
        provider prefix ('qwen' for 'openai/qwen'); None when the file has neither."""
        groups = self.groups()
        if model in groups:
            return model
        bare = model.split("/", 1)[1] if "/" in model else None
        return bare if bare in groups else None

    def require_group(self, model: str) -> str:
        """`group_for(model)`, or a ConfigError naming the groups the file has."""
        group = self.group_for(model)
        if group is None:
            bare = model.split("/", 1)[1] if "/" in model else model
            raise ConfigError(
                f"router config {self.path} names no deployment of {model!r} (model_name {model!r} or {bare!r}); "
                f"it has {sorted(self.groups())}"
            )
        return group

    def over_http(self, group: str, transport: str) -> list[bool]:
        """For each deployment of `group`, whether the lean http transport reaches it (else litellm).

        Args:
            transport: the upstream's setting. auto: http where it can reach the deployment as
                written (`Deployment.http_misfit`); http: every one (ConfigError naming one it
                cannot reach); litellm: none.
        """
        out = []
        for d in self.groups()[group]:
            misfit = None if transport == "litellm" else d.http_misfit()
            if transport == "http" and misfit is not None:
                raise ConfigError(f"transport http cannot serve {group!r} of router config {self.path}: {misfit}")
            out.append(transport != "litellm" and misfit is None)
        return out

    def secrets(self) -> list[str]:
        """Every key in the file (for redaction)."""
        return [s for d in self.deployments for s in d.secrets()]


def load_router_config(path: str | Path, environ: Mapping[str, str] | None = None) -> RouterConfig:
    """Read and check a router config file.

    Args:
        path: a YAML or JSON file in litellm's format (docs/scale-out.md), or a bare `model_list`.
        environ: where `os.environ/NAME` values are read (default `os.environ`).

    Raises ConfigError when the file cannot be read or parsed, has no deployment, an entry
    lacks `model_name` / `litellm_params.model` or names an unset variable, or the file sets
    what only litellm's Router read (other router_settings or strategies, rpm, tpm, ...).
    """
    p = Path(path)
    where = f"router config {p}"
    data = read_structured(p, where, "yaml")
    if isinstance(data, list):
        data = {"model_list": data}
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a `model_list` (a list, or a mapping holding one)")
    ignored = [k for k in IGNORED_SECTIONS if k in data]
    if ignored:
        log.info("%s: ignoring %s (selfpara reads model_list and router_settings)", where, ", ".join(ignored))
    unknown = sorted(set(data) - {"model_list", "router_settings", *IGNORED_SECTIONS})
    if unknown:
        raise ConfigError(f"{where}: unknown section(s) {unknown}; expected model_list and router_settings")
    entries = data.get("model_list")
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"{where}: `model_list` must be a non-empty list of deployments")
    settings = data.get("router_settings") or {}
    if not isinstance(settings, dict):
        raise ConfigError(f"{where}: `router_settings` must be a mapping")
    _check_settings(settings, where)
    env = os.environ if environ is None else environ
    deployments = [_deployment(i, entry, where, env) for i, entry in enumerate(entries)]
    return RouterConfig(path=str(p), deployments=deployments, router_settings=settings)


def _deployment(i: int, entry: Any, where: str, env: Mapping[str, str]) -> Deployment:
    at = f"{where}: model_list[{i}]"
    if not isinstance(entry, dict):
        raise ConfigError(f"{at} must be a mapping with model_name and litellm_params")
    name = entry.get("model_name")
    params = entry.get("litellm_params")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{at}: `model_name` must be a non-empty string")
    if not isinstance(params, dict) or not isinstance(params.get("model"), str) or not params["model"].strip():
        raise ConfigError(f"{at}: `litellm_params.model` must be a litellm model string, e.g. openai/NAME")
    params = {k: _resolve(v, f"{at}.litellm_params.{k}", env) for k, v in params.items()}
    api_base = params.pop("api_base", None)
    api_key = params.pop("api_key", None)
    if api_base is not None and (not isinstance(api_base, str) or not re.match(r"^https?://", api_base)):
        raise ConfigError(f"{at}: `api_base` must be an http(s) URL")
    if api_key is not None and not isinstance(api_key, str):
        raise ConfigError(f"{at}: `api_key` must be a string")
    unsupported = [k for k in ROUTER_PARAMS if k in params]
    if unsupported:
        raise ConfigError(f"{at}: litellm_params {unsupported} are not supported ({REMOVED}); `weight` is")
    return Deployment(
        model_name=name,
        model=params.pop("model"),
        api_base=api_base,
        api_key=SecretStr(api_key) if api_key else None,
        params=params,
        index=i,
    )


def _resolve(value: Any, where: str, env: Mapping[str, str]) -> Any:
    """`os.environ/NAME` as the variable's value (ConfigError when it is unset)."""
    if isinstance(value, str) and value.startswith(ENV_PREFIX):
        name = value[len(ENV_PREFIX) :]
        resolved = env.get(name)
        if not resolved:
            raise ConfigError(f"{where}: variable {name} is not set (or empty)")
        return resolved
    return value


def _check_settings(settings: dict[str, Any], where: str) -> None:
    """router_settings must be ones the pool reads, with usable values."""
    unsupported = sorted(set(settings) - set(POOL_SETTINGS))
    if unsupported:
        raise ConfigError(
            f"{where}: router_settings {unsupported} are not supported ({REMOVED}); "
            f"the supported ones are {', '.join(POOL_SETTINGS)}"
        )
    for key, kind in (("allowed_fails", int), ("num_retries", int), ("cooldown_time", (int, float))):
        value = settings.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, kind) or value < 0):
            raise ConfigError(f"{where}: router_settings.{key} must be a number >= 0")
    strategy = settings.get("routing_strategy")
    if strategy is not None and strategy not in POOL_STRATEGIES:
        raise ConfigError(
            f"{where}: routing_strategy {strategy!r} is not supported ({REMOVED}); use {' or '.join(POOL_STRATEGIES)}"
        )
