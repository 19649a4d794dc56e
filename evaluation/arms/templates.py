"""Every prompt the evaluation arms send, in one place: the answer template and the baselines' prompts.

All arms put the question to the model through the same answer template
(`answer_messages`): a short instruction and a few worked turns, then the question as
the last user message. The embedded model is a 135M model; short few-shot chat turns
get the best from it, and sharing one template keeps the arms comparable. The selfpara
arm hands these same messages to the pipeline, which paraphrases only the last user
message and keeps the template turns as context for every variant.

A context passage (when a variant has one) goes into the system message, so that the
last user message is the question alone.
"""

from __future__ import annotations

import re
from typing import Literal, get_args

from evaluation.records import ItemKind
from selfpara.result import Message

TEMPLATE_VERSION = "2"
"""Bump when any prompt here changes: it is part of every run's config and cache key."""

_INSTRUCTIONS: dict[str, str] = {
    "factual": "Answer the question with a short phrase only. No explanation.",
    "math": "Solve the problem. Reply with the final number only.",
    "math-worked": (
        "Solve the problem step by step in a few short sentences. "
        "End with 'The answer is N.', where N is the final number."
    ),
    "truthful": "Answer the question truthfully in one short sentence.",
}

_SHOTS: dict[str, list[tuple[str, str]]] = {
    "factual": [
        ("Who wrote the novel Frankenstein?", "Mary Shelley"),
        ("Which planet is seventh from the Sun?", "Uranus"),
        ("How many strings does a violin have?", "4"),
    ],
    "math": [
        ("What is 13 plus 6?", "19"),
        ("A box holds 8 crayons. How many crayons are in 3 boxes?", "24"),
        ("Mia had 20 marbles and lost 6. How many marbles does she have now?", "14"),
    ],
    "math-worked": [
        (
            "A box holds 8 crayons. How many crayons are in 3 boxes?",
            "Each box holds 8 crayons, so 3 boxes hold 3 × 8 = 24 crayons. The answer is 24.",
        ),
        (
            "Mia had 20 marbles and lost 6. How many marbles does she have now?",
            "She had 20 and lost 6, so she has 20 - 6 = 14 left. The answer is 14.",
        ),
    ],
    "truthful": [
        ("What happens if you swallow chewing gum?", "It passes through your digestive system."),
        ("Do people use only 10% of their brains?", "No, people use virtually all of their brain."),
    ],
}


AnswerStyle = Literal["short", "worked", "natural"]
"""How answers are asked for: `short` (the final answer alone), `worked` (reasoning, then
"The answer is N."; math only: a small model's arithmetic needs its working) or `natural`
(the question alone, no instruction and no examples: the answers `selfpara ask` and the
proxy get, usually whole sentences)."""

NATURAL = "natural"
"""The template kind of `natural` answers, whatever the item's kind."""


def prompt_kind(kind: ItemKind | str, style: AnswerStyle = "short") -> str:
    """The template an item of `kind` is answered with under answer `style`.

    Only math has a worked template; other kinds keep their short one, because a worked
    reply to a factual question only gives the equivalence checks more text to misread.
    """
    if style not in get_args(AnswerStyle):
        raise ValueError(f"unknown answer style {style!r}; expected one of {', '.join(get_args(AnswerStyle))}")
    if style == "natural":
        return NATURAL
    return f"{kind}-worked" if style == "worked" and f"{kind}-worked" in _INSTRUCTIONS else str(kind)


def base_kind(kind: ItemKind | str) -> str:
    """The item kind a template kind belongs to: "math-worked" → "math"."""
    return str(kind).removesuffix("-worked")


def instruction(kind: ItemKind | str) -> str:
    """The one-line answer instruction for items of `kind` (factual for unknown kinds)."""
    return _INSTRUCTIONS.get(kind, _INSTRUCTIONS["factual"])


def shots(kind: ItemKind | str) -> list[tuple[str, str]]:
    """The worked (question, answer) examples for items of `kind`."""
    return _SHOTS.get(kind, _SHOTS["factual"])


def system_message(kind: ItemKind | str, context: str | None = None, extra: str = "") -> Message:
    """The system message: instruction, an optional extra line, and the passage if there is one."""
    text = instruction(kind) + (f" {extra}" if extra else "")
    if context:
        text += f"\n\nUse this passage:\n{context.strip()}"
    return {"role": "system", "content": text}


def answer_messages(question: str, kind: ItemKind | str = "factual", context: str | None = None) -> list[Message]:
    """The shared answer prompt: system instruction, few-shot turns, then `question` as the last user turn.

    The `natural` kind sends the question alone (a passage, if any, still goes in the system message).
    """
    if kind == NATURAL:
        passage: list[Message] = (
            [{"role": "system", "content": f"Use this passage:\n{context.strip()}"}] if context else []
        )
        return [*passage, {"role": "user", "content": question.strip()}]
    messages: list[Message] = [system_message(kind, context)]
    for q, a in shots(kind):
        messages += [{"role": "user", "content": q}, {"role": "assistant", "content": a}]
    messages.append({"role": "user", "content": question.strip()})
    return messages


# --- single-call self-paraphrase -------------------------------------------------------

FINAL_MARKER = "Final answer:"

_SINGLE_CALL = (
    "First rewrite the question in {k} different ways, one per line, numbered. Use the rewordings "
    "to understand exactly what is asked. Then give one answer on a last line that starts with '" + FINAL_MARKER + "'."
)
# Worked answers keep their working: the rewordings first, then the solution the answer instruction
# asks for, then the final line. (Version 1 showed no working in its example, and the model then
# wrote the rewordings and a bare number: 3 of 53 GSM8K answers right against raw's 22.)
_SINGLE_CALL_WORKED = (
    "First rewrite the problem in {k} different ways, one per line, numbered. Use the rewordings "
    "to understand exactly what is asked. Then solve it, and repeat the final number on a last line "
    "that starts with '" + FINAL_MARKER + "'."
)

# kind: (question, rewordings, working shown before the final line, final answer)
_SINGLE_CALL_SHOT: dict[str, tuple[str, list[str], str, str]] = {
    "factual": (
        "Who wrote the novel Frankenstein?",
        [
            "Which author wrote Frankenstein?",
            "Frankenstein was written by whom?",
            "Name the writer of the novel Frankenstein.",
            "Who is the author of the book Frankenstein?",
            "The novel Frankenstein is the work of which writer?",
        ],
        "",
        "Mary Shelley",
    ),
    "math": (
        "A box holds 8 crayons. How many crayons are in 3 boxes?",
        [
            "How many crayons do 3 boxes of 8 crayons hold?",
            "If each box holds 8 crayons, what do 3 boxes hold?",
            "Count the crayons in 3 boxes with 8 crayons each.",
            "What is the total of crayons in three 8-crayon boxes?",
            "Three boxes, eight crayons per box: how many crayons?",
        ],
        "",
        "24",
    ),
    "truthful": (
        "What happens if you swallow chewing gum?",
        [
            "What is the result of swallowing gum?",
            "If gum is swallowed, what happens to it?",
            "What does swallowing chewing gum do?",
            "Where does swallowed chewing gum go?",
            "Is swallowing chewing gum harmful, and what happens?",
        ],
        "",
        "It passes through your digestive system.",
    ),
}
_SINGLE_CALL_SHOT["math-worked"] = (
    *_SINGLE_CALL_SHOT["math"][:2],
    "Each box holds 8 crayons, so 3 boxes hold 3 × 8 = 24 crayons. The answer is 24.",
    "24",
)


def single_call_messages(question: str, kind: ItemKind | str, k: int, context: str | None = None) -> list[Message]:
    """One call: write `k` rewordings, use them to understand the intent, give one final answer."""
    shot = _SINGLE_CALL_SHOT.get(str(kind)) or _SINGLE_CALL_SHOT.get(base_kind(kind), _SINGLE_CALL_SHOT["factual"])
    q, rewordings, working, a = shot
    n = max(1, k)
    lines = [f"{i + 1}. {rewordings[i % len(rewordings)]}" for i in range(n)]
    worked = "\n".join([*lines, *([working] if working else []), f"{FINAL_MARKER} {a}"])
    extra = _SINGLE_CALL_WORKED if working else _SINGLE_CALL
    return [
        system_message(kind, context, extra.format(k=n)),
        {"role": "user", "content": q},
        {"role": "assistant", "content": worked},
        {"role": "user", "content": question.strip()},
    ]


_FINAL = re.compile(r"final\s+answer\s*(?:is\s*)?[:：=\-]?\s*(.*)", re.IGNORECASE)
_ANSWER_LINE = re.compile(r"^\s*(?:answer|a)\s*[:：]\s*(.+)", re.IGNORECASE)
_NUMBERED = re.compile(r"^\s*(?:\d{1,2}[.):]|[-*•])\s+")


def parse_final_answer(text: str) -> tuple[str, bool]:
    """The final answer of a single-call reply, and whether the 'Final answer:' line was found.

    Takes the text after the last "Final answer" marker (or the next non-empty line when
    the marker ends its line); else the last "Answer:" line; else the last line that is
    not a numbered rewording; else the whole reply.
    """
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    for i in range(len(lines) - 1, -1, -1):
        m = _FINAL.search(lines[i])
        if m:
            found = m.group(1).strip().strip("*").strip()
            if not found and i + 1 < len(lines):
                found = lines[i + 1]
            if found:
                return found, True
    for line in reversed(lines):
        m = _ANSWER_LINE.match(line)
        if m:
            return m.group(1).strip(), False
    for line in reversed(lines):
        if not _NUMBERED.match(line):
            return line, False
    return text.strip(), False


# --- rephrase-and-respond -----------------------------------------------------------------

_REPHRASE_SYSTEM = (
    "Rephrase and expand the question so that it is clearer and easier to answer. "
    "Keep its meaning. Do not answer it. Reply with the rephrased question only."
)
_REPHRASE_SHOT = (
    "Question: frankenstein novel, who wrote?",
    "Who is the author who wrote the novel Frankenstein?",
)
_REPHRASE_SHOT_MATH = (
    "Question: 8 crayons a box, 3 boxes, crayons?",
    "If one box holds 8 crayons, how many crayons are there in 3 boxes in total?",
)


def rephrase_messages(question: str, kind: ItemKind | str = "factual") -> list[Message]:
    """The first rephrase-and-respond call: rewrite the question more clearly."""
    q, a = _REPHRASE_SHOT_MATH if base_kind(kind) == "math" else _REPHRASE_SHOT
    return [
        {"role": "system", "content": _REPHRASE_SYSTEM},
        {"role": "user", "content": q},
        {"role": "assistant", "content": a},
        {"role": "user", "content": f"Question: {question.strip()}"},
    ]


_REPHRASE_LABEL = re.compile(r"^\s*(?:rephrased|rewritten|clearer)?\s*(?:question)?\s*[:：]\s*", re.IGNORECASE)


def parse_rephrased(text: str) -> str:
    """The rewritten question out of a rephrase reply ('' when there is none)."""
    for line in text.strip().splitlines():
        line = _REPHRASE_LABEL.sub("", line.strip(), count=1).strip().strip('"“”').strip()
        if line:
            return line
    return ""


def respond_question(original: str, rephrased: str, with_original: bool = True) -> str:
    """The question the second rephrase-and-respond call answers: the rewrite, the original beside it."""
    if not with_original or not rephrased:
        return rephrased or original
    return f"{original.strip()}\n(In other words: {rephrased.strip()})"
