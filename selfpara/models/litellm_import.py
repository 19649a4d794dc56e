"""The one place selfpara imports litellm, so that the import is always made offline."""

from __future__ import annotations

import logging
import os
from types import ModuleType

from selfpara.util.envvars import LITELLM_LOCAL_COST_MAP_ENV, LITELLM_LOG_ENV


def import_litellm() -> ModuleType:
    """The litellm module, imported with its price list read from the package, not the network.

    litellm fetches a model price list over the network when first imported unless
    LITELLM_LOCAL_MODEL_COST_MAP is set; selfpara runs offline, so it is set here (unless
    the user set it), at the moment litellm is needed rather than on `import selfpara`.

    litellm also prints to the console (a red "Provider List" line with ANSI escapes for each
    call to a provider it does not know, a "Give Feedback / Get Help" banner and a
    `turn_on_debug()` tip after each error); that is silenced unless the user asks for
    litellm's own debug output (`litellm_debug_wanted`), read at each import_litellm().
    selfpara's own --verbose logs selfpara's stages, not litellm's banners.
    """
    os.environ.setdefault(LITELLM_LOCAL_COST_MAP_ENV, "True")
    import litellm

    litellm.suppress_debug_info = not litellm_debug_wanted()
    return litellm


def litellm_debug_wanted() -> bool:
    """Whether the user asked for litellm's own debug output: LITELLM_LOG=DEBUG (litellm's switch),
    or litellm's logger set to DEBUG (what `litellm._turn_on_debug()` does)."""
    return (
        os.environ.get(LITELLM_LOG_ENV, "").strip().upper() == "DEBUG"
        or logging.getLogger("LiteLLM").level == logging.DEBUG
    )
