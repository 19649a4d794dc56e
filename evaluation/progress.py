"""Progress of a bench run on stderr: a rich bar with ETA on a terminal, a plain line every 30 s otherwise.

The ETA counts the work still to do arm by arm: the job order interleaves arms whose
answers cost very different times (raw: one call; selfpara: k+2), so a single overall
rate is far off while the cheap arm runs first.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Mapping
from typing import Any


def estimate_eta(
    remaining: Mapping[str, int], latency_s: Mapping[str, float], done: Mapping[str, int], elapsed_s: float
) -> tuple[float | None, list[str]]:
    """Seconds left, and the arms with work left but no finished answer yet.

    Args:
        remaining: answers still to run, per arm.
        latency_s: summed latency of the answers this run finished, per arm.
        done: how many answers this run finished, per arm.
        elapsed_s: wall time of this run so far.

    Each arm's remaining answers cost its mean latency; answers run concurrently, so the
    summed cost is divided by the parallelism seen so far (summed latency / wall time).
    An arm with no finished answer is costed at the mean of the others (a guess, named in
    the second value). None before any answer finished.
    """
    per_answer = {a: latency_s.get(a, 0.0) / n for a, n in done.items() if n > 0}
    unknown = [a for a, n in remaining.items() if n and a not in per_answer]
    if not per_answer or elapsed_s <= 0:
        return None, unknown
    busy = sum(latency_s.get(a, 0.0) for a in per_answer)
    if busy <= 0:
        return 0.0, unknown
    parallel = busy / elapsed_s
    guess = statistics.fmean(per_answer.values())
    work = sum(n * per_answer.get(a, guess) for a, n in remaining.items())
    return work / parallel, unknown


class Progress:
    """A rich progress bar with ETA on a terminal; a plain line every 30 s otherwise.

    Args:
        total: answers in the whole run; done: already in the log (a resumed run).
        enabled: show anything at all.
        remaining: answers still to run, per arm label (for the per-arm ETA).
    """

    def __init__(self, total: int, done: int, enabled: bool, remaining: Mapping[str, int] | None = None) -> None:
        from rich.console import Console

        self.total, self.done = total, done
        self.console = Console(stderr=True)
        self.enabled = enabled
        self.live = enabled and self.console.is_terminal
        self.started = time.monotonic()
        self.last_line = 0.0
        self.start_done = done
        self.bar: Any = None
        self.remaining: dict[str, int] = dict(remaining or {})
        self.latency: dict[str, float] = {}
        self.finished: dict[str, int] = {}

    def __enter__(self) -> Progress:
        if self.live:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("•"),
                TimeElapsedColumn(),
                TextColumn("ETA {task.fields[eta]}"),
                TextColumn("{task.fields[note]}"),
                console=self.console,
                transient=False,
            )
            self.bar.start()
            self.task = self.bar.add_task("bench", total=self.total, completed=self.done, note="", eta="–")
        elif self.enabled:
            self.console.print(f"bench: {self.done}/{self.total} samples done, {self.total - self.done} to run")
        return self

    def eta(self) -> str:
        """The ETA as text: h:mm:ss, '~' when an arm with work left has not finished an answer yet."""
        seconds, unknown = estimate_eta(self.remaining, self.latency, self.finished, time.monotonic() - self.started)
        if seconds is None:
            return "–"
        return ("~" if unknown else "") + _fmt(seconds)

    def advance(self, note: str, arm: str | None = None, latency_s: float = 0.0) -> None:
        """One answer finished (by `arm`, after `latency_s` seconds)."""
        self.done += 1
        if arm is not None:
            self.remaining[arm] = max(0, self.remaining.get(arm, 0) - 1)
            self.latency[arm] = self.latency.get(arm, 0.0) + latency_s
            self.finished[arm] = self.finished.get(arm, 0) + 1
        if self.bar is not None:
            self.bar.update(self.task, advance=1, note=note, eta=self.eta())
            return
        now = time.monotonic()
        if self.enabled and (now - self.last_line >= 30 or self.done == self.total):
            self.last_line = now
            self.console.print(
                f"bench: {self.done}/{self.total} ({100 * self.done / max(1, self.total):.0f}%) "
                f"elapsed {_fmt(now - self.started)} ETA {self.eta()} {note}",
                highlight=False,
            )

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()


def _fmt(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
