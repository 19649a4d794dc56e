"""Judge calls per request, counted on fakes (no model time): what the vote asks the LLM judge and the NLI model.

1. LLM judge: k=5, long answers worded apart that no cheap function decides (so every pair
   the vote compares goes to the judge), in three patterns: unanimous; a 4-answer majority the
   original is not in (so the returned member must be chosen); all different. Counted:
   judge calls of the first request, and of the same request again (the pair verdicts
   are cached across requests; the call cache is off, so that only the pair cache counts).
2. NLI: the same patterns with a tiny randomly initialised NLI model (its verdicts mean
   nothing; what is counted is forward passes), equivalence and paraphrase check by NLI.

Run: python research/judge_calls.py   (figures in research/results/judge.json)
"""

from __future__ import annotations

import asyncio
import re
import tempfile
from pathlib import Path

from _results import write

from selfpara import SelfParaphraser
from selfpara.models.client import ModelClient
from selfpara.pipeline.prompts import JUDGE_MARKER, PARAPHRASE_MARKER
from selfpara.testing import FakeBackend, default_responder, last_user_text, tiny_nli_model

QUESTION = "Which river flows through the city of Vienna?"
FILLER = "as the records of the city council and several travel guides written over many years describe it"
PATTERNS = {
    "unanimous": ["A"] * 6,
    "majority without the original": ["B", "A", "A", "A", "A", "C"],
    "all different": ["A", "B", "C", "D", "E", "F"],
}


def long_answer(tag: str, variant: int) -> str:
    """An answer of more than 30 words (beyond `distinct`), worded apart for every variant: only the
    judge (which compares the tags) tells which say the same."""
    return f"The answer, labelled {tag.lower()}x, is given in wording {variant} at length {FILLER}, {FILLER}."


def responder(pattern: list[str]):
    base = default_responder()

    def respond(model, messages, params):
        text = last_user_text(messages)
        if PARAPHRASE_MARKER in text:
            return base(model, messages, params)
        if JUDGE_MARKER in text:
            if "<answer_1>" not in text:
                return "YES"  # a paraphrase check
            tags = re.findall(r"labelled (\w+)x", text)
            return "YES" if len(set(tags)) == 1 else "NO"
        m = re.search(r"\(v(\d+)\)", text)
        variant = int(m.group(1)) + 1 if m else 0
        return long_answer(pattern[variant], variant)

    return respond


def judge_calls(fake: FakeBackend) -> int:
    return sum(1 for _, messages, _ in fake.calls if "<answer_1>" in last_user_text(messages))


async def llm_judge() -> dict:
    rows = {}
    for name, pattern in PATTERNS.items():
        fake = FakeBackend(responder(pattern))
        sp = SelfParaphraser(
            model="openai/fake",
            k=5,
            equivalence="exact,numeric,contains,distinct,llm",
            paraphrase_check="off",
            cache="off",
            client=ModelClient(backend=fake),
        )
        first = await sp.aanswer(QUESTION)
        calls_first = judge_calls(fake)
        await sp.aanswer(QUESTION)
        rows[name] = {
            "answers": len(first.answers),
            "clusters": len(first.clusters),
            "judge_calls_first_request": calls_first,
            "judge_calls_same_request_again": judge_calls(fake) - calls_first,
        }
    return rows


async def nli() -> dict:
    from selfpara.pipeline.equivalence.nli import load_nli

    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = str(tiny_nli_model(Path(tmp)))
        model = load_nli(path)
        for name, pattern in PATTERNS.items():
            sp = SelfParaphraser(
                model="openai/fake",
                k=5,
                equivalence="exact,nli",
                paraphrase_check="nli",
                nli_threshold=0.0,  # keep every paraphrase: the count is about the vote
                nli_model=path,
                cache="off",
                client=ModelClient(backend=FakeBackend(responder(pattern))),
            )
            before = model.forward_passes
            r = await sp.aanswer(QUESTION)
            rows[name] = {
                "answers": len(r.answers),
                "clusters": len(r.clusters),
                "pairs_compared": len(r.comparisons),
                "forward_passes": model.forward_passes - before,
            }
    return rows


async def main() -> None:
    figures = {"llm_judge": await llm_judge(), "nli": await nli()}
    print("LLM judge, k=5, answers no cheap function decides:")
    for name, row in figures["llm_judge"].items():
        print(
            f"  {name:30s} {row['answers']} answers, {row['clusters']} clusters: "
            f"{row['judge_calls_first_request']} judge calls, {row['judge_calls_same_request_again']} on a repeat"
        )
    print("NLI (tiny random model), k=5, equivalence and paraphrase check:")
    for name, row in figures["nli"].items():
        print(f"  {name:30s} {row['pairs_compared']} answer pairs compared: {row['forward_passes']} forward passes")
    print("written to", write("judge", figures))


if __name__ == "__main__":
    asyncio.run(main())
