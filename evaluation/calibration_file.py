"""Writing a calibration as a settings file: what `selfpara calibrate --out` writes.

The file has the one layout every entry point reads (`selfpara.config.file`):

- `[upstream]`: the calibrated arm's settings that shape its answers and confidence (model, k, vote
  rule, equivalence, max_tokens, ...), where the model lives (`api_base`, when the run had one: without
  it `openai/NAME` would be sent to the provider's default URL), then `low_vote_share` and
  `confidence_threshold`, so that
  `selfpara ask --settings FILE`, `selfpara serve --config FILE` and
  `selfpara.config_from_file(FILE)` answer as the run did and act below the threshold;
- `[calibration]`: the run, the arm, the target, the bound, the coverage, the counts and the check
  on the held-out part; `[calibration.settings]` repeats the calibrated settings, so that a loader
  can say when a flag or a request has left them (the promise then does not carry over).

TOML unless the path ends in .json. TOML has no null: a setting left at None where its default is
not None needs a .json file.
"""

from __future__ import annotations

import json
import math
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from evaluation.calibrate import Calibration
from evaluation.gate import GateFit
from selfpara.config import WrapConfig
from selfpara.errors import ConfigError

NOT_CALIBRATED = frozenset(
    {
        "api_key",
        "api_base",
        "transport",
        "timeout_s",
        "retries",
        "concurrency",
        "cache",
        "cache_size",
        "cache_ttl_s",
        "stream_paraphrases",
        "top_logprobs",
        "low_vote_share",
        "low_vote_share_threshold",
        "confidence_threshold",
        "abstention_text",
    }
)
"""WrapConfig fields that say how to reach the model or what to do below the threshold, not how an answer
and its confidence are made: they are not recorded, and a deployment may set them as it needs."""

REACH = ("api_base",)
"""Fields of NOT_CALIBRATED that say where the calibrated model lives: written to `[upstream]` so that the file
reaches the model the run measured, but not to `[calibration.settings]` (a deployment may move it)."""

DEPLOYABLE_ARMS = ("selfpara",)
"""Arms whose confidence is the one `ask`, the library and the proxy compute: only their threshold can be written."""


def calibrated_settings(arm_config: dict[str, Any]) -> dict[str, Any]:
    """The settings of a recorded arm's WrapConfig (a run's config.json) that a calibration holds for."""
    return {k: v for k, v in arm_config.items() if k in WrapConfig.model_fields and k not in NOT_CALIBRATED}


def calibration_record(result: Calibration) -> dict[str, Any]:
    """The `[calibration]` table: where the threshold came from and what it promised and kept."""
    choice = result.choice
    record: dict[str, Any] = {
        "run": result.run,
        "arm": result.arm,
        "target_error": result.target_error,
        "confidence": result.confidence,
        "threshold": choice.threshold,
        "bound": choice.bound,
        "coverage": choice.coverage,
        "covered": choice.covered,
        "errors": choice.errors,
        "n": choice.attempted,
        "questions": result.questions_choose,
        "split": result.split,
        "seed": result.seed,
        "wordings": result.wordings,
        "answers": result.bench.get("answers"),
        "prompt_template": result.bench.get("template"),
        "dataset": result.bench.get("dataset"),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    if result.check is not None:
        record["check"] = {"questions": result.questions_check, **result.check.model_dump()}
    return record


def calibration_document(result: Calibration, low_vote_share: str = "flag") -> dict[str, Any]:
    """The whole file as a dict: `upstream` (settings + policy + threshold) and `calibration`.

    Raises ConfigError when the arm's confidence is not the wrapper's, or no threshold was found.
    """
    if result.arm_kind not in DEPLOYABLE_ARMS or not result.arm_config:
        raise ConfigError(
            f"arm {result.arm!r} ({result.arm_kind}) is not the wrapper: its threshold can be measured, but ask, "
            "the library and the proxy compute selfpara's confidence, so only a selfpara arm's can be written"
        )
    if result.choice.threshold is None:
        raise ConfigError("no threshold keeps the target: nothing to write")
    if low_vote_share not in ("flag", "abstain"):
        raise ConfigError(f"low_vote_share must be flag or abstain, got {low_vote_share!r}")
    settings = calibrated_settings(result.arm_config)
    reach = {k: result.arm_config.get(k) or result.bench.get(k) for k in REACH}
    upstream = {
        **settings,
        **{k: v for k, v in reach.items() if v},
        "low_vote_share": low_vote_share,
        "confidence_threshold": result.choice.threshold,
    }
    return {"upstream": upstream, "calibration": {**calibration_record(result), "settings": settings}}


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ConfigError(f"cannot write {value} to TOML")
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    raise ConfigError(f"cannot write {value!r} to TOML")


def _toml_table(name: str, table: dict[str, Any]) -> list[str]:
    """`[name]` with its scalar keys, then its sub-tables; None values are left out (checked by the caller)."""
    lines = [f"[{name}]"]
    lines += [f"{k} = {_toml_value(v)}" for k, v in table.items() if v is not None and not isinstance(v, dict)]
    for k, v in table.items():
        if isinstance(v, dict):
            lines += ["", *_toml_table(f"{name}.{k}", v)]
    return lines


def _check_nulls(upstream: dict[str, Any]) -> None:
    """TOML cannot say None: refuse a setting at None whose WrapConfig default is something else."""
    lost = [k for k, v in upstream.items() if v is None and WrapConfig.model_fields[k].default is not None]
    if lost:
        raise ConfigError(f"TOML has no null for {', '.join(lost)} (None in the run): write a .json file instead")


def write_calibration(path: str | Path, result: Calibration, *, low_vote_share: str = "flag") -> Path:
    """Write `result` as a settings file at `path` (JSON for .json, else TOML), atomically; returns the path."""
    p = Path(path).expanduser()
    document = calibration_document(result, low_vote_share)
    if p.suffix.lower() == ".json":
        text = json.dumps(document, indent=2) + "\n"
    else:
        _check_nulls(document["upstream"])
        head = [
            "# A calibrated confidence threshold, written by `selfpara calibrate`.",
            "# Read by: selfpara ask --settings FILE; selfpara serve --config FILE; selfpara.config_from_file(FILE).",
            "# Its promise holds for answers made with these settings to questions like the run's, asked as it",
            "# asked them (its answer prompt); flags or requests that change them are reported on load.",
            "",
        ]
        text = "\n".join(
            [
                *head,
                *_toml_table("upstream", document["upstream"]),
                "",
                *_toml_table("calibration", document["calibration"]),
            ]
        )
        text += "\n"
    return _write(p, text)


def _write(p: Path, text: str) -> Path:
    tmp = p.with_name(p.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, p)
    return p


def write_gate(path: str | Path, fit: GateFit, run_config: dict[str, Any]) -> Path:
    """Write a fitted doubt-first threshold as a settings file at `path` (JSON for .json, else TOML): the arm's
    settings and where its model lives in `[upstream]` with `sure_probability`, and in `[calibration]` (a
    record, as for a confidence threshold) what the threshold cost and returned where it was chosen and where
    it was checked. Returns the path.

    Raises ConfigError when no threshold kept the budget or the arm is not the wrapper.
    """
    if fit.chosen is None or fit.chosen.threshold is None:
        raise ConfigError(f"no threshold keeps the cost within {fit.budget:g}x raw's: nothing to write")
    arm: dict[str, Any] = next((a for a in run_config.get("arms", []) if a.get("label") == fit.arm), {})
    if arm.get("arm") not in DEPLOYABLE_ARMS or not arm.get("config"):
        raise ConfigError(f"arm {fit.arm!r} is not the wrapper: only a selfpara arm's gate can be written")
    bench = run_config.get("bench", {})
    reach = {k: arm["config"].get(k) or bench.get(k) for k in REACH}
    upstream = {
        **calibrated_settings(arm["config"]),
        **{k: v for k, v in reach.items() if v},
        "sure_probability": fit.chosen.threshold,
    }
    record: dict[str, Any] = {
        "kind": "gate",
        "run": fit.run,
        "arm": fit.arm,
        "budget": fit.budget,
        "questions": fit.questions_choose,
        "chosen": fit.chosen.model_dump(exclude_none=True),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    if fit.check is not None:
        record["check"] = {"questions": fit.questions_check, **fit.check.model_dump(exclude_none=True)}
    p = Path(path).expanduser()
    if p.suffix.lower() == ".json":
        return _write(p, json.dumps({"upstream": upstream, "calibration": record}, indent=2) + "\n")
    _check_nulls(upstream)
    head = [
        "# A doubt-first threshold (sure_probability), written by `selfpara calibrate --gate`.",
        "# Read by: selfpara ask --settings FILE; selfpara serve --config FILE; selfpara.config_from_file(FILE).",
        "",
    ]
    lines = [*head, *_toml_table("upstream", upstream), "", *_toml_table("calibration", record)]
    return _write(p, "\n".join(lines) + "\n")
