"""What a bench run is (`BenchConfig`, saved with the run) and how to run it (`RunOptions`, not saved)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evaluation.arms import prompts as arm_prompts
from evaluation.cache import BenchCache
from evaluation.schema import SampleRecord
from selfpara.config import EMBEDDED_MODEL, MAX_K
from selfpara.llm import ModelClient


class BenchConfig(BaseModel):
    """Everything that determines a run's results. Saved as config.json; a rerun must match it."""

    model_config = ConfigDict(extra="forbid")

    dataset: str = Field("sample", description="Dataset spec (see evaluation.datasets.load_dataset).")
    model: str = Field(EMBEDDED_MODEL, description="The model every arm uses.")
    api_base: str | None = None
    arms: list[str] = Field(default_factory=lambda: ["raw", "selfpara"], description="Arm specs.")
    k: int = Field(3, ge=1, le=MAX_K, description="Paraphrases (selfpara, single_call) / extra samples (sc).")
    variants: str = Field("data", description="data | generate:N | PATH of an items JSONL.")
    max_variants: int | None = Field(
        None, ge=1, description="Keep at most this many variants per item (original first)."
    )
    limit: int | None = Field(None, ge=1, description="A seeded random subset of this many items.")
    seed: int = 0
    max_tokens: int = Field(32, ge=1, le=8192, description="Max tokens of each answer call.")
    grader: str = Field("auto", description="Grader name for grader_for(kind, name).")
    grader_model: str | None = Field(None, description="Model of the llm graders; default: `model`.")
    nli_model: str | None = Field(None, description="Local NLI model directory (nli grader).")
    paraphrase_check: str = Field("auto", description="Check on generated variants: auto, off, llm, nli.")
    template: str = Field(arm_prompts.TEMPLATE_VERSION, description="Version of the arms' prompts.")

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
