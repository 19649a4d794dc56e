"""Deprecated old name of `selfpara.request`, kept for one release.

"Run" named two things: one request's state (this module's `Run`) and one benchmark run
(`evaluation.runner`, a run directory). A run is the benchmark's now; one request's state is
`selfpara.request.RequestState`. Every name this module had still resolves, to its new name
in `selfpara.request`, with a DeprecationWarning blamed on the code that named it.
"""

from __future__ import annotations

from selfpara import request as _request
from selfpara.deprecated import moved_names

RENAMED = {"Run": "RequestState", "RunOwner": "RequestOwner"}
"""Old name -> new name, for the names that changed; the others kept theirs."""

__getattr__ = moved_names(__name__, _request, RENAMED)
