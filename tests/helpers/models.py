"""Which embedded models this install can load, for tests that need a real one."""

from __future__ import annotations

from selfpara.errors import ConfigError
from selfpara.models.engines import embedded
from selfpara.models.engines.parts import locate_parts


def qwen_installed() -> bool:
    """Whether the default Qwen model's parts are installed (the `qwen` extra)."""
    try:
        locate_parts(embedded.QWEN)
        return True
    except ConfigError:
        return False
