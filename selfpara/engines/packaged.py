"""Deprecated old name of `selfpara.engines.embedded`, kept for one release.

The models run in process had three names ("embedded", "local", "packaged"); they are the
embedded models now (`local/` stays the prefix of their model strings). Every name this
module had still resolves, to its new name in `selfpara.engines.embedded`, with a
DeprecationWarning blamed on the code that named it.
"""

from __future__ import annotations

import warnings
from typing import Any

from selfpara.engines import embedded as _embedded

RENAMED = {"LocalModel": "EmbeddedModel", "PACKAGED": "EMBEDDED_MODELS", "packaged_names": "embedded_names"}
"""Old name -> new name, for the names that changed; the others kept theirs."""


def __getattr__(name: str) -> Any:
    """`name` looked up in `selfpara.engines.embedded` under its new name, with a DeprecationWarning."""
    new = RENAMED.get(name, name)
    if name.startswith("__") or not hasattr(_embedded, new):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"selfpara.engines.packaged.{name} is deprecated; use selfpara.engines.embedded.{new}",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(_embedded, new)
