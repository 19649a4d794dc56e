"""`python -m selfpara` runs the CLI, importing what the `selfpara` script would import.

`python -m` puts the working directory first on `sys.path`; the `selfpara` script does
not. Run from a folder that holds its own `evaluation/` (a common name for a user's
evaluation code), `python -m selfpara bench` would import that folder instead of
selfpara's evaluation package. So the working directory is dropped from the path, as
Python's own `-P` option does, unless it is where selfpara itself comes from (a source
checkout run in place), where its `evaluation/` is selfpara's.
"""

import os
import sys
from pathlib import Path


def _drop_working_directory(path: list[str]) -> None:
    """Remove the working directory that `python -m` put first on `path`, unless selfpara
    is imported from it.

    Args:
        path: the module search path (`sys.path`), changed in place.
    """
    if getattr(sys.flags, "safe_path", False) or not path:  # -P / PYTHONSAFEPATH (3.11+): nothing put there
        return
    try:
        first = Path(path[0] or os.curdir).resolve()
        if first == Path.cwd().resolve() and first != Path(__file__).resolve().parent.parent:
            del path[0]
    except OSError:  # a working directory that has gone: nothing to import from it anyway
        del path[0]


_drop_working_directory(sys.path)

from selfpara.cli import main  # noqa: E402  (after the path is settled, so plugins import the right packages)

main()
