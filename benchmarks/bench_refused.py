"""How long `selfpara ask` takes to say that an upstream refuses the connection (issue 46: within 3 s,
the URL named), for each way a model is reached: Ollama (litellm's own client), an `openai/...` model
through litellm, and a vLLM name through the http backend. Each is a fresh process against a loopback
port nothing listens on, timed from start to exit, median of --runs.

    python benchmarks/bench_refused.py [--runs 3]      (figures in benchmarks/results/refused.json)
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import serve_env, write  # noqa: E402

QUESTION = "What is the capital of France?"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    base = f"http://127.0.0.1:{closed_port()}"
    cases = {
        "ollama (litellm)": (["--model", "ollama/llama3"], {"OLLAMA_API_BASE": base}),
        "openai via litellm": (["--model", "openai/m", "--api-base", base + "/v1", "--transport", "litellm"], {}),
        "hosted_vllm via http": (["--model", "hosted_vllm/m", "--api-base", base + "/v1"], {}),
    }
    figures: dict[str, dict] = {}
    for name, (options, env) in cases.items():
        seconds, said = [], ""
        for _ in range(args.runs):
            started = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "selfpara", "ask", QUESTION, *options],
                env={**serve_env(), **env},
                capture_output=True,
                text=True,
                timeout=120,
            )
            seconds.append(time.perf_counter() - started)
            said = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ""
        figures[name] = {"median_s": round(statistics.median(seconds), 2), "exit": done.returncode, "said": said}
        print(f"{name:22s} {figures[name]['median_s']:5.2f} s  exit {done.returncode}  {said}")
    print("written to", write("refused", figures))


if __name__ == "__main__":
    main()
