"""The cold install of llama-cpp-python (the embedded engine), timed side by side: today's README
flags against candidates that should build less, each into a throwaway virtualenv with pip's
cache off (`--no-cache-dir`, so that nothing built before is reused), in one run on one machine.

Variants (pick with --variants):
- `readme`: the README's flags (`selfpara.models.engines.probe.README_CMAKE_ARGS`): portable CPU
  kernels, and `LLAVA_BUILD=OFF` (the multimodal library, `tools/mtmd`: llama-cpp-python builds it
  unless told not to; selfpara answers text only and `llama_cpp` loads it only for image chat
  handlers; taken into the README after two rounds of this benchmark measured 0.835 and 0.819 of the
  build with it);
- `lean`: the same plus the tests, examples, tools and server of llama.cpp and ggml off (already off
  when llama.cpp is built as llama-cpp-python's subproject; named so that a change of those defaults
  cannot add them back);
- `wheel-index`: a prebuilt CPU wheel from llama-cpp-python's own wheel index, where that index
  is reachable (it is not on a machine that reaches PyPI only: then the variant is recorded as
  unreachable, not timed).

For each: wall seconds and the CPU seconds of pip and its children, whether it installed, and
what the built library reports (`llama_print_system_info`: a portable build names no AVX-512 or
AMX). With --repeat N the variants alternate (A B A B ...), so that the machine's load falls on
both alike. Writes benchmarks/results/install.json (or --out).

    python benchmarks/bench_install.py                                   # minutes: compiles llama.cpp
    python benchmarks/bench_install.py --spec six --variants readme      # the machinery, in seconds
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _common import write  # noqa: E402

from selfpara.models.engines.probe import README_CMAKE_ARGS  # noqa: E402

WHEEL_INDEX = "https://abetlen.github.io/llama-cpp-python/whl/cpu"
LEAN_EXTRA = (
    "-DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF "
    "-DLLAMA_BUILD_SERVER=OFF -DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF"
)
VARIANTS: dict[str, dict[str, Any]] = {
    "readme": {"cmake_args": README_CMAKE_ARGS, "pip": ["--no-binary", "{name}"]},
    "lean": {"cmake_args": f"{README_CMAKE_ARGS} {LEAN_EXTRA}", "pip": ["--no-binary", "{name}"]},
    "wheel-index": {"cmake_args": None, "pip": ["--only-binary", "{name}", "--extra-index-url", WHEEL_INDEX]},
}
_SYSTEM_INFO = "import llama_cpp; print(llama_cpp.llama_print_system_info().decode())"


def reachable(url: str, timeout_s: float = 10.0) -> bool:
    """Whether `url` answers at all (any HTTP status) within `timeout_s`."""
    try:
        with urllib.request.urlopen(url, timeout=timeout_s):
            return True
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def install_once(variant: str, spec: str, work: Path) -> dict[str, Any]:
    """One cold install of `spec` under `variant` into a new virtualenv below `work`: its figures."""
    how = VARIANTS[variant]
    name = spec.split("=")[0].split("<")[0].split(">")[0].strip()
    if variant == "wheel-index" and not reachable(WHEEL_INDEX + "/"):
        return {"variant": variant, "ok": False, "skipped": f"{WHEEL_INDEX} is not reachable from this machine"}
    venv = work / f"venv-{variant}-{time.monotonic_ns()}"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    env = {**os.environ, "PIP_NO_CACHE_DIR": "1"}
    env.pop("CMAKE_ARGS", None)
    if how["cmake_args"]:
        env["CMAKE_ARGS"] = how["cmake_args"]
    command = [str(python), "-m", "pip", "install", "--no-cache-dir", *(a.format(name=name) for a in how["pip"]), spec]
    cpu0, wall0 = _children_cpu_s(), time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - wall0, _children_cpu_s() - cpu0
    out: dict[str, Any] = {
        "variant": variant,
        "cmake_args": how["cmake_args"],
        "command": " ".join(command[1:]),
        "ok": done.returncode == 0,
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
    }
    if done.returncode != 0:
        out["error"] = done.stderr[-2000:]
    elif name == "llama-cpp-python":
        info = subprocess.run([str(python), "-c", _SYSTEM_INFO], capture_output=True, text=True)
        out["system_info"] = info.stdout.strip() or info.stderr[-500:]
        lib = next(venv.glob("lib/python*/site-packages/llama_cpp/lib"), None)
        out["libraries"] = sorted(p.name for p in lib.iterdir()) if lib else []
    shutil.rmtree(venv, ignore_errors=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="llama-cpp-python", help="what to install (default: llama-cpp-python)")
    parser.add_argument(
        "--variants", default="readme,lean,wheel-index", help="comma-separated, of: " + ", ".join(VARIANTS)
    )
    parser.add_argument("--repeat", type=int, default=1, help="rounds, the variants alternating within each")
    parser.add_argument("--out", default="install", help="result name under benchmarks/results (default: install)")
    args = parser.parse_args()
    chosen = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in chosen if v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variant(s) {unknown}: use {', '.join(VARIANTS)}")
    runs = []
    with tempfile.TemporaryDirectory(prefix="bench-install-") as tmp:
        for round_ in range(args.repeat):
            for variant in chosen if round_ % 2 == 0 else list(reversed(chosen)):
                result = install_once(variant, args.spec, Path(tmp))
                print(
                    f"{variant}: "
                    + ", ".join(f"{k} {v}" for k, v in result.items() if k in ("ok", "wall_s", "cpu_s", "skipped"))
                )
                runs.append({"round": round_, **result})
    timed = {v: [r["wall_s"] for r in runs if r["variant"] == v and r["ok"]] for v in chosen}
    mean = {v: round(sum(t) / len(t), 1) for v, t in timed.items() if t}
    ratios = {f"{v}/readme": round(mean[v] / mean["readme"], 3) for v in mean if v != "readme" and "readme" in mean}
    path = write(
        args.out,
        {
            "spec": args.spec,
            "cpus": os.cpu_count(),
            "cpu": platform.processor() or platform.machine(),
            "python": platform.python_version(),
            "runs": runs,
            "mean_wall_s": mean,
            "ratio_wall": ratios,
        },
    )
    print(f"mean wall seconds {mean}; ratios {ratios}; written to {path}")


if __name__ == "__main__":
    main()
