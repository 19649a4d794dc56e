"""Progress of a bench run on stderr: a rich bar with ETA on a terminal, a plain line every 30 s otherwise.

The ETA comes from each arm's own pace: the wall time during which the arm had answers in
flight (shared equally among the arms in flight at the same moment), over the answers it
finished. The answers still to run cost their arm's pace; an arm that has not finished one
yet is costed at the mean pace of the others (a guess, marked `~`). The job order runs
arms whose answers cost very different times (raw: one call; selfpara: k+2) one after the
other, so one overall rate is far off while the cheap arm runs first, and a rate from
latencies counts the queueing behind other arms' calls. Between completions the ETA counts
down; once the next completion is overdue (later than the slowest remaining arm's pace) it
grows again at the rate the estimate grows, so a stalled run never shows an ETA that stands
still or runs out.

The note beside the bar names the arm that just finished an answer and the calls each arm
had answered from the cache of earlier runs, as the report counts them (a call one arm
shares with another in the same run is not a cached one).
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
    remaining: Mapping[str, int], active_s: Mapping[str, float], done: Mapping[str, int]
) -> tuple[float | None, list[str]]:
    """Seconds left at each arm's own pace, and the arms with work left but no finished answer yet.

    Args:
        remaining: answers still to run, per arm.
        active_s: wall seconds each arm had answers in flight (its share when others had too).
        done: how many answers this run finished, per arm.

    An arm with no finished answer is costed at the mean pace of the others (named in the
    second value). None before any answer finished.
    """
    pace = arm_pace(active_s, done)
    unknown = [a for a, n in remaining.items() if n and a not in pace]
    if not pace:
        return None, unknown
    guess = statistics.fmean(pace.values())
    return sum(n * pace.get(a, guess) for a, n in remaining.items()), unknown


def arm_pace(active_s: Mapping[str, float], done: Mapping[str, int]) -> dict[str, float]:
    """Each arm's wall seconds per finished answer (see `estimate_eta`); empty before any finished."""
    return {a: active_s.get(a, 0.0) / n for a, n in done.items() if n > 0}


def countdown(eta_at_last: float, since_last: float, expected_gap: float, growth: float) -> float:
    """The ETA `since_last` seconds after the last completion, whose estimate was `eta_at_last`.

    Args:
        eta_at_last: the estimate when the last answer finished.
        since_last: seconds since then.
        expected_gap: how long the next completion may take before it is overdue.
        growth: how fast the estimate grows per overdue second (work left / work done).
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
        clock: seconds, what the ETA is timed with (tests pass a fake one).
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
        self.console.soft_wrap = not self.console.is_terminal  # a plain line is never broken (as the CLI's)
        self.enabled = enabled
        self.live = enabled and self.console.is_terminal
        self.clock = clock
        self.started = clock()
        self.last_line = 0.0
        self.start_done = done
        self.bar: Any = None
        self.remaining: dict[str, int] = dict(remaining or {})
        self.in_flight: dict[str, int] = {}
        self.active_s: dict[str, float] = {}
        self.finished: dict[str, int] = {}
        self.cached: dict[str, int] = {arm: 0 for arm in self.remaining}
        self.note = ""
        self._mark = self.started  # the moment up to which active time is shared out
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

    def start(self, arm: str) -> None:
        """An answer of `arm` started."""
        self._share_time()
        self.in_flight[arm] = self.in_flight.get(arm, 0) + 1

    def advance(self, arm: str, *, cached: int = 0) -> None:
        """An answer of `arm` finished, `cached` of its calls answered from the cache of an earlier run."""
        self._share_time()
        self.in_flight[arm] = max(0, self.in_flight.get(arm, 0) - 1)
        self.done += 1
        self.remaining[arm] = max(0, self.remaining.get(arm, 0) - 1)
        self.finished[arm] = self.finished.get(arm, 0) + 1
        self.cached[arm] = self.cached.get(arm, 0) + cached
        self.note = arm
        if any(self.cached.values()):
            self.note += " · cached calls: " + ", ".join(f"{a} {n}" for a, n in self.cached.items())
        self._estimate()
        if self.bar is not None:
            self.bar.update(self.task, advance=1, note=self.note)
            return
        if self.enabled and self.done == self.total:
            self._line(self.note)

    def _share_time(self) -> None:
        """Share the wall time since the last event equally among the arms with answers in flight."""
        now = self.clock()
        busy = [a for a, n in self.in_flight.items() if n > 0]
        for arm in busy:
            self.active_s[arm] = self.active_s.get(arm, 0.0) + (now - self._mark) / len(busy)
        self._mark = now

    def _estimate(self) -> None:
        now = self.clock()
        eta, unknown = estimate_eta(self.remaining, self.active_s, self.finished)
        pace = arm_pace(self.active_s, self.finished)
        if eta is None or not pace:
            return
        left = [a for a, n in self.remaining.items() if n]
        gap = max([pace.get(a, 0.0) for a in left] + [0.0]) or max(pace.values())
        elapsed = now - self.started
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
                self._line(self.note)

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
