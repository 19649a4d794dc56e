"""Every prompt selfpara sends on its own behalf (paraphrasing and judging), in one place."""

from __future__ import annotations

from selfpara.result import Message

PARAPHRASE_MARKER = "Rewrite the question"
JUDGE_MARKER = "Answer YES or NO"

DIVERSITY_HINTS = (
    "reorder the clauses",
    "change active to passive voice or back",
    "use synonyms",
    "make it formal",
    "make it casual",
    "make it polite",
    "make it neutral and terse",
    "turn it into an instruction",
)

PARAPHRASE = (
    PARAPHRASE_MARKER + " below in {k} different ways. Each rewording must ask exactly the same "
    "thing: same intent, constraints and assumptions, answerable the same way. Do not answer it. "
    "Make every rewording different: {hints}.\n"
    "Reply with a numbered list only, one rewording per line.\n\n"
    "Question: {question}"
)

# A worked example given as an earlier exchange: small models copy an example written
# into the instruction itself instead of applying it to the real question.
_EXAMPLE_QUESTION = "How many legs does a spider have?"
_EXAMPLE_REPLY = "1. What is the number of legs on a spider?\n2. Tell me how many legs spiders have."

SAME_QUESTION = (
    "Do these two questions ask exactly the same thing (same intent, constraints and "
    "assumptions, so that one correct answer answers both)?\n\n"
    "Question 1: {a}\nQuestion 2: {b}\n\n" + JUDGE_MARKER + "."
)

SAME_ANSWER = (
    "Question: {question}\n\nAnswer 1: {a}\nAnswer 2: {b}\n\n"
    "Do the two answers say the same thing in reply to the question (each implies the other; "
    "wording and detail may differ)? " + JUDGE_MARKER + "."
)


def paraphrase(question: str, k: int) -> str:
    """The instruction asking for `k` rewordings of `question`, each with its own diversity hint."""
    hints = "; ".join(f"({i + 1}) {DIVERSITY_HINTS[i % len(DIVERSITY_HINTS)]}" for i in range(k))
    return PARAPHRASE.format(k=k, hints=hints, question=question.strip())


def paraphrase_messages(question: str, k: int) -> list[Message]:
    """The paraphrase call's messages: one worked example exchange, then the real request."""
    return [
        {"role": "user", "content": paraphrase(_EXAMPLE_QUESTION, 2)},
        {"role": "assistant", "content": _EXAMPLE_REPLY},
        {"role": "user", "content": paraphrase(question, k)},
    ]
