"""Small helpers every part shares: reading text (`text`, `quantities`, `mathanswer`, `messages`), the
one registry shape (`registry`), extras (`extras`), environment variables and the cache folder
(`envvars`), and secret redaction (`redaction`). Nothing here imports the rest of selfpara."""
