"""The one place selfpara imports litellm, so that the import is always made offline."""

from __future__ import annotations

import os
from types import ModuleType


def import_litellm() -> ModuleType:
    """The litellm module, imported with its price list read from the package, not the network.

    litellm fetches a model price list over the network when first imported unless
    LITELLM_LOCAL_MODEL_COST_MAP is set; selfpara runs offline, so it is set here (unless
    the user set it), at the moment litellm is needed rather than on `import selfpara`.
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    return litellm
