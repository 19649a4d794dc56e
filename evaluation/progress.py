"""Progress of a bench run on stderr: a rich bar with ETA on a terminal, a plain line every 30 s otherwise.

The ETA comes from the throughput of completed answers, arm by arm: the wall time so far,
shared among the finished answers in proportion to their arms' mean latencies, gives each
arm's wall seconds per answer (queueing included), and the answers still to run cost that.
The job order interleaves arms whose answers cost very different times (raw: one call;
selfpara: k+2), so one overall rate is far off while the cheap arm runs first. Between
completions the ETA counts down; once the next completion is overdue (later than the
slowest arm's wall time per answer) it grows again at the rate the throughput falls, so a
stalled run never shows an ETA that stands still or runs out.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from rich.progress import ProgressColumn, Task
from rich.text import Text

LINE_EVERY_S = 30.0
"""Seconds between the plain progress lines when stderr is not a terminal."""


def estimate_eta(
    remaining: Mapping[str, int], latency_s: Mapping[str, float], done: Mapping[str, int], elapsed_s: float
) -> tuple[float | None, list[str]]:
    """Seconds left at the throughput seen so far, and the arms with work left but no finished answer yet.

    Args:
        remaining: answers still to run, per arm.
        latency_s: summed latency of the answers this run finished, per arm.
        done: how many answers this run finished, per arm.
        elapsed_s: wall time of this run so far.

    The finished answers took `elapsed_s` of wall time together; each arm's answers weigh
    their mean latency, so an arm's wall seconds per answer is its mean latency times
    elapsed / summed latency (summed latency / elapsed is the parallelism seen). An arm
    with no finished answer is costed at the mean of the others (a guess, named in the
    second value). None before any answer finished.
    """
    per_answer = _wall_per_answer(latency_s, done, elapsed_s) or {}
    unknown = [a for a, n in remaining.items() if n and a not in per_answer]
    if not per_answer:
        return None, unknown
    guess = statistics.fmean(per_answer.values())
    return sum(n * per_answer.get(a, guess) for a, n in remaining.items()), unknown


def _wall_per_answer(
    latency_s: Mapping[str, float], done: Mapping[str, int], elapsed_s: float
) -> dict[str, float] | None:
    """Each arm's wall seconds per finished answer (see `estimate_eta`); None before any finished."""
    mean = {a: latency_s.get(a, 0.0) / n for a, n in done.items() if n > 0}
    if not mean or elapsed_s <= 0:
        return None
    busy = sum(latency_s.get(a, 0.0) for a in mean)
    if busy <= 0:
        return {a: 0.0 for a in mean}
    return {a: m * elapsed_s / busy for a, m in mean.items()}


def countdown(eta_at_last: float, since_last: float, expected_gap: float, growth: float) -> float:
    """The ETA `since_last` seconds after the last completion, whose estimate was `eta_at_last`.

    Args:
        eta_at_last: the estimate when the last answer finished.
        since_last: seconds since then.
        expected_gap: how long the next completion may take before it is overdue.
        growth: how fast the throughput estimate grows per overdue second (work left / work done).
    """
    if since_last <= expected_gap:
        return max(0.0, eta_at_last - since_last)
    return max(0.0, eta_at_last - expected_gap) + (since_last - expected_gap) * growth


class Progress:
    """A rich progress bar with ETA on a terminal; a plain line every 30 s otherwise.

    Args:
        total: answers in the whole run; done: already in the log (a resumed run).
        enabled: show anything at all.
        remaining: answers still to run, per arm label (for the per-arm ETA).
    """

    def __init__(
        self,
        total: int,
        done: int,
        enabled: bool,
        remaining: Mapping[str, int] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        from rich.console import Console

        self.total, self.done = total, done
        self.console = Console(stderr=True)
        self.enabled = enabled
        self.live = enabled and self.console.is_terminal
        self.clock = clock
        self.started = clock()
        self.last_line = 0.0
        self.start_done = done
        self.bar: Any = None
        self.remaining: dict[str, int] = dict(remaining or {})
        self.latency: dict[str, float] = {}
        self.finished: dict[str, int] = {}
        self._last: tuple[float, float, float, float] | None = None  # (when, eta, expected gap, growth)
        self._guess = False
        self._ticker: threading.Thread | None = None
        self._stop = threading.Event()

    def __enter__(self) -> Progress:
        if self.live:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("•"),
                TimeElapsedColumn(),
                _EtaColumn(self),  # recomputed at each refresh, not only when an answer finishes
                TextColumn("{task.fields[note]}"),
                console=self.console,
                transient=False,
            )
            self.bar.start()
            self.task = self.bar.add_task("bench", total=self.total, completed=self.done, note="")
        elif self.enabled:
            self.console.print(f"bench: {self.done}/{self.total} samples done, {self.total - self.done} to run")
            self._ticker = threading.Thread(target=self._tick, name="selfpara-bench-progress", daemon=True)
            self._ticker.start()
        return self

    def eta_seconds(self) -> float | None:
        """Seconds left now: the estimate of the last completion, counted down (see `countdown`)."""
        if self._last is None:
            return None
        when, eta, gap, growth = self._last
        return countdown(eta, self.clock() - when, gap, growth)

    def eta(self) -> str:
        """The ETA as text: h:mm:ss, '~' when an arm with work left has not finished an answer yet."""
        seconds = self.eta_seconds()
        if seconds is None:
            return "–"
        return ("~" if self._guess else "") + _fmt(seconds)

    def advance(self, note: str, arm: str | None = None, latency_s: float = 0.0) -> None:
        """One answer finished (by `arm`, after `latency_s` seconds)."""
        self.done += 1
        if arm is not None:
            self.remaining[arm] = max(0, self.remaining.get(arm, 0) - 1)
            self.latency[arm] = self.latency.get(arm, 0.0) + latency_s
            self.finished[arm] = self.finished.get(arm, 0) + 1
        self._estimate()
        if self.bar is not None:
            self.bar.update(self.task, advance=1, note=note)
            return
        if self.enabled and self.done == self.total:
            self._line(note)
        self.note = note

    def _estimate(self) -> None:
        now = self.clock()
        elapsed = now - self.started
        eta, unknown = estimate_eta(self.remaining, self.latency, self.finished, elapsed)
        per_answer = _wall_per_answer(self.latency, self.finished, elapsed)
        if eta is None or not per_answer:
            return
        left = [a for a, n in self.remaining.items() if n]
        gap = max([per_answer.get(a, 0.0) for a in left] + [0.0]) or max(per_answer.values())
        self._last = (now, eta, gap, eta / elapsed if elapsed > 0 else 0.0)
        self._guess = bool(unknown)

    def _line(self, note: str = "") -> None:
        now = self.clock()
        self.last_line = now
        self.console.print(
            f"bench: {self.done}/{self.total} ({100 * self.done / max(1, self.total):.0f}%) "
            f"elapsed {_fmt(now - self.started)} ETA {self.eta()} {note}".rstrip(),
            highlight=False,
        )

    def _tick(self) -> None:
        """Plain mode: a line every LINE_EVERY_S, also while no answer finishes."""
        while not self._stop.wait(LINE_EVERY_S):
            if self.done < self.total:
                self._line(getattr(self, "note", ""))

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self.bar is not None:
            self.bar.stop()


class _EtaColumn(ProgressColumn):
    """The ETA column: `Progress.eta()`, computed each time rich draws the bar (10 times a second)."""

    def __init__(self, progress: Progress) -> None:
        super().__init__()
        self.progress = progress

    def render(self, task: Task) -> Text:
        return Text(f"ETA {self.progress.eta()}")


def _fmt(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
