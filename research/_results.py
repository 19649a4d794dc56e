"""Where the method's measurements write their figures: research/results/NAME.json, stamped with when and on
what machine they ran (the speed benchmarks write benchmarks/results/ the same way)."""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path

RESULTS = Path(__file__).parent / "results"
DATA = Path(__file__).parent / "data"
"""The hand-labelled sets the measurements read (research/data/)."""


def write(name: str, figures: dict) -> Path:
    """Write `figures` to research/results/NAME.json and return the path."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    stamp = {"benchmark": name, "when": time.strftime("%Y-%m-%dT%H:%M:%S"), "machine": platform.platform()}
    path.write_text(json.dumps({**stamp, **figures}, indent=2))
    return path
