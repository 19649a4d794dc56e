"""Small helpers every part shares: chat messages (`messages`), the one registry shape (`registry`),
extras and the TOML reader (`extras`), environment variables and the cache folder (`envvars`), and
secret redaction (`redaction`). Nothing here imports the rest of selfpara; reading the method's
English is the lexicon's (`selfpara.pipeline.lexicon`). What the evaluation package uses is named here.
"""

from selfpara.util.envvars import API_BASE_ENV, DATA_DIR_ENV, MODEL_ENV, cache_dir
from selfpara.util.extras import install_note
from selfpara.util.registry import Registry

__all__ = ["API_BASE_ENV", "DATA_DIR_ENV", "MODEL_ENV", "Registry", "cache_dir", "install_note"]
