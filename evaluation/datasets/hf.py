"""Hugging Face datasets by name (needs the `datasets` package, and network or a local HF cache)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evaluation.datasets.formats import FORMATS, detect_format
from evaluation.datasets.generic import load_table
from evaluation.datasets.items import load_items
from evaluation.records import Item
from selfpara.errors import ConfigError


def load_hf(
    name: str,
    *,
    config: str | None = None,
    split: str = "test",
    format: str | None = None,
    limit: int | None = None,
    **columns: Any,
) -> list[Item]:
    """A Hugging Face dataset (needs the `datasets` package and network, or a local HF cache).

    The format is detected from the column names (SimpleQA, TruthfulQA, GSM8K, MATH-500
    layouts) unless `format` names one; otherwise pass the `load_table` column options
    (question_col=..., gold_col=...).
    """
    try:
        import datasets as hf  # noqa: PLC0415
    except ImportError:
        raise ConfigError(
            f"loading hf:{name} needs the 'datasets' package: pip install 'selfpara[datasets]' "
            "(or download the file and pass its path)"
        ) from None
    try:
        data = hf.load_dataset(name, config, split=split)
    except Exception as exc:  # offline, unknown name, bad split: all the user's to fix
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(
            f"cannot load Hugging Face dataset {name!r} (config={config!r}, split={split!r}): {first}. "
            "Without network, download the file and pass its path."
        ) from None
    records = [dict(r) for r in (data.select(range(min(limit, len(data)))) if limit else data)]
    if not records:
        raise ConfigError(f"Hugging Face dataset {name!r} split {split!r} is empty")
    # The TruthfulQA generation config spells its columns differently from the CSV.
    if {"question", "best_answer", "correct_answers", "incorrect_answers"} <= set(records[0]):
        records = [
            {
                "Question": r["question"],
                "Best Answer": r["best_answer"],
                "Correct Answers": ";".join(r["correct_answers"]),
                "Incorrect Answers": ";".join(r["incorrect_answers"]),
                "Category": r.get("category", ""),
                "Type": r.get("type", ""),
                "Source": r.get("source", ""),
            }
            for r in records
        ]
    fmt = format or (None if columns else detect_format(records[0], records))
    import tempfile  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name.replace('/', '_')}.jsonl"
        with path.open("w", encoding="utf-8") as fh:
            for r in records:
                fh.write(json.dumps(r, default=str) + "\n")
        if fmt is not None and FORMATS.knows(fmt):
            items = FORMATS.get_entry(fmt).load(path)
        elif fmt == "items":
            items = load_items(path)
        elif columns:
            items = load_table(path, **columns)
        else:
            raise ConfigError(
                f"cannot tell the layout of hf:{name} (columns {sorted(records[0])}); pass format= "
                "or question_col=/gold_col="
            )
    for item in items:
        item.meta["source"] = f"hf:{name}"
        item.meta.pop("line", None)
    return items
