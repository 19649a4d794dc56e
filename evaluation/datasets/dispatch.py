"""`load_dataset(spec)`: a dataset by name, `NAME:PATH`, `hf:NAME` or path, to the source that reads it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from evaluation.datasets.formats import LOADERS, detect_format, looks_gsm8k
from evaluation.datasets.gsm8k import load_gsm8k
from evaluation.datasets.hf import load_hf
from evaluation.datasets.items import load_items, load_sample
from evaluation.datasets.readers import read_rows
from evaluation.datasets.table import load_table
from evaluation.schema import Item
from selfpara.errors import ConfigError

DATASETS = ("sample", "simpleqa", "truthfulqa", "gsm8k", "math500")
"""Dataset names `load_dataset` knows (besides paths and `hf:NAME`)."""

DATA_DIR_ENV = "SELFPARA_DATA_DIR"
"""Environment variable naming a folder that holds the public benchmark files."""

# File names the public benchmarks are commonly distributed under, looked up in the data dir.
_KNOWN_FILES: dict[str, tuple[str, ...]] = {
    "simpleqa": ("simple_qa_test_set.csv", "simpleqa.csv", "simpleqa.jsonl", "simple_qa.jsonl"),
    "truthfulqa": ("TruthfulQA.csv", "truthfulqa.csv", "truthful_qa.csv", "truthfulqa.jsonl"),
    "gsm8k": ("openai_gsm8k_main_test.csv", "gsm8k_test.csv", "gsm8k.csv", "gsm8k.jsonl"),
    "math500": ("HuggingFaceH4_MATH_500_test.csv", "math500.csv", "MATH-500.csv", "math500.jsonl"),
}
_HF_NAMES = {
    "simpleqa": "basicv8vc/SimpleQA",
    "truthfulqa": "truthfulqa/truthful_qa",
    "gsm8k": "openai/gsm8k",
    "math500": "HuggingFaceH4/MATH-500",
}


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
    - `simpleqa`, `truthfulqa`, `gsm8k`, `math500`: the public file, found under its usual
      name in `data_dir`, `$SELFPARA_DATA_DIR`, `./data` or `../shared/data`;
      `simpleqa:PATH` (etc.) names the file;
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
        raise ConfigError("no dataset named: use sample, simpleqa, truthfulqa, gsm8k, math500, hf:NAME or a path")
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
    if low in LOADERS and (rest or not Path(spec).exists()):
        path = Path(rest).expanduser() if rest else _find_known(low, data_dir)
        return LOADERS[low](path, limit=limit)
    path = Path(spec).expanduser()
    if not path.exists():
        raise ConfigError(f"unknown dataset {spec!r}: not a file, and not one of {', '.join(DATASETS)} or hf:NAME")
    return load_path(path, limit=limit, **options)


def load_path(path: str | Path, *, limit: int | None = None, **options: Any) -> list[Item]:
    """A file whose layout is detected: saved items, a public format, or a generic table (`options`)."""
    p = Path(path).expanduser()
    if options:
        return load_table(p, limit=limit, **options)
    rows = read_rows(p)
    columns = set().union(*(r.keys() for r in rows[:20]))
    fmt = detect_format(columns)
    if fmt == "items":
        return load_items(p, limit=limit)
    if fmt == "simpleqa" or fmt == "truthfulqa" or fmt == "math500":
        return LOADERS[fmt](p, limit=limit)
    if looks_gsm8k(rows):
        return load_gsm8k(p, limit=limit)
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
    dirs = [Path(d).expanduser() for d in (data_dir, os.environ.get(DATA_DIR_ENV), "data", "../shared/data") if d]
    for directory in dirs:
        for filename in _KNOWN_FILES[name]:
            if (directory / filename).is_file():
                return directory / filename
    where = ", ".join(str(d) for d in dirs) + f" (set ${DATA_DIR_ENV} to point at the folder)"
    raise ConfigError(
        f"dataset {name!r} needs its file: looked for {', '.join(_KNOWN_FILES[name])} in {where}. "
        f"Pass {name}:PATH, or hf:{_HF_NAMES[name]} with network."
    )
