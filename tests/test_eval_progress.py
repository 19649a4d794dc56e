"""The per-arm ETA of a bench run, and the environment saved in its config."""

from __future__ import annotations

import threading

import pytest

from evaluation.environment import PACKAGES, package_version, run_environment
from evaluation.progress import Progress, estimate_eta
from selfpara.result import Completion
from tests.helpers.clock import FakeClock


def test_eta_counts_each_arm_at_its_own_pace() -> None:
    """raw: 10 answers in 10 s of its own wall time (1 s each); selfpara: 5 in 50 s (10 s each).
    Left: 10 selfpara answers = 100 s. (One overall rate, 15 answers in 60 s, would say 40 s.)"""
    eta, unknown = estimate_eta({"raw": 0, "selfpara": 10}, {"raw": 10.0, "selfpara": 50.0}, {"raw": 10, "selfpara": 5})
    assert eta == pytest.approx(100.0) and unknown == []
    eta, _ = estimate_eta({"raw": 10, "selfpara": 0}, {"raw": 10.0, "selfpara": 50.0}, {"raw": 10, "selfpara": 5})
    assert eta == pytest.approx(10.0)  # 10 raw answers · 1 s


def test_eta_guesses_arms_not_started_and_says_so() -> None:
    """sc has not finished an answer: costed at the mean of the others' paces ((1 + 10) / 2 = 5.5 s each)."""
    eta, unknown = estimate_eta(
        {"raw": 0, "selfpara": 0, "sc": 4}, {"raw": 10.0, "selfpara": 50.0}, {"raw": 10, "selfpara": 5}
    )
    assert unknown == ["sc"] and eta == pytest.approx(4 * 5.5)
    assert estimate_eta({"raw": 3}, {}, {}) == (None, ["raw"])


def test_progress_tracks_remaining_answers_per_arm() -> None:
    bar = Progress(total=4, done=0, enabled=False, remaining={"raw": 2, "selfpara": 2})
    with bar:
        for _ in range(2):
            bar.start("raw")
            bar.advance("raw")
    assert bar.remaining == {"raw": 0, "selfpara": 2} and bar.finished == {"raw": 2}
    assert bar.eta().startswith("~")  # selfpara has not run yet: a guess, marked


def test_wall_time_is_shared_among_the_arms_in_flight() -> None:
    clock = FakeClock(0.0)
    bar = Progress(total=4, done=0, enabled=False, remaining={"raw": 2, "selfpara": 2}, clock=clock)
    bar.start("raw")
    clock.now = 4.0
    bar.start("selfpara")  # raw alone for 4 s, then both for 6 s
    clock.now = 10.0
    bar.advance("raw")
    clock.now = 13.0
    bar.advance("selfpara")
    assert bar.active_s == pytest.approx({"raw": 7.0, "selfpara": 6.0})


def test_cache_hits_are_counted_per_arm_in_the_note() -> None:
    bar = Progress(total=3, done=0, enabled=False, remaining={"raw": 1, "selfpara": 2})
    for arm, cached in (("selfpara", 2), ("selfpara", 1), ("raw", 0)):
        bar.start(arm)
        bar.advance(arm, cached=cached)
    assert bar.note == "raw · cached calls: raw 0, selfpara 3"  # not 3 under the last arm's name


def test_run_environment_names_commit_packages_and_machine() -> None:
    env = run_environment()
    assert set(env) >= {"git_commit", "python", "platform", "cpu_count", "packages"}
    assert set(env["packages"]) == set(PACKAGES) and env["packages"]["selfpara"]
    assert env["git_commit"] is None or len(env["git_commit"].split("+")[0]) == 40
    assert package_version("surely-not-an-installed-distribution") is None


def test_git_commit_only_for_tracked_sources(tmp_path) -> None:
    """A package directory git does not track (a wheel in a venv inside some repo) has no commit."""
    import subprocess

    from evaluation.environment import git_commit

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    assert git_commit(tmp_path / "pkg") is None


def scripted_run() -> list[tuple[float, str, float]]:
    """One answer at a time, raw (1 s) and selfpara (3 s) alternating, 5 of each: (finish time, arm, latency)."""
    t, out = 0.0, []
    for _ in range(5):
        for arm, cost in (("raw", 1.0), ("selfpara", 3.0)):
            t += cost
            out.append((t, arm, cost))
    return out


def test_eta_of_a_scripted_slow_run_is_the_time_left_and_counts_down_between_answers() -> None:
    clock = FakeClock(100.0)
    start = clock.now
    schedule = scripted_run()
    end = schedule[-1][0]
    bar = Progress(total=10, done=0, enabled=False, remaining={"raw": 5, "selfpara": 5}, clock=clock)
    assert bar.eta() == "–"  # nothing finished: no estimate
    with bar:
        for i, (finished, arm, latency) in enumerate(schedule[:-1]):
            clock.now = start + finished - latency
            bar.start(arm)
            clock.now = start + finished
            bar.advance(arm)
            if i == 0:
                assert bar.eta().startswith("~")  # selfpara has not finished one yet: a guess
                continue
            # from the first selfpara answer on, every instant until the next answer reads the true time left
            for step in (0.0, 0.5, 1.0):
                clock.now = start + finished + min(step, schedule[i + 1][0] - finished)
                left = end - (clock.now - start)
                assert bar.eta_seconds() == pytest.approx(left), (i, step)
                assert not bar.eta().startswith("~")


def test_a_stalled_run_shows_a_growing_eta_not_a_frozen_one() -> None:
    clock = FakeClock(100.0)
    bar = Progress(total=8, done=0, enabled=False, remaining={"raw": 8}, clock=clock)
    bar.start("raw")
    clock.now += 29.0
    bar.advance("raw")  # 1 of 8 after 29 s: 7 left at 29 s each = 203 s
    assert bar.eta_seconds() == pytest.approx(203.0)
    clock.now += 29.0
    assert bar.eta_seconds() == pytest.approx(174.0)  # counting down while the next is not yet due
    clock.now += 58.0  # 1:56 elapsed and still 1 of 8: the next answer is 58 s late
    late = bar.eta_seconds()
    assert late is not None and late > 174.0  # the estimate grows with the stall
    assert late == pytest.approx(174.0 + 58.0 * 7)  # at the rate the throughput estimate grows


def test_the_bar_redraws_its_eta_between_answers() -> None:
    from rich.progress import Task

    from evaluation.progress import _EtaColumn

    clock = FakeClock(100.0)
    bar = Progress(total=4, done=0, enabled=False, remaining={"raw": 4}, clock=clock)
    bar.start("raw")
    clock.now += 10.0
    bar.advance("raw")
    column = _EtaColumn(bar)
    task = Task(0, "bench", 4, 1, _get_time=clock)  # type: ignore[arg-type]
    first = column.render(task).plain
    clock.now += 5.0
    assert first == "ETA 0:00:30" and column.render(task).plain == "ETA 0:00:25"


class PlainLines:
    """Counts the plain progress lines as the ticker thread prints them, so a test can wait for some."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from evaluation import progress

        self.printed: list[int] = []  # answers done at each line
        self.state = threading.Condition()
        line = progress.Progress._line

        def counted(bar: Progress, note: str = "") -> None:
            line(bar, note)
            with self.state:
                self.printed.append(bar.done)
                self.state.notify_all()

        monkeypatch.setattr(progress.Progress, "_line", counted)
        monkeypatch.setattr(progress, "LINE_EVERY_S", 0.01)

    def wait_for(self, lines: int, done: int) -> bool:
        """Whether `lines` lines were printed with at least `done` answers done, waiting up to 30 s for them."""
        with self.state:
            return self.state.wait_for(lambda: sum(d >= done for d in self.printed) >= lines, 30)


def test_plain_progress_prints_lines_while_no_answer_finishes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    printed = PlainLines(monkeypatch)
    with Progress(total=3, done=0, enabled=True, remaining={"raw": 3}) as bar:
        assert not bar.live  # stderr is captured: not a terminal
        bar.start("raw")
        bar.advance("raw")
        assert printed.wait_for(lines=2, done=1)  # the ticker's lines, while the next answer does not come
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("bench: 1/3")]
    assert len(lines) >= 2 and all("ETA" in line for line in lines)


def test_a_bench_on_a_slow_fake_prints_its_progress_with_an_eta(
    tmp_path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import asyncio

    from evaluation.datasets import save_items
    from evaluation.records import Item, ItemVariant
    from evaluation.runner import BenchConfig, RunOptions, run_bench
    from selfpara.models.client import ModelClient
    from selfpara.testing import FakeBackend

    printed = PlainLines(monkeypatch)

    class SlowThird(FakeBackend):
        """The third answer comes only once a progress line has been printed after the second."""

        async def complete(self, model: str, messages: list, params: dict) -> Completion:
            if len(self.calls) == 2:
                assert await asyncio.to_thread(printed.wait_for, lines=1, done=2)
            return await super().complete(model, messages, params)

    items = [
        Item(id=f"q{i}", gold=["Paris"], variants=[ItemVariant(id=0, question=f"Capital of France {i}?")])
        for i in range(6)
    ]
    data = save_items(items, tmp_path / "data.jsonl")
    client = ModelClient(backend=SlowThird(lambda *a: "Paris"), retries=0, timeout_s=30)
    config = BenchConfig(dataset=str(data), arms=["raw"])
    asyncio.run(run_bench(config, tmp_path / "run", RunOptions(client=client, progress=True, concurrency=1)))
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("bench: ")]
    assert lines[0] == "bench: 0/6 samples done, 6 to run" and lines[-1].startswith("bench: 6/6 (100%)")
    etas = [line for line in lines[1:-1] if line.startswith("bench: 2/6") and "ETA 0:00:0" in line]
    assert etas, lines  # lines came while it ran, each with an ETA under 10 s
