"""Run arms over every variant of every item: concurrency, grading, resume, progress, per-sample log.

The run directory's files are read and written by `evaluation.rundir`, the run's items
and variants come from `evaluation.variants`. Resume: a rerun into the same directory
with the same config skips every sample already in samples.jsonl (failed samples are
retried) and appends the rest. A rerun with a different config is refused (ConfigError)
unless `overwrite=True`.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluation.arms import Arm, make_arm, parse_arm_list, templates
from evaluation.bench_config import BenchConfig, RunOptions
from evaluation.cache import caching_client, tally_calls
from evaluation.graders import check_grader_name, grader_for
from evaluation.progress import Progress
from evaluation.records import Item, ItemVariant, Label, SampleRecord
from evaluation.rundir import SAMPLES_FILE, latest_records, prepare_run_dir, read_samples, write_config
from evaluation.variants import build_items
from selfpara.errors import ConfigError
from selfpara.models import ModelClient, is_embedded
from selfpara.result import Usage

__all__ = ["BenchConfig", "RunOptions", "RunResult", "job_order", "run_bench"]


@dataclass
class RunResult:
    """What a finished (or stopped) run did."""

    out: Path
    config: BenchConfig
    items: list[Item]
    records: list[SampleRecord]
    new_samples: int = 0
    skipped: int = 0
    failed: int = 0
    model_calls: int = 0
    cache_hits: int = 0
    shared_calls: int = 0
    cached_calls: int = 0
    wall_s: float = 0.0
    complete: bool = True
    per_arm_calls: dict[str, int] = field(default_factory=dict)


# --- grading -------------------------------------------------------------------------------


class _Graders:
    """One grader per item kind, built on first use; an LLM grader's calls are cached and counted apart."""

    def __init__(self, config: BenchConfig, client: ModelClient | None = None) -> None:
        self.config = config
        self.client = client
        self.usage = Usage()
        self._nli: Any = None
        self._by_kind: dict[str, Any] = {}

    def for_item(self, item: Item) -> Any:
        if item.kind not in self._by_kind:
            name = self.config.grader
            nli = None
            if name.strip().lower() == "nli":
                if not self.config.nli_model:
                    raise ConfigError("the nli grader needs --nli-model (a local NLI model directory)")
                if self._nli is None:
                    from selfpara.pipeline.offline import load_nli

                    self._nli = load_nli(self.config.nli_model)
                nli = self._nli
            self._by_kind[item.kind] = grader_for(
                item.kind,
                name,
                client=self.client,
                model=self.config.grader_model or self.config.model,
                nli=nli,
                usage=self.usage,
            )
        return self._by_kind[item.kind]

    async def grade(self, item: Item, answer: str | None) -> Label:
        return await self.for_item(item).grade(item, answer)


# --- the run --------------------------------------------------------------------------------


def job_order(items: list[Item], arms: list[Arm], order: str = "arm:25") -> list[tuple[Item, ItemVariant, Arm]]:
    """The order samples are started in (results do not depend on it).

    `item`: every arm on each variant before the next. `arm`: one arm on every variant,
    then the next arm. `arm:N`: like `arm` within blocks of N items, so an interrupted run
    still holds every arm on the same questions. Arm after arm keeps concurrent calls
    alike (same decoding settings), which lets the embedded model batch them.
    """
    kind, _, size = order.partition(":")
    if kind == "item":
        return [(i, v, a) for i in items for v in i.variants for a in arms]
    if kind != "arm":
        raise ConfigError(f"unknown order {order!r}: use item, arm or arm:N")
    try:
        block = int(size) if size else len(items) or 1
    except ValueError:
        raise ConfigError(f"bad order {order!r}: N in arm:N must be a whole number") from None
    if block < 1:
        raise ConfigError(f"bad order {order!r}: N must be at least 1")
    jobs = []
    for start in range(0, len(items), block):
        chunk = items[start : start + block]
        jobs += [(i, v, a) for a in arms for i in chunk for v in i.variants]
    return jobs


def _missing_folders(out: Path) -> list[Path]:
    """`out` and those of its parents that do not exist yet, deepest first: what starting a run creates."""
    missing = []
    for folder in (out, *out.parents):
        if folder.exists():
            break
        missing.append(folder)
    return missing


def _remove_if_empty(folders: list[Path]) -> None:
    """Remove the folders a run created (deepest first) while they are still empty."""
    for folder in folders:
        if not folder.is_dir() or any(folder.iterdir()):
            return
        folder.rmdir()


async def run_bench(config: BenchConfig, out: str | Path, options: RunOptions | None = None) -> RunResult:
    """Run every arm on every variant of every item of `config`, into run directory `out`.

    Returns a RunResult with every record of the run (earlier ones included). Writes
    each record to samples.jsonl as it completes; stops cleanly on cancellation.
    """
    options = options or RunOptions()
    out = Path(out).expanduser()
    specs = parse_arm_list(config.arms)  # fail fast on bad arms, before touching the directory
    config = config.model_copy(update={"arms": [s.label for s in specs]})
    check_grader_name(config.grader)
    job_order([], [], options.order)  # fail fast on a bad order
    made = _missing_folders(out)
    resuming = prepare_run_dir(out, config, options.overwrite)
    # The embedded model queues calls behind long batches on a busy CPU: give it time rather than retries.
    base = options.client or ModelClient(
        api_base=config.api_base,
        api_key=options.api_key,
        concurrency=256,
        timeout_s=1800.0 if is_embedded(config.model) else 180.0,
    )
    if options.cache is not None:
        options.cache.new_run()
    grader_client, _ = caching_client(base, options.cache, {"arm": "_grader"}, api_key=options.api_key)
    graders = _Graders(config, grader_client)
    try:
        items, extra = await build_items(config, out, options, base)
        for item in items:  # fail fast on an unknown grader or kind
            graders.for_item(item)
    except BaseException:  # a missing or bad data file: leave no empty run directory behind
        _remove_if_empty(made)
        raise

    call_limit = max(16, min(512, options.concurrency * (config.k + 3)))
    arms: list[Arm] = []
    backends = {}
    for spec in specs:
        client, backend = caching_client(
            base, options.cache, {"arm": spec.label, "sample": 0}, api_key=options.api_key, concurrency=call_limit
        )
        arms.append(
            make_arm(spec, client, config.model, k=config.k, max_tokens=config.max_tokens, api_base=config.api_base)
        )
        backends[spec.label] = backend
    if not resuming:
        write_config(out, config, arms, items, extra)

    samples_path = out / SAMPLES_FILE
    previous = read_samples(samples_path, repair=True)
    done = {(r.item_id, r.variant_id, r.arm) for r in previous if r.error is None}
    jobs = [job for job in job_order(items, arms, options.order) if (job[0].id, job[1].id, job[2].label) not in done]
    total = sum(len(i.variants) for i in items) * len(arms)
    result = RunResult(out=out, config=config, items=items, records=[], skipped=total - len(jobs))
    started = time.perf_counter()
    new_records: list[SampleRecord] = []
    queue: asyncio.Queue[tuple[Item, ItemVariant, Arm]] = asyncio.Queue()
    for job in jobs:
        queue.put_nowait(job)
    stop = asyncio.Event()

    with (
        samples_path.open("a", encoding="utf-8") as log,
        Progress(total, total - len(jobs), options.progress, remaining=Counter(arm.label for _, _, arm in jobs)) as bar,
    ):

        async def one(item: Item, variant: ItemVariant, arm: Arm) -> SampleRecord:
            with tally_calls() as tally:
                output = await arm.answer_in(
                    item, variant, templates.prompt_kind(item.kind, config.answers), seed=config.seed
                )
            label = await graders.grade(item, output.answer)
            details = dict(output.details)
            return SampleRecord(
                item_id=item.id,
                variant_id=variant.id,
                is_original=variant.is_original,
                arm=arm.label,
                answer=output.answer,
                label=label,
                error=output.error,
                calls=output.usage.calls,
                prompt_tokens=output.usage.prompt_tokens,
                completion_tokens=output.usage.completion_tokens,
                cost=output.usage.cost,
                latency_s=round(output.latency_s, 4),
                model_s=round(tally.call_s - tally.queue_s + tally.shared_s, 4),
                queue_s=round(tally.queue_s, 4),
                cached_calls=tally.hits - tally.shared,
                shared_calls=tally.shared,
                details=details,
            )

        async def worker() -> None:
            while not stop.is_set():
                try:
                    item, variant, arm = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                bar.start(arm.label)
                record = await one(item, variant, arm)
                log.write(record.model_dump_json() + "\n")
                log.flush()
                new_records.append(record)
                if record.error:
                    result.failed += 1
                if options.on_record:
                    options.on_record(record)
                bar.advance(arm.label, cached=record.cached_calls)
                if options.stop_after is not None and len(new_records) >= options.stop_after:
                    stop.set()

        workers = [asyncio.create_task(worker()) for _ in range(max(1, options.concurrency))]
        try:
            await asyncio.gather(*workers)
        finally:
            for w in workers:
                w.cancel()
            log.flush()
            os.fsync(log.fileno())

    result.records = latest_records(previous + new_records)
    result.new_samples = len(new_records)
    result.model_calls = sum(b.calls for b in backends.values())
    result.cache_hits = sum(b.hits for b in backends.values())
    # the arms' calls answered from the call cache, in the report's two words for them
    result.shared_calls = sum(r.shared_calls for r in new_records)  # made by another arm of this run
    result.cached_calls = sum(r.cached_calls for r in new_records)  # saved by an earlier run
    result.per_arm_calls = {label: b.calls for label, b in backends.items()}
    result.wall_s = time.perf_counter() - started
    result.complete = len(result.records) == total and not any(r.error for r in result.records)
    return result
