"""A run directory on disk: its config, its items and its per-sample log.

config.json     the full run config (BenchConfig, the arms as built, versions)
items.jsonl     the items with the exact variants every arm answers (generated ones included)
samples.jsonl   one SampleRecord per (item, variant, arm), appended as each completes
report.json / report.md / report.html   written by `evaluation.report`
"""

from __future__ import annotations

import json
import os
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evaluation.arms import Arm
from evaluation.bench_config import BenchConfig
from evaluation.environment import run_environment
from evaluation.records import Item, SampleRecord
from selfpara.errors import ConfigError, InputError

CONFIG_FILE = "config.json"
ITEMS_FILE = "items.jsonl"
SAMPLES_FILE = "samples.jsonl"
REPORT_FILES = ("report.json", "report.md", "report.html")


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
        "environment": run_environment(),
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
