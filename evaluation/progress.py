"""Progress of a bench run on stderr: a rich bar with ETA on a terminal, a plain line every 30 s otherwise."""

from __future__ import annotations

import time
from typing import Any


class Progress:
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

    def __enter__(self) -> Progress:
        if self.live:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

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
