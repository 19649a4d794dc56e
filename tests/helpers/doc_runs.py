"""What the documentation's Python examples read, made on a scripted fake model so that they run
offline and in seconds (tests/test_doc_examples.py): the benchmark's client, and a labelled run."""

from __future__ import annotations

import asyncio
from pathlib import Path

from evaluation.datasets import save_items
from evaluation.records import Item, ItemVariant
from evaluation.runner import BenchConfig, RunOptions, run_bench
from selfpara.models.client import ModelClient
from selfpara.pipeline.prompts import JUDGE_MARKER, PARAPHRASE_MARKER
from selfpara.testing import FakeBackend, last_user_text


def scripted_client() -> ModelClient:
    """A client whose every model is `selfpara.testing.FakeBackend`'s default: it paraphrases by
    templates, judges YES and answers Paris."""
    return ModelClient(backend=FakeBackend(), retries=0, timeout_s=30)


def _all_right(model: str, messages: list, params: dict) -> str:
    text = last_user_text(messages)
    if PARAPHRASE_MARKER in text:
        i = text.rsplit("Land", 1)[1].split("?")[0].split(",")[0].strip()
        lines = [f"Which city serves as the capital of Land{i}?", f"Name the capital city of Land{i}."]
        return "\n".join(f"{n}. {line}" for n, line in enumerate(lines, 1))
    return "YES" if JUDGE_MARKER in text else "Paris"


def labelled_run(out: str | Path, questions: int = 80) -> Path:
    """A labelled run of the selfpara arm (k=3) into `out`: `questions` questions, every wording of
    each answered right, so that a calibration at error 0.1 and 95% confidence finds its threshold."""
    root = Path(out).parent
    root.mkdir(parents=True, exist_ok=True)
    items = [
        Item(id=f"land-{i:03d}", gold=["Paris"], variants=[ItemVariant(id=0, question=f"Capital of Land{i}, please?")])
        for i in range(questions)
    ]
    data = save_items(items, root / f"{Path(out).name}.items.jsonl")
    client = ModelClient(backend=FakeBackend(_all_right), retries=0, timeout_s=30)
    config = BenchConfig(dataset=str(data), model="openai/fake", arms=["selfpara"], k=3, limit=None)
    result = asyncio.run(run_bench(config, out, RunOptions(client=client, progress=False)))
    assert result.complete and not result.failed
    return result.out
