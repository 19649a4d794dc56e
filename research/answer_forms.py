"""Ask every wording of a question set in the answer forms under study and record the answers.

Issue 47's first development experiment: the vote cannot hear that two sentence answers agree
("The Tiber River flows through Rome." / "... the river that winds through the Eternal City is the
Tiber"). Each wording is asked once per form, greedily, with its token log-probabilities, so that
how each form's answers cluster, how often they are right and how sure the model is can all be read
offline (`research/voices_offline.py`):

- natural: the question alone, as `ask` and the proxy send it;
- short: the question with a short-answer instruction as the system message (the design tried for the
  vote's voices; measured less accurate, so the voices stayed natural: docs/results/public-sets.md);
- recite: the model first recites what it knows of the question's subject, then answers the question
  after its own passage (recitation-augmented answering, Sun et al., ICLR 2023): a voice that reaches the
  answer by another path than the original's, tried for issue 47's independent voices;
- encyclopedia, kind first: the question as asked, under another instruction (a system message, or a line
  after the question that has the model name the kind of thing asked for first): prompt voices that no
  paraphrase call writes, tried for issue 47's part 4 after the vote's ceiling showed its rewordings rarely
  hold the right answer where the original's is wrong (`research/voice_headroom.py` reads them).

    python research/answer_forms.py --dataset comqa:data/public/comqa/dev.json --max-variants 4 \\
        --out runs/forms-comqa-dev.jsonl

Resumable: wordings already in --out are not asked again.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from evaluation.datasets import load_dataset
from selfpara.models.client import ModelClient

VOICE_INSTRUCTION = "Reply with the answer only, in as few words as possible."
VOICE_MAX_TOKENS = 32
RECITE_INSTRUCTION = (
    "What is this question about? Write two sentences of background on its subject, as an encyclopedia would, "
    "without answering the question.\n\nQuestion: {question}"
)
RECITE_ANSWER = "Now answer the question: {question}"
RECITE_MAX_TOKENS = 128
PROMPT_VOICES = {
    "encyclopedia": ("You are an encyclopedia. State the fact the question asks for, in one sentence.", "{question}"),
    "kind first": (
        None,
        "{question}\n\nFirst name the kind of thing asked for (a person, a place, a year, a country, a book, "
        "...), then give the answer in one sentence.",
    ),
}
"""Each prompt voice: (system message or None, the user message around the question)."""


def voice_messages(messages: list) -> list:
    """The messages a short voice sent: the instruction as a system message (added to one the caller gave)."""
    if messages and messages[0].get("role") == "system":
        return [{**messages[0], "content": f"{messages[0]['content'].rstrip()}\n\n{VOICE_INSTRUCTION}"}, *messages[1:]]
    return [{"role": "system", "content": VOICE_INSTRUCTION}, *messages]


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--model", default="local/qwen2.5-coder-1.5b")
    ap.add_argument("--max-variants", type=int, default=4)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--max-tokens", type=int, default=96)
    ap.add_argument("--forms", default="natural,short")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    items = load_dataset(args.dataset)[: args.limit]
    out = Path(args.out)
    done: set[tuple[str, int, str]] = set()
    if out.exists():
        for line in out.read_text().splitlines():
            r = json.loads(line)
            done.add((r["item_id"], r["variant"], r["form"]))
    client = ModelClient(concurrency=4)
    forms = args.forms.split(",")

    async def ask(item, variant, form: str) -> dict | None:
        if (item.id, variant.id, form) in done:
            return None
        messages = [{"role": "user", "content": variant.question}]
        passage = None
        if form in PROMPT_VOICES:
            system, user = PROMPT_VOICES[form]
            messages = [{"role": "user", "content": user.format(question=variant.question)}]
            if system is not None:
                messages.insert(0, {"role": "system", "content": system})
        if form == "recite":
            asked = [{"role": "user", "content": RECITE_INSTRUCTION.format(question=variant.question)}]
            recited = await client.complete(
                args.model, asked, temperature=0.0, max_tokens=RECITE_MAX_TOKENS, kind="answer"
            )
            passage = recited.text.strip()
            messages = [
                *asked,
                {"role": "assistant", "content": passage},
                {"role": "user", "content": RECITE_ANSWER.format(question=variant.question)},
            ]
        c = await client.complete(
            args.model,
            voice_messages(messages) if form == "short" else messages,
            temperature=0.0,
            max_tokens=VOICE_MAX_TOKENS if form == "short" else args.max_tokens,
            kind="answer",
            logprobs=True,
        )
        return {
            "item_id": item.id,
            "variant": variant.id,
            "form": form,
            "question": variant.question,
            "answer": c.text.strip(),
            "passage": passage,
            "logprob": c.logprob,
            "tokens": c.completion_tokens,
            "token_logprobs": [t.get("logprob") for t in (c.token_logprobs or [])],
            "tokens_text": [t.get("token") for t in (c.token_logprobs or [])],
            "gold": item.gold,
        }

    with out.open("a") as fh:
        for n, item in enumerate(items):
            jobs = [ask(item, v, f) for v in item.variants[: args.max_variants] for f in forms]
            for row in await asyncio.gather(*jobs):
                if row is not None:
                    fh.write(json.dumps(row) + "\n")
            fh.flush()
            if n % 10 == 0:
                print(f"{n + 1}/{len(items)}", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
