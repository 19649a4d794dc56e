"""`selfpara doctor`: can this machine run the embedded model? Says what is installed and why not.

It reports the CPU's instruction sets, the llama.cpp build, each named embedded model's files and,
in a throwaway process, whether a short answer works (the check every first load makes,
asked again). Exit code 0 when the checked model answers, 1 when it cannot.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import platform
import re
from pathlib import Path
from typing import Any, Optional

import typer

from selfpara.cli import app
from selfpara.cli.common import clean_errors, console, err_console, setup_logging
from selfpara.cli.conventions import Command

BEYOND_PORTABLE = ("AVX512", "AVX_VNNI", "AMX")
"""Instruction sets of llama.cpp's CPU kernels that the README's portable flags leave out: a build
using them was made for one CPU (natively, or it is an earlier such build pip reused from its cache)."""

CPU_FLAGS = ("avx", "avx2", "fma", "f16c", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_int8", "amx_bf16")
"""The instruction sets llama.cpp's CPU kernels choose between."""


def _cpu() -> dict[str, Any]:
    from selfpara.models.engines.probe import cpu_signature

    name, flags, features = (cpu_signature().split(" | ") + ["", "", ""])[:3]
    present = set(f"{flags} {features}".split())
    return {
        "model": name or platform.processor() or platform.machine(),
        "flags": [f for f in CPU_FLAGS if f in present],
    }


def beyond_portable(build: str) -> list[str]:
    """The instruction sets a build reports (`llama_print_system_info`: `AVX512 = 1 | ...`) that the
    portable build leaves out; [] for a portable build."""
    return [
        name
        for name, on in re.findall(r"\b([A-Z][A-Z0-9_]*) = (\d+)", build)
        if on != "0" and name.startswith(BEYOND_PORTABLE)
    ]


def _engine() -> dict[str, Any]:
    from selfpara.models.engines.probe import library_files

    if importlib.util.find_spec("llama_cpp") is None:
        return {"installed": False, "hint": "pip install 'selfpara[local]' (or 'selfpara[qwen]' for the default model)"}
    info: dict[str, Any] = {"installed": True, "version": importlib.metadata.version("llama-cpp-python")}
    libraries = library_files()
    info["library"] = str(libraries[0].parent) if libraries else None
    # Importing the binding only loads the library; the kernels that can fault run on the first answer.
    import llama_cpp

    info["build"] = llama_cpp.llama_print_system_info().decode("utf-8", "replace").strip()
    info["beyond_portable"] = beyond_portable(info["build"])
    return info


def _models() -> dict[str, dict[str, Any]]:
    from selfpara.errors import ConfigError
    from selfpara.models.engines.embedded import QWEN, smollm2_file
    from selfpara.models.engines.parts import locate_parts
    from selfpara.util.envvars import cache_dir

    models: dict[str, dict[str, Any]] = {}
    try:
        models["local/smollm2"] = {"ready": True, "path": str(smollm2_file())}
    except ConfigError as exc:
        models["local/smollm2"] = {"ready": False, "detail": str(exc)}
    target = cache_dir() / QWEN.filename
    try:
        locate_parts(QWEN)
    except ConfigError as exc:
        # the assembled file serves on its own; its parts matter once the cache is cleared
        detail = f"assembled; its part packages are not installed ({exc})" if target.is_file() else str(exc)
        qwen: dict[str, Any] = {"ready": target.is_file(), "detail": detail}
    else:
        qwen = {
            "ready": True,
            "detail": "assembled" if target.is_file() else "22 parts installed; assembled on first use",
        }
    qwen["path"] = str(target)
    models["local/qwen2.5-coder-1.5b"] = qwen
    return models


def _answer_check(model: str) -> dict[str, Any]:
    from selfpara.models.engines.embedded import resolve
    from selfpara.models.engines.probe import REBUILD, cached_probe

    path: Path = resolve(model).locate(lambda msg: err_console().print(f"[dim]{msg}[/dim]"))
    result = cached_probe(path, recheck=True)
    check: dict[str, Any] = {
        "model": model,
        "ok": result.ok,
        "detail": result.detail,
        "seconds": round(result.seconds, 2),
    }
    if result.crashed:
        check["fix"] = REBUILD
    return check


@app.command(cls=Command)
def doctor(
    model: Optional[str] = typer.Option(
        None,
        "--model",
        "-m",
        help="Embedded model whose answer to check; default: the default model if installed, else local/smollm2.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the findings as JSON."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log progress to stderr."),
) -> None:
    """Check that the embedded model can run here: CPU, llama.cpp build, model files, one short answer."""
    setup_logging(verbose)
    from selfpara import __version__

    with clean_errors():
        report: dict[str, Any] = {
            "selfpara": __version__,
            "python": platform.python_version(),
            "platform": f"{platform.system()} {platform.machine()}",
            "cpu": _cpu(),
            "engine": _engine(),
            "models": _models(),
        }
        if model is None:
            ready = [name for name, found in report["models"].items() if found["ready"]]
            model = "local/qwen2.5-coder-1.5b" if "local/qwen2.5-coder-1.5b" in ready else (ready or [None])[0]
        if report["engine"]["installed"] and model is not None:
            report["answer"] = _answer_check(model)
        else:
            report["answer"] = {"model": model, "ok": False, "detail": "no engine or no model to check"}
    if as_json:
        typer.echo(json.dumps(report, indent=2))
    else:
        _print(report)
    if not report["answer"]["ok"]:
        raise typer.Exit(1)


def _print(report: dict[str, Any]) -> None:
    from rich.markup import escape as e

    from selfpara.models.engines.probe import REBUILD

    out = console(highlight=False)  # the findings are this command's output: stdout
    out.print(e(f"selfpara {report['selfpara']} · Python {report['python']} · {report['platform']}"))
    cpu = report["cpu"]
    flags = " ".join(cpu["flags"]) or "none of " + ", ".join(CPU_FLAGS)
    out.print(f"[bold]CPU[/bold]     {e(cpu['model'])} · reports {flags}")
    engine = report["engine"]
    if engine["installed"]:
        out.print(f"[bold]engine[/bold]  llama-cpp-python {e(engine['version'])} at {e(str(engine['library']))}")
        out.print(f"        built for: {e(engine['build'])}")
        beyond = engine.get("beyond_portable") or []
        if beyond:
            out.print(
                f"        [yellow]not the portable build[/yellow]: it uses {e(', '.join(beyond))}, so it runs only on "
                "CPUs that have them (a native build, or one pip reused from its cache: CMAKE_ARGS is not part of "
                f"pip's cache key); the portable one: {e(REBUILD)}"
            )
        else:
            out.print("        portable: uses no AVX-512, AVX-VNNI or AMX kernels (the README's CMAKE_ARGS)")
    else:
        out.print(f"[bold]engine[/bold]  [red]not installed[/red]: {e(engine['hint'])}")
    for name, found in report["models"].items():
        mark = "[green]ready[/green]" if found["ready"] else "[yellow]missing[/yellow]"
        out.print(f"[bold]model[/bold]   {e(name)}: {mark} · {e(str(found.get('detail') or found.get('path')))}")
    answer = report["answer"]
    if answer["ok"]:
        out.print(f"[bold]answer[/bold]  [green]ok[/green] · {e(answer['model'])} in {answer['seconds']} s")
    else:
        out.print(f"[bold]answer[/bold]  [red]failed[/red] · {e(str(answer['model']))}: {e(answer['detail'])}")
        if "fix" in answer:
            out.print(f"        fix: {e(answer['fix'])}")
