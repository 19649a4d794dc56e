"""The engine check: a llama.cpp build this CPU cannot run is a one-line error naming the fix, not a dead process."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from selfpara.errors import ConfigError
from selfpara.models.engines import probe

# Children that end the way a bad build, a broken file and a good build do.
DIES_OF_SIGILL = [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGILL)"]
DIES_OF_SIGSEGV = [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"]
FAILS = [sys.executable, "-c", "import sys; sys.exit('llama_model_load: error loading model: bad magic')"]
PASSES = [sys.executable, "-c", "pass"]


@pytest.fixture()
def model_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SELFPARA_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "m.gguf"
    path.write_bytes(b"GGUF")
    return path


def test_illegal_instruction_is_a_clear_error_naming_the_portable_rebuild(model_file: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        probe.check_engine(model_file, command=DIES_OF_SIGILL)
    message = str(caught.value)
    assert "illegal instruction" in message and "SIGILL" in message
    assert "-DGGML_NATIVE=OFF" in message and "--no-cache-dir --force-reinstall" in message
    assert "\n" not in message


def test_a_segfault_is_the_same_verdict(model_file: Path) -> None:
    # A native build on this project's AMX-reporting CPUs died with SIGSEGV, not SIGILL.
    with pytest.raises(ConfigError) as caught:
        probe.check_engine(model_file, command=DIES_OF_SIGSEGV)
    assert (
        "crashed" in str(caught.value) and "SIGSEGV" in str(caught.value) and "--force-reinstall" in str(caught.value)
    )
    assert probe.cached_probe(model_file, command=PASSES).crashed  # remembered: a crash does not change


def test_the_verdict_is_cached_per_build_and_model(model_file: Path) -> None:
    probe.check_engine(model_file, command=PASSES)
    # A cached pass is not asked again: a child that would die is never started.
    probe.check_engine(model_file, command=DIES_OF_SIGILL)
    recorded = json.loads((model_file.parent / "cache" / "engine-checks.json").read_text())
    assert [v["ok"] for v in recorded.values()] == [True]
    # A changed model file is a new pair, checked again.
    model_file.write_bytes(b"GGUF v2")
    with pytest.raises(ConfigError, match="illegal instruction"):
        probe.check_engine(model_file, command=DIES_OF_SIGILL)  # a crash of the new pair


def test_a_cached_failure_fails_fast_and_recheck_asks_again(model_file: Path) -> None:
    with pytest.raises(ConfigError):
        probe.check_engine(model_file, command=DIES_OF_SIGILL)
    assert probe.cached_probe(model_file, command=PASSES).cached is True
    assert probe.cached_probe(model_file, command=PASSES).ok is False
    fresh = probe.cached_probe(model_file, recheck=True, command=PASSES)
    assert fresh.ok and not fresh.cached


def test_other_failures_say_what_the_child_said_and_are_not_cached(model_file: Path) -> None:
    with pytest.raises(ConfigError, match="bad magic"):
        probe.check_engine(model_file, command=FAILS)
    assert not (model_file.parent / "cache" / "engine-checks.json").exists()
    probe.check_engine(model_file, command=PASSES)  # a later good run is not blocked


def test_a_hung_child_is_a_failure_not_a_hang(model_file: Path) -> None:
    result = probe.run_probe(model_file, [sys.executable, "-c", "import time; time.sleep(30)"], timeout_s=1)
    assert not result.ok and "did not finish" in result.detail


def test_the_fingerprint_follows_the_cpu(model_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = probe.fingerprint(model_file)
    monkeypatch.setattr(probe, "cpu_signature", lambda: "another cpu | fpu sse2")
    assert probe.fingerprint(model_file) != before
