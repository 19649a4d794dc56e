"""lm-eval through the proxy: `local-chat-completions` with `--apply_chat_template`, the
command docs/proxy.md gives, on a 3-sample generation task read from a local file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .harness import MODEL, QUESTIONS, TARGET, Proxy, harness_env, needs, wrapped_with_k

pytestmark = pytest.mark.integration
needs("lm_eval", "lm-eval")  # the whole module skips, before the proxy starts


def write_task(folder: Path) -> None:
    """A generation task `capitals` (exact match) over a local JSONL file: no dataset download."""
    data = folder / "capitals.jsonl"
    data.write_text("".join(json.dumps({"question": q, "answer": TARGET}) + "\n" for q in QUESTIONS))
    (folder / "capitals.yaml").write_text(f"""task: capitals
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "{{{{question}}}}"
doc_to_target: "{{{{answer}}}}"
generation_kwargs:
  until: []
  max_gen_toks: 32
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
""")


def test_lm_eval_local_chat_completions(proxy: Proxy, tmp_path: Path) -> None:
    tasks, out = tmp_path / "tasks", tmp_path / "out"
    tasks.mkdir()
    write_task(tasks)
    start = proxy.log_length()
    command = [
        str(Path(sys.executable).parent / "lm_eval"),
        "--model",
        "local-chat-completions",
        "--apply_chat_template",
        "--model_args",
        f"model={MODEL},base_url={proxy.base}/chat/completions,num_concurrent=3",
        "--include_path",
        str(tasks),
        "--tasks",
        "capitals",
        "--gen_kwargs",
        json.dumps({"selfpara": {"k": 2}}),  # per-request settings ride in the body
        "--output_path",
        str(out),
    ]
    done = subprocess.run(
        command, env=harness_env(OPENAI_API_KEY=proxy.key), capture_output=True, text=True, timeout=500, cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [results] = list(out.rglob("results_*.json"))
    scores = json.loads(results.read_text())["results"]["capitals"]
    assert scores["exact_match,none"] == 1.0
    assert len(wrapped_with_k(proxy.request_lines(start), 2)) == 3
