"""The NLI backend loads a real (tiny, randomly initialised) classifier from disk; verdicts mean nothing."""

from pathlib import Path

import pytest

from selfpara import SelfParaphraser
from selfpara.errors import ConfigError
from selfpara.llm import ModelClient
from selfpara.nli import NLIModel
from selfpara.testing import FakeBackend


def tiny_nli(directory: Path, labels=("entailment", "neutral", "contradiction")) -> Path:
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "what", "is", "the", "capital", "of", "france", "paris"]
    (directory / "vocab.txt").write_text("\n".join(words))
    BertTokenizer(str(directory / "vocab.txt")).save_pretrained(directory)
    config = BertConfig(
        vocab_size=len(words),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        num_labels=3,
        id2label=dict(enumerate(labels)),
        label2id={l: i for i, l in enumerate(labels)},
    )
    BertForSequenceClassification(config).save_pretrained(directory)
    return directory


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
        client=ModelClient(backend=fake),
    )
    r = await sp.aanswer("What is the capital of France?")
    assert r.equivalence_functions == ["exact", "nli"] and r.paraphrase_check == "nli"
    assert r.k_kept + len(r.rejected) == 2
    assert sum(c.size for c in r.clusters) == 1 + r.k_kept
