"""The settings: `WrapConfig`, every setting of the wrapper in one typed object (`settings`), and the
settings file that `serve --config`, `ask --settings` and `config_from_file` read (`file`)."""

from selfpara.config.file import SettingsFile, config_from_file, read_settings_file, warn_if_uncalibrated
from selfpara.config.settings import (
    MAX_K,
    WrapConfig,
    build_config,
    is_small_or_local,
)
from selfpara.models.names import EMBEDDED_MODEL

__all__ = [
    "EMBEDDED_MODEL",
    "MAX_K",
    "SettingsFile",
    "WrapConfig",
    "build_config",
    "config_from_file",
    "is_small_or_local",
    "read_settings_file",
    "warn_if_uncalibrated",
]
