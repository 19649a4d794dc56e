"""The one place selfpara imports litellm, so that the import is always made offline."""

from __future__ import annotations

import logging
import os
from types import ModuleType

from selfpara.util.envvars import LITELLM_LOCAL_COST_MAP_ENV


def import_litellm() -> ModuleType:
    """The litellm module, imported with its price list read from the package, not the network.

    litellm fetches a model price list over the network when first imported unless
    LITELLM_LOCAL_MODEL_COST_MAP is set; selfpara runs offline, so it is set here (unless
    the user set it), at the moment litellm is needed rather than on `import selfpara`.

    litellm also prints to the console (a red "Provider List" line with ANSI escapes for each
    call to a provider it does not know, tips after an error); that is silenced unless
    selfpara's logger is enabled for INFO (the CLI's --verbose, or an application that logs
    selfpara at INFO), read at each call.
    """
    os.environ.setdefault(LITELLM_LOCAL_COST_MAP_ENV, "True")
    import litellm

    litellm.suppress_debug_info = not logging.getLogger("selfpara").isEnabledFor(logging.INFO)
    return litellm
