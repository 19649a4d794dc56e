"""Small helpers every part shares: chat messages (`messages`), the one registry shape (`registry`),
extras and the TOML reader (`extras`), environment variables and the cache folder (`envvars`), and
secret redaction (`redaction`). Nothing here imports the rest of selfpara; reading the method's
English is the lexicon's (`selfpara.pipeline.lexicon`)."""
