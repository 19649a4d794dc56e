"""Loaders that turn datasets into `Item`s with their variant sets, one module per source.

- `readers`: raw rows of CSV / TSV / JSON / JSONL files, each knowing its file and line;
- `cells`: reading one cell (text, alias lists, booleans), shared with the label-file reader;
- `generic`: generic tables with chosen columns (`load_table`): one row per question
  (paraphrases in columns, or in one column as a list), or one row per variant grouped
  by a question-id column (as published paraphrase sets are);
- `simpleqa`, `truthfulqa`, `gsm8k`, `math500`: the four public formats as distributed
  (CSV or JSONL with the original column names), each registered with `@register_format`
  (`registry`); `formats`: them by name (`FORMATS`), and detection. A new format is one
  module that registers its loader, imported in `formats`;
- `items`: saved variant files (`save_items` / `load_items`), so that every arm and every
  rerun sees the same variants, and the built-in sample set (`load_sample`);
- `hf`: a Hugging Face `datasets` name (`load_hf`, needs the `datasets` package and network);
- `dispatch`: `load_dataset(spec)` picks one of them by name. Every error names the file and line.
"""

from __future__ import annotations

from evaluation.datasets.cells import parse_boolean
from evaluation.datasets.dispatch import DATA_DIR_ENV, DATASETS, dataset_names, load_dataset, load_path
from evaluation.datasets.formats import FORMATS, detect_format, register_format
from evaluation.datasets.generic import load_table
from evaluation.datasets.gsm8k import gsm8k_gold, load_gsm8k
from evaluation.datasets.hf import load_hf
from evaluation.datasets.items import load_items, load_sample, sample_path, save_items
from evaluation.datasets.math500 import load_math500
from evaluation.datasets.readers import DataError, Row, read_rows
from evaluation.datasets.simpleqa import load_simpleqa
from evaluation.datasets.truthfulqa import load_truthfulqa

__all__ = [
    "DATASETS",
    "DATA_DIR_ENV",
    "FORMATS",
    "DataError",
    "Row",
    "dataset_names",
    "detect_format",
    "gsm8k_gold",
    "load_dataset",
    "load_gsm8k",
    "load_hf",
    "load_items",
    "load_math500",
    "load_path",
    "load_sample",
    "load_simpleqa",
    "load_table",
    "load_truthfulqa",
    "parse_boolean",
    "read_rows",
    "register_format",
    "sample_path",
    "save_items",
]
