"""Run arms over every variant of every item: concurrency, call cache, resume, progress, per-sample log.

A run lives in one directory:

    config.json     the full run config (BenchConfig, the arms as built, versions)
    items.jsonl     the items with the exact variants every arm answers (generated ones included)
    samples.jsonl   one SampleRecord per (item, variant, arm), appended as each completes
    report.json / report.md / report.html   written by `evaluation.report`

Resume: a rerun into the same directory with the same config skips every sample
already in samples.jsonl (failed samples are retried) and appends the rest. A rerun
with a different config is refused (ConfigError) unless `overwrite=True`.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evaluation.arms import Arm, make_arm, parse_arm_list
from evaluation.arms import prompts as arm_prompts
from evaluation.cache import CallCache, caching_client, default_cache_path
from evaluation.schema import Item, ItemVariant, Label, SampleRecord
from selfpara.config import EMBEDDED_MODEL, MAX_K, is_embedded
from selfpara.errors import ConfigError, InputError
from selfpara.llm import ModelClient
from selfpara.result import Usage

CONFIG_FILE = "config.json"
ITEMS_FILE = "items.jsonl"
SAMPLES_FILE = "samples.jsonl"
REPORT_FILES = ("report.json", "report.md", "report.html")


class BenchConfig(BaseModel):
    """Everything that determines a run's results. Saved as config.json; a rerun must match it."""

    model_config = ConfigDict(extra="forbid")

    dataset: str = Field("sample", description="Dataset spec (see evaluation.datasets.load_dataset).")
    model: str = Field(EMBEDDED_MODEL, description="The model every arm uses.")
    api_base: str | None = None
    arms: list[str] = Field(default_factory=lambda: ["raw", "selfpara"], description="Arm specs.")
    k: int = Field(3, ge=1, le=MAX_K, description="Paraphrases (selfpara, single_call) / extra samples (sc).")
    variants: str = Field("data", description="data | generate:N | PATH of an items JSONL.")
    max_variants: int | None = Field(None, ge=1, description="Keep at most this many variants per item (original first).")
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
    cache: CallCache | None = None
    progress: bool = True
    overwrite: bool = False
    api_key: str | None = None
    client: ModelClient | None = None  # tests and embedding callers plug a fake backend in here
    data_dir: str | None = None
    on_record: Callable[[SampleRecord], None] | None = None  # called after each record is written
    stop_after: int | None = None  # stop after this many new samples (tests simulate an interruption)
    order: str = "arm:25"  # item | arm | arm:N (arm after arm within blocks of N items); see job_order


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
    wall_s: float = 0.0
    complete: bool = True
    per_arm_calls: dict[str, int] = field(default_factory=dict)


# --- run directory --------------------------------------------------------------------------


def read_config(out: Path) -> dict[str, Any]:
    path = out / CONFIG_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{out}: not a run directory (no {CONFIG_FILE})") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict) or "bench" not in data:
        raise ConfigError(f"{path}: not a selfpara run config (no 'bench' section)")
    return data


def load_bench_config(out: Path) -> BenchConfig:
    data = read_config(out)
    try:
        return BenchConfig.model_validate(data["bench"])
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(f"{out / CONFIG_FILE}: bench.{'.'.join(map(str, first['loc']))}: {first['msg']}") from None


def _diff(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Fields that differ; a field the old config lacks counts as its default (configs from older versions)."""
    defaults = BenchConfig().identity()
    keys = sorted(set(old) | set(new))
    return [
        f"{k}: {old.get(k, defaults.get(k))!r} -> {new.get(k)!r}"
        for k in keys
        if old.get(k, defaults.get(k)) != new.get(k)
    ]


def prepare_run_dir(out: Path, config: BenchConfig, overwrite: bool) -> bool:
    """Create or check the run directory. Returns True when it holds an earlier run of this config."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{out}: exists and is not a directory")
    config_path = out / CONFIG_FILE
    if config_path.exists():
        old = read_config(out)["bench"]
        differences = _diff(old, config.identity())
        if differences and not overwrite:
            raise ConfigError(
                f"{config_path}: this run directory holds a run with another config ("
                + "; ".join(differences)
                + "). Use another --out, rerun with the same settings to resume, or pass --overwrite to start over."
            )
        if differences or overwrite:
            for name in (CONFIG_FILE, ITEMS_FILE, SAMPLES_FILE, *REPORT_FILES):
                (out / name).unlink(missing_ok=True)
            return False
        return True
    if out.exists() and (out / SAMPLES_FILE).exists():
        if not overwrite:
            raise ConfigError(f"{out}: holds {SAMPLES_FILE} but no {CONFIG_FILE}; pass --overwrite or another --out")
        (out / SAMPLES_FILE).unlink()
    out.mkdir(parents=True, exist_ok=True)
    return False


def write_config(out: Path, config: BenchConfig, arms: list[Arm], items: list[Item], extra: dict[str, Any]) -> None:
    import selfpara

    data = {
        "bench": config.identity(),
        "arms": [arm.describe() for arm in arms],
        "items": len(items),
        "variants": sum(len(i.variants) for i in items),
        "selfpara_version": selfpara.__version__,
        "python": sys.version.split()[0],
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        **extra,
    }
    tmp = out / (CONFIG_FILE + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, out / CONFIG_FILE)


def read_samples(path: Path, *, repair: bool = False) -> list[SampleRecord]:
    """Records of a samples.jsonl. A torn last line (a run killed mid-write) is dropped (and cut off
    the file when `repair`); any other bad line is a DataError-style InputError naming file and line."""
    if not path.exists():
        return []
    raw = path.read_bytes()
    records: list[SampleRecord] = []
    lines = raw.split(b"\n")
    good_end = 0
    offset = 0
    for number, line in enumerate(lines, 1):
        end = offset + len(line) + 1
        last = number == len(lines) or (number == len(lines) - 1 and lines[-1] == b"")
        if line.strip():
            try:
                records.append(SampleRecord.model_validate_json(line))
                good_end = min(end, len(raw))
            except (ValidationError, ValueError) as exc:
                torn = last and not raw.endswith(b"\n")
                if torn:
                    break
                detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                raise InputError(f"{path}:{number}: not a valid sample record ({detail})") from None
        else:
            good_end = min(end, len(raw))
        offset = end
    if repair and good_end < len(raw):
        with path.open("r+b") as fh:
            fh.truncate(good_end)
    return records


def latest_records(records: list[SampleRecord]) -> list[SampleRecord]:
    """One record per (item, variant, arm): the last one written."""
    latest: dict[tuple[str, int, str], SampleRecord] = {}
    for r in records:
        latest[(r.item_id, r.variant_id, r.arm)] = r
    return list(latest.values())


# --- items and variants ---------------------------------------------------------------------


def select_items(items: list[Item], limit: int | None, seed: int) -> list[Item]:
    """A seeded random subset of `limit` items, kept in dataset order (all items without a limit)."""
    if limit is None or limit >= len(items):
        return list(items)
    chosen = sorted(random.Random(seed).sample(range(len(items)), limit))
    return [items[i] for i in chosen]


def parse_variants(spec: str) -> tuple[str, int | str | None]:
    """`data` -> ("data", None); `generate:N` -> ("generate", N); anything else -> ("file", path)."""
    s = spec.strip()
    if s == "data":
        return "data", None
    if s.startswith("generate"):
        _, _, n = s.partition(":")
        try:
            count = int(n) if n else 3
        except ValueError:
            raise ConfigError(f"--variants {spec!r}: write generate:N with N a whole number, e.g. generate:3") from None
        if not 1 <= count <= MAX_K:
            raise ConfigError(f"--variants {spec!r}: N must be between 1 and {MAX_K}")
        return "generate", count
    if not s:
        raise ConfigError("--variants is empty: use data, generate:N or the path of an items JSONL file")
    return "file", s


def variants_from_file(items: list[Item], path: str) -> list[Item]:
    """Each item with the variants the file holds for its id (gold and the rest from the dataset)."""
    from evaluation.datasets import load_items

    p = Path(path).expanduser()
    if not p.exists():
        raise ConfigError(f"--variants {path!r}: no such file (use data, generate:N or an items JSONL path)")
    saved = {item.id: item for item in load_items(p)}
    missing = [i.id for i in items if i.id not in saved]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise ConfigError(f"{p}: has no variants for item(s) {shown} of the dataset")
    return [item.model_copy(update={"variants": saved[item.id].variants}) for item in items]


async def generate_variants(
    items: list[Item], n: int, client: ModelClient, model: str, check: str, usage: Usage, concurrency: int
) -> list[Item]:
    """Each item's original plus up to `n` paraphrases made and verified by selfpara's own paraphrase step."""
    from selfpara.config import build_config
    from selfpara.pipeline import SelfParaphraser

    cfg = build_config(model=model, k=n, paraphrase_check=check)
    sp = SelfParaphraser(cfg, client=client)
    limit = asyncio.Semaphore(concurrency)

    async def one(item: Item) -> Item:
        original = item.original
        async with limit:  # the pipeline's own paraphrase and filter steps, not a copy
            candidates = await sp.generate_candidates(original.question, cfg, usage)
            kept, rejected = await sp.filter_candidates(original.question, candidates, cfg, usage)
        variants = [original] + [ItemVariant(id=i + 1, question=t, context=original.context) for i, t in enumerate(kept)]
        meta = {**item.meta, "generated_variants": {"requested": n, "kept": len(kept),
                                                    "rejected": [r.model_dump() for r in rejected]}}
        return item.model_copy(update={"variants": variants, "meta": meta})

    return list(await asyncio.gather(*(one(item) for item in items)))


async def build_items(config: BenchConfig, out: Path, options: RunOptions, client: ModelClient) -> tuple[list[Item], dict[str, Any]]:
    """The run's items: from items.jsonl when resuming, else loaded, subset, with their variants (saved)."""
    from evaluation.datasets import load_dataset, load_items, save_items

    saved = out / ITEMS_FILE
    if saved.exists():
        return load_items(saved), {}
    kind, arg = parse_variants(config.variants)
    items = load_dataset(config.dataset, data_dir=options.data_dir)
    if not items:
        raise ConfigError(f"dataset {config.dataset!r} holds no items")
    items = select_items(items, config.limit, config.seed)
    extra: dict[str, Any] = {}
    if kind == "file":
        items = variants_from_file(items, str(arg))
    elif kind == "generate":
        usage = Usage()
        gen_client, _ = caching_client(client, options.cache, {"arm": "_variants"}, api_key=options.api_key)
        items = await generate_variants(items, int(arg or 3), gen_client, config.model, config.paraphrase_check,
                                        usage, max(1, options.concurrency))
        extra["variant_generation_usage"] = usage.model_dump()
    if config.max_variants is not None:
        items = [i.model_copy(update={"variants": i.variants[: config.max_variants]}) for i in items]
    save_items(items, saved)
    return items, extra


# --- grading -------------------------------------------------------------------------------


def check_grader_name(name: str) -> None:
    from evaluation.graders import GRADERS

    if name.strip().lower().replace("_", "-") not in GRADERS and name not in ("", "default"):
        raise ConfigError(f"unknown grader {name!r}; choose from {', '.join(GRADERS)}")


class _Graders:
    """One grader per item kind, built on first use; an LLM grader's calls are cached and counted apart."""

    def __init__(self, config: BenchConfig, client: ModelClient | None = None) -> None:
        from evaluation.graders import grader_for

        self._grader_for = grader_for
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
                    from selfpara.nli import load_nli

                    self._nli = load_nli(self.config.nli_model)
                nli = self._nli
            self._by_kind[item.kind] = self._grader_for(
                item.kind, name, client=self.client, model=self.config.grader_model or self.config.model,
                nli=nli, usage=self.usage,
            )
        return self._by_kind[item.kind]

    async def grade(self, item: Item, answer: str | None) -> Label:
        return await self.for_item(item).grade(item, answer)


# --- progress -----------------------------------------------------------------------------


class _Progress:
    """A rich progress bar with ETA on a terminal; a plain line every 30 s otherwise."""

    def __init__(self, total: int, done: int, enabled: bool) -> None:
        from rich.console import Console

        self.total, self.done = total, done
        self.console = Console(stderr=True)
        self.enabled = enabled
        self.live = enabled and self.console.is_terminal
        self.started = time.monotonic()
        self.last_line = 0.0
        self.start_done = done
        self.bar: Any = None

    def __enter__(self) -> "_Progress":
        if self.live:
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                       TimeRemainingColumn)

            self.bar = Progress(
                TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("•"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                TextColumn("{task.fields[note]}"), console=self.console, transient=False,
            )
            self.bar.start()
            self.task = self.bar.add_task("bench", total=self.total, completed=self.done, note="")
        elif self.enabled:
            self.console.print(f"bench: {self.done}/{self.total} samples done, {self.total - self.done} to run")
        return self

    def advance(self, note: str) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.update(self.task, advance=1, note=note)
            return
        now = time.monotonic()
        if self.enabled and (now - self.last_line >= 30 or self.done == self.total):
            self.last_line = now
            elapsed = now - self.started
            new = self.done - self.start_done
            eta = elapsed / new * (self.total - self.done) if new else 0.0
            self.console.print(
                f"bench: {self.done}/{self.total} ({100 * self.done / max(1, self.total):.0f}%) "
                f"elapsed {_fmt(elapsed)} ETA {_fmt(eta)} {note}", highlight=False,
            )

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()


def _fmt(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


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
    resuming = prepare_run_dir(out, config, options.overwrite)
    # The embedded model queues calls behind long batches on a busy CPU: give it time rather than retries.
    base = options.client or ModelClient(
        api_base=config.api_base, api_key=options.api_key, concurrency=256,
        timeout_s=1800.0 if is_embedded(config.model) else 180.0,
    )
    grader_client, _ = caching_client(base, options.cache, {"arm": "_grader"}, api_key=options.api_key)
    graders = _Graders(config, grader_client)
    items, extra = await build_items(config, out, options, base)
    for item in items:  # fail fast on an unknown grader or kind
        graders.for_item(item)

    call_limit = max(16, min(512, options.concurrency * (config.k + 3)))
    arms: list[Arm] = []
    backends = {}
    for spec in specs:
        client, backend = caching_client(base, options.cache, {"arm": spec.label, "sample": 0},
                                         api_key=options.api_key, concurrency=call_limit)
        arms.append(make_arm(spec, client, config.model, k=config.k, max_tokens=config.max_tokens,
                             api_base=config.api_base))
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

    with samples_path.open("a", encoding="utf-8") as log, _Progress(total, total - len(jobs), options.progress) as bar:

        async def one(item: Item, variant: ItemVariant, arm: Arm) -> SampleRecord:
            output = await arm.answer(variant, item.kind, seed=config.seed)
            label = await graders.grade(item, output.answer)
            details = dict(output.details)
            return SampleRecord(
                item_id=item.id, variant_id=variant.id, is_original=variant.is_original, arm=arm.label,
                answer=output.answer, label=label, error=output.error, calls=output.usage.calls,
                prompt_tokens=output.usage.prompt_tokens, completion_tokens=output.usage.completion_tokens,
                cost=output.usage.cost, latency_s=round(output.latency_s, 4), details=details,
            )

        async def worker() -> None:
            while not stop.is_set():
                try:
                    item, variant, arm = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                record = await one(item, variant, arm)
                log.write(record.model_dump_json() + "\n")
                log.flush()
                new_records.append(record)
                if record.error:
                    result.failed += 1
                if options.on_record:
                    options.on_record(record)
                hits = sum(b.hits for b in backends.values())
                bar.advance(f"{arm.label}" + (f" · {hits} cached" if hits else ""))
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
    result.per_arm_calls = {label: b.calls for label, b in backends.items()}
    result.wall_s = time.perf_counter() - started
    result.complete = len(result.records) == total and not any(r.error for r in result.records)
    return result


def open_cache(path: str | Path | None, enabled: bool = True) -> CallCache | None:
    """The call cache at `path` (default location when None), or None when disabled."""
    if not enabled:
        return None
    return CallCache(path or default_cache_path())
