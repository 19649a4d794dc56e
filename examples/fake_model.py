"""Run the whole pipeline on a scripted fake model: handy for trying settings without a model.

python examples/fake_model.py
"""

import asyncio

from selfpara import ModelClient, SelfParaphraser
from selfpara.testing import FakeBackend, default_responder, last_user_text

base = default_responder()


def respond(model, messages, params):
    # The original wording gets a wrong answer; the paraphrases outvote it.
    if last_user_text(messages) == "Which planet is known as the Red Planet?":
        return "Jupiter"
    return base(model, messages, params) if "Rewrite" in last_user_text(messages) else "Mars"


async def main() -> None:
    sp = SelfParaphraser(
        model="openai/fake",
        k=4,
        equivalence="exact",
        paraphrase_check="off",
        client=ModelClient(backend=FakeBackend(respond)),
    )
    result = await sp.aanswer("Which planet is known as the Red Planet?")
    print(result.answer, f"vote_share={result.vote_share:.2f}", f"original_won={result.original_won}")


asyncio.run(main())
