"""Which embedded models this install can load, for tests that need a real one."""

from __future__ import annotations

from selfpara.engines import embedded
from selfpara.engines.parts import locate_parts
from selfpara.errors import ConfigError


def qwen_installed() -> bool:
    """Whether the default Qwen model's parts are installed (the `qwen` extra)."""
    try:
        locate_parts(embedded.QWEN)
        return True
    except ConfigError:
        return False
