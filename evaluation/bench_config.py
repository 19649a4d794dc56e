"""What a bench run is (`BenchConfig`, saved with the run) and how to run it (`RunOptions`, not saved)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from evaluation.arms import templates
from evaluation.cache import BenchCache
from evaluation.records import SampleRecord
from selfpara.cli.common import default
from selfpara.config import MAX_K
from selfpara.models import EMBEDDED_MODEL, ModelClient


def parse_shard(spec: str | None) -> tuple[int, int] | None:
    """`"2/3"` -> (2, 3): shard 2 of 3; None -> None. Raises ValueError on anything else."""
    if spec is None:
        return None
    index, _, count = spec.partition("/")
    try:
        i, n = int(index), int(count)
    except ValueError:
        raise ValueError(f"shard must be I/N (e.g. 1/2), got {spec!r}") from None
    if not 1 <= i <= n:
        raise ValueError(f"shard {spec!r}: I must be between 1 and N")
    return i, n


class BenchConfig(BaseModel):
    """Everything that determines a run's results. Saved as config.json; a rerun must match it."""

    model_config = ConfigDict(extra="forbid")

    dataset: str = Field("sample", description="Dataset spec (see evaluation.datasets.load_dataset).")
    model: str = Field(EMBEDDED_MODEL, description="The model every arm uses.")
    api_base: str | None = None
    arms: list[str] = Field(default_factory=lambda: ["raw", "selfpara"], description="Arm specs.")
    k: int = Field(
        default("k", "bench"), ge=1, le=MAX_K, description="Paraphrases (selfpara, single_call) / extra samples (sc)."
    )
    variants: str = Field("data", description="data | generate:N | PATH of an items JSONL.")
    max_variants: int | None = Field(
        None, ge=1, description="Keep at most this many variants per item (original first)."
    )
    limit: int | None = Field(None, ge=1, description="A seeded random subset of this many items.")
    shard: str | None = Field(None, description="I/N: only every N-th item of the subset, from the I-th.")
    seed: int = 0
    max_tokens: int = Field(
        default("max_tokens", "bench"), ge=1, le=8192, description="Max tokens of each answer call."
    )
    answers: templates.AnswerStyle = Field(
        "short",
        description="short: the final answer alone; worked: math answers show their working first; "
        "natural: the question alone, as `ask` and the proxy send it.",
    )
    grader: str = Field("auto", description="Grader name for grader_for(kind, name).")
    grader_model: str | None = Field(None, description="Model of the llm graders; default: `model`.")
    nli_model: str | None = Field(None, description="Local NLI model directory (nli grader).")
    paraphrase_check: str = Field(
        default("paraphrase_check", "bench"), description="Check on generated variants: auto, off, llm, nli."
    )
    template: str = Field(templates.TEMPLATE_VERSION, description="Version of the arms' prompts.")

    @field_validator("shard")
    @classmethod
    def _valid_shard(cls, value: str | None) -> str | None:
        parse_shard(value)
        return value

    def identity(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


@dataclass
class RunOptions:
    """How to run, not what: none of this changes results, so none of it is in the config."""

    concurrency: int = 8
    cache: BenchCache | None = None
    progress: bool = True
    overwrite: bool = False
    api_key: str | None = None
    client: ModelClient | None = None  # tests and embedding callers plug a fake backend in here
    data_dir: str | None = None
    on_record: Callable[[SampleRecord], None] | None = None  # called after each record is written
    stop_after: int | None = None  # stop after this many new samples (tests simulate an interruption)
    order: str = "arm:25"  # item | arm | arm:N (arm after arm within blocks of N items); see job_order
