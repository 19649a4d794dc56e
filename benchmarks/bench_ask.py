"""Wall time of `selfpara ask` at k=3 on the embedded model: whole command (process start and
model load included), and in-process with the load timed separately from the answer.

Run: python benchmarks/bench_ask.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

from _common import write

QUESTION = "What is the capital of Italy?"


def whole_command() -> float:
    exe = shutil.which("selfpara")
    cmd = [exe] if exe else [sys.executable, "-m", "selfpara"]
    started = time.perf_counter()
    subprocess.run(
        [*cmd, "ask", QUESTION, "-k", "3", "--max-tokens", "48"],
        check=True,
        capture_output=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    return time.perf_counter() - started


def in_process() -> dict:
    from selfpara import SelfParaphraser
    from selfpara.models.engines.llamacpp import llamacpp_model
    from selfpara.models.names import EMBEDDED_MODEL

    started = time.perf_counter()
    llamacpp_model(EMBEDDED_MODEL).load()
    load_s = time.perf_counter() - started
    sp = SelfParaphraser(k=3, max_tokens=48)
    started = time.perf_counter()
    result = sp.answer(QUESTION)
    return {
        "load_s": load_s,
        "answer_s": time.perf_counter() - started,
        "calls": result.usage.calls,
        "k_kept": result.k_kept,
        "completion_tokens": result.usage.completion_tokens,
        "stages": result.timings.model_dump(),
    }


def main() -> None:
    load_avg = os.getloadavg()[0]
    total = whole_command()
    parts = in_process()
    figures = {"k": 3, "load_average_1m": load_avg, "selfpara_ask_total_s": total, **parts}
    print(f"selfpara ask (k=3), whole command: {total:.1f}s")
    print(
        f"in process: load {parts['load_s']:.1f}s, answer {parts['answer_s']:.1f}s "
        f"({parts['calls']} calls, {parts['completion_tokens']} tokens, kept {parts['k_kept']}/3)"
    )
    print("load average (1 min) at start:", load_avg)
    print("written to", write("ask", figures))


if __name__ == "__main__":
    main()
