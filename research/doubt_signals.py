"""How well each doubt signal of one natural answer tells a right answer from a wrong one (issue 43).

Reads `research/answer_forms.py` records (natural answers with their token log-probabilities, short
answers of the same wordings), grades them with the auto grader, and for each signal prints its AUROC
against correctness and, at thresholds, the share of answers called sure and the accuracy of those:

- mean: exp of the mean token log-probability of the whole answer (the confidence raw reports);
- min: the least probable token's probability;
- answer: exp of the mean log-probability of the tokens that do not restate the question (the answer's own);
- agree: whether the short answer of the same wording agrees with the natural one (1 or 0: one cheap sample).

    python research/doubt_signals.py runs/forms-comqa-dev.jsonl runs/forms-nq-dev.jsonl
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
from collections import defaultdict
from pathlib import Path

from evaluation.graders import grader_for
from evaluation.metrics.signals import auroc
from evaluation.records import Item, ItemVariant
from selfpara.pipeline.equivalence import build_equivalence
from selfpara.pipeline.equivalence.answer_core import FRAMING
from selfpara.pipeline.lexicon.text import STOPWORDS, is_negation, words

_WORD = re.compile(r"[A-Za-z0-9']+")


def _base(word: str) -> str:
    word = word.lower().removesuffix("'s").strip("'")
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def answer_tokens_probability(question: str, token_logprobs: list[dict]) -> float | None:
    """Geometric-mean probability of the tokens of words the question does not hold (nor stopwords, framing)."""
    if not token_logprobs:
        return None
    quiet = {_base(w) for w in words(question)} | {_base(w) for w in STOPWORDS | FRAMING}
    spans: list[tuple[str, list[float]]] = []
    for entry in token_logprobs:
        text, lp = str(entry.get("token") or ""), float(entry.get("logprob") or 0.0)
        if not spans or text[:1].isspace() or not _WORD.fullmatch(spans[-1][0][-1:] or "x"):
            spans.append((text.strip(), [lp]))
        else:
            spans[-1] = (spans[-1][0] + text, [*spans[-1][1], lp])
    carried = [
        lp
        for text, lps in spans
        if any(_base(w) not in quiet or is_negation(w.lower()) for w in _WORD.findall(text))
        for lp in lps
    ]
    chosen = carried or [float(e.get("logprob") or 0.0) for e in token_logprobs]
    return math.exp(sum(chosen) / len(chosen))


_VOCAB: list = []


def token_texts(text: str) -> list[str]:
    """The default model's tokens of `text` (records made before answer_forms saved them)."""
    if not _VOCAB:
        import llama_cpp

        path = Path.home() / ".cache" / "selfpara" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
        _VOCAB.append(llama_cpp.Llama(str(path), vocab_only=True, verbose=False))
    llm = _VOCAB[0]
    ids = llm.tokenize(text.encode(), add_bos=False, special=False)
    return [llm.detokenize([i]).decode("utf-8", "ignore") for i in ids]


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("records", nargs="+")
    args = ap.parse_args()
    grader = grader_for("factual")
    eq = build_equivalence("exact,numeric,contains,distinct,core".split(","), client=None, judge_model="")  # type: ignore[arg-type]
    rows: dict[tuple[str, int], dict[str, dict]] = defaultdict(dict)
    for p in args.records:
        for line in Path(p).read_text().splitlines():
            r = json.loads(line)
            rows[(r["item_id"], r["variant"])][r["form"]] = r
    signals: dict[str, list[float]] = defaultdict(list)
    right: list[bool] = []
    for forms in rows.values():
        nat = forms.get("natural")
        if nat is None or not nat["token_logprobs"]:
            continue
        item = Item(id="x", gold=nat["gold"], variants=[ItemVariant(id=0, question=nat["question"])])
        right.append(await grader.grade(item, nat["answer"]) == "correct")
        lps = nat["token_logprobs"]
        signals["mean"].append(math.exp(sum(lps) / len(lps)))
        signals["min"].append(math.exp(min(lps)))
        texts = nat.get("tokens_text") or token_texts(nat["answer"])
        if len(texts) != len(lps):  # re-tokenised text that does not split as generated: the whole answer
            texts = [nat["answer"]] + [""] * (len(lps) - 1)
        tokens = [{"token": t, "logprob": lp} for t, lp in zip(texts, lps, strict=True)]
        signals["answer"].append(answer_tokens_probability(nat["question"], tokens) or 0.0)
        short = forms.get("short")
        if short is not None:
            same = await eq.equivalent(nat["question"], nat["answer"], short["answer"])
            signals["agree"].append(1.0 if same else 0.0)
    n = len(right)
    print(f"{n} natural answers, {sum(right)} right ({sum(right) / n:.3f})")
    for name, values in signals.items():
        if len(values) != n:
            print(f"{name}: {len(values)} values, skipped")
            continue
        print(f"{name:7s} AUROC {auroc(values, right):.3f}")
        for t in (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95):
            sure = [r for v, r in zip(values, right, strict=True) if v >= t]
            doubt = [r for v, r in zip(values, right, strict=True) if v < t]
            if sure:
                print(
                    f"   >= {t:.2f}: sure {len(sure) / n:.2f} (acc {sum(sure) / len(sure):.3f}); "
                    f"doubt {len(doubt)} holds {sum(1 for r in doubt if not r)} of {n - sum(right)} wrong"
                )


if __name__ == "__main__":
    asyncio.run(main())
