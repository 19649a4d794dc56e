"""The per-arm ETA of a bench run, and the environment saved in its config."""

from __future__ import annotations

import pytest

from evaluation.environment import PACKAGES, package_version, run_environment
from evaluation.progress import Progress, estimate_eta


def test_eta_counts_the_slow_arm_still_to_run() -> None:
    """raw: 10 answers in 10 s of latency (1 s each); selfpara: 5 in 50 s (10 s each); 15 s wall, so
    60 s of latency ran 4 at a time. Left: 10 selfpara answers = 100 s of latency / 4 = 25 s.
    (One overall rate, 15 answers in 15 s, would say 10 s.)"""
    eta, unknown = estimate_eta(
        {"raw": 0, "selfpara": 10}, {"raw": 10.0, "selfpara": 50.0}, {"raw": 10, "selfpara": 5}, 15.0
    )
    assert eta == pytest.approx(25.0) and unknown == []
    eta, _ = estimate_eta({"raw": 10, "selfpara": 0}, {"raw": 10.0, "selfpara": 50.0}, {"raw": 10, "selfpara": 5}, 15.0)
    assert eta == pytest.approx(2.5)  # 10 raw answers · 1 s / 4


def test_eta_guesses_arms_not_started_and_says_so() -> None:
    """sc has not finished an answer: costed at the mean of the others ((1 + 10) / 2 = 5.5 s each)."""
    eta, unknown = estimate_eta(
        {"raw": 0, "selfpara": 0, "sc": 4}, {"raw": 10.0, "selfpara": 50.0}, {"raw": 10, "selfpara": 5}, 15.0
    )
    assert unknown == ["sc"] and eta == pytest.approx(4 * 5.5 / 4)
    assert estimate_eta({"raw": 3}, {}, {}, 0.0) == (None, ["raw"])


def test_progress_tracks_remaining_answers_per_arm() -> None:
    bar = Progress(total=4, done=0, enabled=False, remaining={"raw": 2, "selfpara": 2})
    with bar:
        bar.advance("raw", "raw", 1.0)
        bar.advance("raw", "raw", 1.0)
    assert bar.remaining == {"raw": 0, "selfpara": 2} and bar.finished == {"raw": 2}
    assert bar.eta().startswith("~")  # selfpara has not run yet: a guess, marked


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
