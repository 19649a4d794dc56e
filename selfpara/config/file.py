"""Settings files: the one TOML or JSON layout (`[upstream]`, the proxy's own keys, `[calibration]`)
that `selfpara serve --config`, `selfpara ask --settings` and the library (`config_from_file`) read.
See docs/cli.md#settings-flags-environment-settings-file.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from selfpara.config.settings import WrapConfig, build_config
from selfpara.errors import ConfigError
from selfpara.util.extras import read_structured

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SettingsFile:
    """What one settings file holds.

    Attributes:
        path: the file.
        upstream: its `[upstream]` table (WrapConfig fields).
        server: its top-level keys and `[server]` table (the proxy's own settings).
        calibration: its `[calibration]` record, or None.
    """

    path: Path
    upstream: dict[str, Any] = field(default_factory=dict)
    server: dict[str, Any] = field(default_factory=dict)
    calibration: dict[str, Any] | None = None


def read_settings_file(path: str | Path) -> SettingsFile:
    """Read a settings file (JSON when it ends in .json, else TOML).

    Raises ConfigError when it cannot be read or parsed, is not a table at the top, has an
    `upstream` or `calibration` that is not a table, or holds a key (`api_key`).
    """
    p = Path(path).expanduser()
    data = read_structured(p, f"config file {p}", "toml")
    if not isinstance(data, dict):
        raise ConfigError(f"config file {p} must hold a table/object at the top")
    server = dict(data.get("server", {}), **{k: v for k, v in data.items() if k != "server"})
    upstream = server.pop("upstream", {}) or {}
    calibration = server.pop("calibration", None)
    if not isinstance(upstream, dict):
        raise ConfigError(f"config file {p}: `upstream` must be a table/object")
    if calibration is not None and not isinstance(calibration, dict):
        raise ConfigError(f"config file {p}: `calibration` must be a table/object")
    if "api_key" in server or "api_key" in upstream or "metrics_key" in server:
        raise ConfigError(
            f"config file {p}: keys do not belong in files; name an environment variable with "
            "`api_key_env` / `upstream_key_env` instead"
        )
    return SettingsFile(path=p, upstream=dict(upstream), server=server, calibration=calibration)


def calibration_mismatch(config: WrapConfig, calibration: dict[str, Any] | None) -> list[str]:
    """The settings in which `config` differs from those a calibration was measured under, as
    "name: calibrated A, now B" (empty without a calibration or a difference).

    A calibrated threshold promises its error rate only for answers made as the calibrated run made
    them; another k, model or vote rule changes what a confidence means.
    """
    if not calibration:
        return []
    measured = calibration.get("settings") or {}
    now = config.model_dump(mode="json")
    return [
        f"{name}: calibrated {value!r}, now {now[name]!r}"
        for name, value in measured.items()
        if name in now and now[name] != value
    ]


def warn_if_uncalibrated(config: WrapConfig, source: SettingsFile) -> list[str]:
    """Log (WARNING) and return the settings in which `config` left the calibration `source` records."""
    changed = calibration_mismatch(config, source.calibration)
    if changed:
        log.warning(
            "%s: the confidence threshold was calibrated under other settings (%s); its error-rate promise "
            "does not carry over",
            source.path,
            "; ".join(changed),
        )
    return changed


def config_from_file(path: str | Path, **overrides: Any) -> WrapConfig:
    """The WrapConfig of a settings file's `[upstream]` table, with `overrides` (None values ignored) on top.

    A calibration file (`selfpara calibrate --out`) is such a file: its threshold then drives the
    low-vote-share policy. A setting that leaves the calibrated ones is logged as a warning.
    """
    source = read_settings_file(path)
    config = build_config(**{**source.upstream, **{k: v for k, v in overrides.items() if v is not None}})
    warn_if_uncalibrated(config, source)
    return config
