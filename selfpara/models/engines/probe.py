"""Can the compiled llama.cpp library run on this CPU? Asked once per build, CPU and model file, in a
throwaway process: a build that faults on the CPU dies by a signal no process can catch. Only a pass or
a crash is cached; other failures are asked again. See docs/models.md#the-engine.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import platform
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from selfpara.errors import ConfigError
from selfpara.models.engines.parts import cache_dir

log = logging.getLogger(__name__)

README_CMAKE_ARGS = "-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DLLAVA_BUILD=OFF"
"""The README's build flags: kernels every x86-64 CPU with AVX2 runs (2013 on), AMX-reporting ones included,
and no multimodal library (selfpara answers text; `benchmarks/bench_install.py`: 17% less compile time)."""

REBUILD = f'CMAKE_ARGS="{README_CMAKE_ARGS}" pip install --no-cache-dir --force-reinstall llama-cpp-python'
"""The one command that replaces a build this machine cannot run (pip would reuse its cached wheel)."""

PROBE_TIMEOUT_S = 180.0
"""A probe loads the model once and decodes a few tokens: seconds on 2 cores, minutes only when swapping."""

_PROBE_PROMPT = " ".join(["The quick brown fox jumps over the lazy dog."] * 6)
"""About 60 tokens: enough rows for llama.cpp to take its batched matrix kernels."""


@dataclass(frozen=True)
class ProbeResult:
    """What one probe of the engine found."""

    ok: bool
    detail: str
    """'ok', or what went wrong, in one line."""
    seconds: float
    cached: bool = False
    crashed: bool = False
    """The child died of a signal (SIGILL, SIGSEGV, ...): the build cannot run on this CPU."""


def library_files() -> list[Path]:
    """The shared libraries of the installed llama-cpp-python (found without importing it)."""
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        return []
    root = Path(next(iter(spec.submodule_search_locations)))
    return sorted(
        p for p in root.rglob("*") if p.is_file() and (p.suffix in {".so", ".dylib", ".dll"} or ".so." in p.name)
    )


def cpu_signature() -> str:
    """The CPU's model name and feature flags, as the kernel reports them (empty where it does not)."""
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return platform.processor() or platform.machine()
    wanted = ("model name", "flags", "Features")
    lines = {line.split(":", 1)[0].strip(): line.split(":", 1)[1].strip() for line in text.splitlines() if ":" in line}
    return " | ".join(lines.get(key, "") for key in wanted)


def fingerprint(model_path: Path) -> str:
    """A key that changes when the library, the CPU or the model file changes."""
    digest = hashlib.sha256()
    for path in library_files():
        stat = path.stat()
        digest.update(f"{path}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    digest.update(cpu_signature().encode())
    try:
        stat = model_path.stat()
        digest.update(f"{model_path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    except OSError:
        digest.update(str(model_path).encode())
    return digest.hexdigest()[:32]


def probe_command(model_path: Path) -> list[str]:
    """The child's command line (tests replace it with one that dies the way a bad build does)."""
    return [sys.executable, "-m", "selfpara.models.engines.probe", str(model_path)]


def run_probe(
    model_path: Path, command: Sequence[str] | None = None, timeout_s: float = PROBE_TIMEOUT_S
) -> ProbeResult:
    """Load `model_path` in a child process and decode a few tokens; never raises."""
    argv = list(command) if command is not None else probe_command(model_path)
    started = time.perf_counter()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, errors="replace")
    except subprocess.TimeoutExpired:
        return ProbeResult(False, f"the probe did not finish in {timeout_s:.0f}s", time.perf_counter() - started)
    except OSError as exc:
        return ProbeResult(False, f"the probe could not start: {exc}", time.perf_counter() - started)
    seconds = time.perf_counter() - started
    if done.returncode == 0:
        return ProbeResult(True, "ok", seconds)
    return ProbeResult(False, _describe_exit(done.returncode, done.stderr), seconds, crashed=done.returncode < 0)


def _describe_exit(returncode: int, stderr: str) -> str:
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        if -returncode == signal.SIGILL:
            return f"died with an illegal instruction ({name})"
        return f"died with {name}"
    tail = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    return f"exited with code {returncode}" + (f": {tail[-1][:300]}" if tail else "")


def _verdicts_file() -> Path:
    return cache_dir() / "engine-checks.json"


def _read_verdicts() -> dict[str, dict[str, object]]:
    try:
        data = json.loads(_verdicts_file().read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_verdict(key: str, result: ProbeResult) -> None:
    path = _verdicts_file()
    verdicts = _read_verdicts()
    verdicts[key] = {k: v for k, v in asdict(result).items() if k != "cached"}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(verdicts, indent=1, sort_keys=True))
        tmp.replace(path)
    except OSError as exc:  # a read-only cache only costs a probe next time
        log.warning("could not record the engine check in %s: %s", path, exc)


def cached_probe(
    model_path: Path,
    *,
    recheck: bool = False,
    command: Sequence[str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> ProbeResult:
    """The engine's verdict for `model_path`: from the cache, else from a fresh probe (then cached if final).

    Args:
        model_path: the GGUF file the engine is about to load.
        recheck: probe again even when a verdict is cached.
        command: the child's command line (default `probe_command(model_path)`).
        progress: told when a probe starts (it takes one model load).
    """
    key = fingerprint(model_path)
    if not recheck:
        seen = _read_verdicts().get(key)
        if isinstance(seen, dict) and isinstance(seen.get("ok"), bool):
            detail, seconds = str(seen.get("detail", "")), _seconds(seen.get("seconds"))
            return ProbeResult(bool(seen["ok"]), detail, seconds, cached=True, crashed=bool(seen.get("crashed")))
    message = f"checking that llama.cpp runs on this CPU with {model_path.name} (once per build and model)"
    log.info("%s", message)
    if progress is not None:
        progress(message)
    result = run_probe(model_path, command)
    if result.ok or result.crashed:
        _write_verdict(key, result)
    return result


def _seconds(value: object) -> float:
    return float(value) if isinstance(value, (int, float)) else 0.0


def check_engine(
    model_path: Path, *, command: Sequence[str] | None = None, progress: Callable[[str], None] | None = None
) -> None:
    """Raise ConfigError, naming the fix, when llama.cpp cannot answer with `model_path` on this machine."""
    result = cached_probe(model_path, command=command, progress=progress)
    if result.ok:
        return
    if result.crashed:
        raise ConfigError(
            f"llama-cpp-python crashed on its first answer with {model_path.name} ({result.detail}): a build for "
            f"this CPU's reported instructions (AMX on some machines) cannot run them; rebuild it portably: {REBUILD}"
        )
    raise ConfigError(f"llama.cpp cannot answer with {model_path.name} on this machine: {result.detail}")


def _child(model_path: str) -> None:
    """The probe itself: load, evaluate a prompt of ~60 tokens (the batched matrix kernels, where AMX is
    used), decode two more (the one-row kernels)."""
    from llama_cpp import Llama

    llm = Llama(model_path=model_path, n_ctx=256, n_threads=1, n_threads_batch=1, verbose=False)
    tokens = llm.tokenize(_PROBE_PROMPT.encode(), add_bos=True)
    for i, _token in enumerate(llm.generate(tokens, temp=0.0, reset=True)):
        if i >= 1:
            break
    llm.close()


if __name__ == "__main__":
    _child(sys.argv[1])
