"""inspect-ai through the proxy: the commands docs/proxy.md gives, on a 3-sample task."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .harness import QUESTIONS, TARGET, Proxy, harness_env, needs, wrapped_with_k

pytestmark = pytest.mark.integration
needs("inspect_ai", "inspect-ai")  # the whole module skips, before the proxy starts

TASK = f"""
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.solver import generate


@task
def capitals() -> Task:
    return Task(dataset=[Sample(input=q, target={TARGET!r}) for q in {QUESTIONS!r}],
                solver=generate(), scorer=includes())
"""


def run_inspect(proxy: Proxy, tmp_path: Path, *flags: str) -> object:
    """`inspect eval capitals.py --model openai/llama3.2 FLAGS` against the proxy; the eval log."""
    from inspect_ai.log import read_eval_log

    task = tmp_path / "capitals.py"
    task.write_text(TASK)
    logs = tmp_path / "logs"
    command = [
        str(Path(sys.executable).parent / "inspect"),
        "eval",
        task.name,
        "--model",
        "openai/llama3.2",
        "--log-dir",
        str(logs),
        "--display",
        "plain",
        *flags,
    ]
    env = harness_env(OPENAI_BASE_URL=proxy.base, OPENAI_API_KEY=proxy.key)
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [path] = list(logs.glob("*.eval"))
    return read_eval_log(str(path))


def test_inspect_chat_completions_with_per_request_settings(proxy: Proxy, tmp_path: Path) -> None:
    start = proxy.log_length()
    log = run_inspect(proxy, tmp_path, "-M", "responses_api=false", "--extra-body", json.dumps({"selfpara": {"k": 2}}))
    assert log.status == "success"
    assert log.results.scores[0].metrics["accuracy"].value == 1.0
    assert len(log.samples) == 3
    for sample in log.samples:  # each answer is the proxy's wrapped answer, with its report
        [call] = [e.call for e in sample.events if e.event == "model"]
        assert call.request["extra_body"] == {"selfpara": {"k": 2}}
        report = call.response["selfpara"]
        assert report["passthrough"] is False and report["k_requested"] == 2 and report["vote_share"] == 1.0
    assert len(wrapped_with_k(proxy.request_lines(start), 2)) == 3


def test_inspect_default_responses_api(proxy: Proxy, tmp_path: Path) -> None:
    """inspect's `openai/` provider speaks the Responses API by default; it does not send
    `--extra-body` there, so the run uses the server's default k (3)."""
    start = proxy.log_length()
    log = run_inspect(proxy, tmp_path)
    assert log.status == "success"
    assert log.results.scores[0].metrics["accuracy"].value == 1.0
    for sample in log.samples:
        [call] = [e.call for e in sample.events if e.event == "model"]
        assert call.response["object"] == "response" and call.response["selfpara"]["k_requested"] == 3
    # 3 samples, plus the one request with which inspect probes (once per run) whether a
    # model not known to it takes reasoning summaries: "Please say 'hello, world'".
    assert len(wrapped_with_k(proxy.request_lines(start), 3)) in (3, 4)
