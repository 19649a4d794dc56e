"""Deprecated old name of `selfpara.engines.embedded`, kept for one release.

The models run in process had three names ("embedded", "local", "packaged"); they are the
embedded models now (`local/` stays the prefix of their model strings). Every name this
module had still resolves, to its new name in `selfpara.engines.embedded`, with a
DeprecationWarning blamed on the code that named it.
"""

from __future__ import annotations

from selfpara.deprecated import moved_names
from selfpara.engines import embedded as _embedded

RENAMED = {"LocalModel": "EmbeddedModel", "PACKAGED": "EMBEDDED_MODELS", "packaged_names": "embedded_names"}
"""Old name -> new name, for the names that changed; the others kept theirs."""

__getattr__ = moved_names(__name__, _embedded, RENAMED)
