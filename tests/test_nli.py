"""The NLI backend loads a real (tiny, randomly initialised) classifier from disk; verdicts mean nothing."""

from pathlib import Path

import pytest

from selfpara import SelfParaphraser
from selfpara.errors import ConfigError
from selfpara.models.client import ModelClient
from selfpara.pipeline.equivalence.nli import NLIModel
from selfpara.testing import FakeBackend, tiny_nli_model

pytestmark = pytest.mark.extra("nli")  # a tiny NLI model is built with torch and transformers


def tiny_nli(directory: Path, labels=("entailment", "neutral", "contradiction")) -> Path:
    return tiny_nli_model(directory, labels)


@pytest.fixture(scope="module")
def nli_dir(tmp_path_factory):
    return tiny_nli(tmp_path_factory.mktemp("nli"))


def test_loads_and_batches(nli_dir):
    nli = NLIModel(nli_dir, batch_size=2)
    out = nli.probs([("what is paris", "paris")] * 5)
    assert len(out) == 5 and nli.forward_passes == 3
    for p in out:
        assert p.entailment + p.neutral + p.contradiction == pytest.approx(1.0, abs=1e-5)


def test_unreadable_path_is_config_error(tmp_path):
    with pytest.raises(ConfigError, match="not a model directory"):
        NLIModel(tmp_path / "missing")


def test_unnamed_labels_are_rejected(tmp_path):
    with pytest.raises(ConfigError, match="entailment/neutral/contradiction"):
        NLIModel(tiny_nli(tmp_path, labels=("LABEL_0", "LABEL_1", "LABEL_2")))


async def test_pipeline_runs_with_nli_equivalence_and_check(nli_dir):
    fake = FakeBackend(
        lambda m, msgs, p: (
            "1. Tell me the capital of France.\n2. Which city is France's capital?"
            if "Rewrite" in msgs[-1]["content"]
            else "Paris, I think"
            if "Which" in msgs[-1]["content"]
            else "Paris"
        )
    )
    sp = SelfParaphraser(
        model="openai/x",
        k=2,
        equivalence="exact,nli",
        paraphrase_check="nli",
        nli_model=str(nli_dir),
        renamings=False,  # the scripted list's lines are what the NLI check reads
        client=ModelClient(backend=fake),
    )
    r = await sp.aanswer("What is the capital of France?")
    assert r.equivalence_functions == ["exact", "nli"] and r.paraphrase_check == "nli"
    assert r.k_kept + len(r.rejected) == 2
    assert sum(c.size for c in r.clusters) == 1 + r.k_kept


async def test_concurrent_calls_share_forward_passes(nli_dir):
    import asyncio

    nli = NLIModel(nli_dir, batch_size=16)
    alone = nli.probs([("what is paris", "paris"), ("paris", "what is paris")])
    passes = nli.forward_passes
    # eight callers at once (the pairs of one clustering step): one forward pass, each gets its own pairs
    out = await asyncio.gather(
        *(nli.aprobs([("what is paris", "paris"), ("paris", "what is paris")]) for _ in range(8))
    )
    assert nli.forward_passes == passes + 1
    for probs in out:
        assert [p.entailment for p in probs] == pytest.approx([p.entailment for p in alone], abs=1e-5)
    # a caller alone still gets an answer, and a failure reaches every caller of its batch
    assert len(await nli.aprobs([("the capital", "paris")])) == 1
    broken = [nli.aprobs([("a", "b")]), nli.aprobs([]), nli.aprobs(None)]  # type: ignore[arg-type]
    assert all(isinstance(r, TypeError) for r in await asyncio.gather(*broken, return_exceptions=True))


async def test_clustering_with_nli_takes_one_forward_pass_per_answer(nli_dir):
    from selfpara.pipeline.equivalence import Equivalence, NLIEquivalence
    from selfpara.pipeline.vote import cluster_answers
    from selfpara.result import Answer

    nli = NLIModel(nli_dir)
    equivalence = Equivalence([NLIEquivalence(nli)])
    answers = [Answer(variant=i, text=t) for i, t in enumerate(["paris", "the capital", "france", "what is", "of"])]
    comparisons: list = []
    await cluster_answers("what is the capital of france", answers, equivalence, comparisons=comparisons)
    # each answer is compared with every representative so far at once: one pass per answer after the
    # first, however many pairs (one pass per pair before batching)
    assert len(comparisons) >= len(answers) - 1 and nli.forward_passes == len(answers) - 1
