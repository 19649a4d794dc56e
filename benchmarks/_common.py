"""Helpers for the benchmark scripts: percentiles and writing results."""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path

RESULTS = Path(__file__).parent / "results"


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100) by nearest rank."""
    ordered = sorted(values)
    idx = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[idx]


def write(name: str, figures: dict) -> Path:
    """Write `figures` (plus machine info) to benchmarks/results/NAME.json and return the path."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    payload = {"benchmark": name, "when": time.strftime("%Y-%m-%dT%H:%M:%S"), "machine": platform.platform(), **figures}
    path.write_text(json.dumps(payload, indent=2))
    return path


def stop_all(procs: list, timeout_s: float = 15.0) -> None:
    """Terminate the processes a benchmark started, killing those still alive after `timeout_s`."""
    import subprocess

    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()


async def wait_up(url: str, proc, timeout_s: float = 120) -> None:
    """Poll `url` until it answers 200; RuntimeError if `proc` (the server) exits first or time runs out."""
    import asyncio

    import httpx

    deadline = time.monotonic() + timeout_s
    async with httpx.AsyncClient(timeout=2) as http:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"{url}: the process exited with {proc.returncode}")
            try:
                if (await http.get(url)).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.2)
    raise RuntimeError(f"{url} did not come up")
