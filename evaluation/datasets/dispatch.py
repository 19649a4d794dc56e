"""`load_dataset(spec)`: a dataset by name, `NAME:PATH`, `hf:NAME` or path, to the source that reads it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from evaluation.datasets.formats import FORMATS, detect_format
from evaluation.datasets.generic import load_table
from evaluation.datasets.hf import load_hf
from evaluation.datasets.items import load_items, load_sample
from evaluation.datasets.readers import read_rows
from evaluation.records import Item
from selfpara.errors import ConfigError
from selfpara.util import DATA_DIR_ENV

DATASETS = ("sample", *FORMATS)
"""Dataset names `load_dataset` knows (besides paths and `hf:NAME`) when this module is
imported; `dataset_names()` also lists formats registered later."""

"""Environment variable naming a folder that holds the public benchmark files."""


def dataset_names() -> list[str]:
    """Every dataset name `load_dataset` takes: the sample set and each registered format."""
    return ["sample", *FORMATS]


def load_dataset(
    spec: str,
    *,
    limit: int | None = None,
    data_dir: str | Path | None = None,
    **options: Any,
) -> list[Item]:
    """Load items by name or path.

    `spec` is one of:

    - `sample`: the built-in sample set;
    - `simpleqa`, `truthfulqa`, `gsm8k`, `math500` (any registered format, see
      `evaluation.datasets.registry`): the public file, found under its usual name in
      `data_dir`, `$SELFPARA_DATA_DIR` or `./data`; `simpleqa:PATH`
      (etc.) names the file;
    - `hf:NAME` (or `hf:NAME:CONFIG`, `hf:NAME@SPLIT`): a Hugging Face dataset;
    - a path: a saved variant file (JSONL of items), a file in one of the public layouts
      (detected by its columns), or a generic table read with `load_table(**options)`;
      without options a generic table uses `question` and `answer` (or `gold`), and `id`,
      `paraphrases` (a JSON list or one text), `context`, `kind`, `category`, `incorrect`
      where present.

    Raises ConfigError for an unknown name, DataError for a bad file.
    """
    spec = spec.strip()
    if not spec:
        raise ConfigError(f"no dataset named: use {', '.join(dataset_names())}, hf:NAME or a path")
    name, _, rest = spec.partition(":")
    low = name.lower().replace("-", "").replace("_", "")
    if low == "sample" and not rest:
        return load_sample(limit=limit, **options)
    if low == "hf":
        if not rest:
            raise ConfigError("hf: needs a dataset name, e.g. hf:openai/gsm8k:main@test")
        rest, _, split = rest.partition("@")
        hf_name, _, config = rest.partition(":")
        return load_hf(hf_name, config=config or None, split=split or "test", limit=limit, **options)
    if low in FORMATS and (rest or not Path(spec).exists()):
        path = Path(rest).expanduser() if rest else _find_known(low, data_dir)
        return FORMATS[low].load(path, limit=limit)
    path = Path(spec).expanduser()
    if not path.exists():
        raise ConfigError(
            f"unknown dataset {spec!r}: not a file, and not one of {', '.join(dataset_names())} or hf:NAME"
        )
    return load_path(path, limit=limit, **options)


def load_path(path: str | Path, *, limit: int | None = None, **options: Any) -> list[Item]:
    """A file whose layout is detected: saved items, a public format, or a generic table (`options`)."""
    p = Path(path).expanduser()
    if options:
        return load_table(p, limit=limit, **options)
    rows = read_rows(p)
    columns = set().union(*(r.keys() for r in rows[:20]))
    fmt = detect_format(columns, rows)
    if fmt == "items":
        return load_items(p, limit=limit)
    if fmt is not None:
        return FORMATS[fmt].load(p, limit=limit)
    # a generic table: use the conventional optional columns where present
    auto: dict[str, Any] = {}
    for option, column in (
        ("id_col", "id"),
        ("context_col", "context"),
        ("kind_col", "kind"),
        ("category_col", "category"),
        ("incorrect_col", "incorrect"),
    ):
        if column in columns:
            auto[option] = column
    if "paraphrases" in columns:
        auto["paraphrase_cols"] = ["paraphrases"]
    if "answer" not in columns and "gold" in columns:
        auto["gold_col"] = "gold"
    return load_table(p, limit=limit, **auto)


def _find_known(name: str, data_dir: str | Path | None) -> Path:
    """The file of format `name` under one of its distributed names in the data folders."""
    fmt = FORMATS[name]
    dirs = [Path(d).expanduser() for d in (data_dir, os.environ.get(DATA_DIR_ENV), "data") if d]
    for directory in dirs:
        for filename in fmt.files:
            if (directory / filename).is_file():
                return directory / filename
    where = ", ".join(str(d) for d in dirs) + f" (set ${DATA_DIR_ENV} to point at the folder)"
    online = f", or hf:{fmt.hf} with network" if fmt.hf else ""
    raise ConfigError(
        f"dataset {name!r} needs its file: looked for {', '.join(fmt.files) or 'no known file name'} in {where}. "
        f"Pass {name}:PATH{online}."
    )
