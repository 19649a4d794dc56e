"""Every prompt selfpara sends on its own behalf (paraphrasing and judging), built from the lexicon's
`en/prompts.toml` (their words, worked examples and forms, and why each is so)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from selfpara.pipeline.lexicon.tables import LEXICON
from selfpara.pipeline.lexicon.text import sentences
from selfpara.result import Message

_TEXT: dict[str, Any] = LEXICON.table("prompts")
PARAPHRASE_MARKER: str = _TEXT["paraphrase_marker"]
JUDGE_MARKER: str = _TEXT["judge_marker"]
FORM_MARKER: str = _TEXT["form_marker"]
DATA_NOTE: str = _TEXT["data_note"]
"""Every prompt that carries user text puts it between tags and says so (prompt-injection hygiene)."""
DIVERSITY_HINTS: tuple[str, ...] = tuple(_TEXT["diversity_hints"])
_MARKS = {"paraphrase_marker": PARAPHRASE_MARKER, "judge_marker": JUDGE_MARKER, "data_note": DATA_NOTE}

TAGS = ("question", "original", "rewritten", "answer_1", "answer_2")
_CLOSING = re.compile(r"<\s*/\s*(" + "|".join(TAGS) + r")\s*>", re.I)


def tagged(tag: str, text: str) -> str:
    """`text` between `<tag>` lines; a closing tag of ours inside it is defused ("</ question>")
    so the data cannot end its block early."""
    return f"<{tag}>\n{_CLOSING.sub(lambda m: f'</ {m.group(1)}>', text.strip())}\n</{tag}>"


def untagged(tag: str, prompt: str) -> str | None:
    """The text of the last `<tag>` block of a prompt built here (for fakes and tests); None if absent."""
    found = re.findall(rf"<{tag}>\n(.*?)\n</{tag}>", prompt, flags=re.S)
    return found[-1] if found else None


def _filled(name: str, **values: object) -> str:
    """The prompt `name` of `prompts.toml` with its markers and `values` filled in."""
    return str(_TEXT[name]).format(**_MARKS, form_marker=FORM_MARKER, **values)


def same_question(original: str, rewritten: str) -> str:
    """The paraphrase-equivalence judge's prompt."""
    return _filled("same_question", a=tagged("original", original), b=tagged("rewritten", rewritten))


def same_answer(question: str, a: str, b: str) -> str:
    """The answer-equivalence judge's prompt."""
    return _filled(
        "same_answer", question=tagged("question", question), a=tagged("answer_1", a), b=tagged("answer_2", b)
    )


def paraphrase(question: str, k: int) -> str:
    """The instruction asking for `k` rewordings of `question`, each with its own diversity hint."""
    hints = "; ".join(f"({i + 1}) {DIVERSITY_HINTS[i % len(DIVERSITY_HINTS)]}" for i in range(k))
    return _filled("paraphrase", k=k, hints=hints, question=tagged("question", question))


LONG_QUESTION_WORDS = 30
"""Questions longer than this get the long worked example and a word problem's forms."""


def paraphrase_messages(question: str, k: int) -> list[Message]:
    """The paraphrase call's messages: one worked example exchange, then the real request.

    The example matches the question's length: a long question gets a multi-sentence word
    problem, because a small model imitates the example's shape (one short sentence in, one
    out) more than it follows the instruction to keep every fact.
    """
    example, reply = _TEXT["long_example" if len(question.split()) > LONG_QUESTION_WORDS else "example"]
    return [
        {"role": "user", "content": paraphrase(example, 2)},
        {"role": "assistant", "content": reply},
        {"role": "user", "content": paraphrase(question, k)},
    ]


@dataclass(frozen=True)
class Form:
    """One way of putting a question, with a worked example (small models copy an example's shape).

    Attributes:
        name: what `Variant.source` reports after "form:".
        instruction: the form, said in one sentence.
        example: (a question, the question in this form).
        starts: how a question already in this form starts ("which"): it is not asked in it again.
    """

    name: str
    instruction: str
    example: tuple[str, str]
    starts: tuple[str, ...] = ()


def _forms(kind: str) -> tuple[Form, ...]:
    return tuple(
        Form(f["name"], f["instruction"], (f["example"][0], f["example"][1]), tuple(f.get("starts", ())))
        for f in LEXICON.raw(kind)
    )


SHORT_FORMS = _forms("short_forms")
"""Forms of a short question, in the order they are used."""
WORD_PROBLEM_FORMS = _forms("word_problem_forms")
"""Forms of a word problem (a question of more than LONG_QUESTION_WORDS words, or of several sentences)."""


def is_word_problem(question: str) -> bool:
    """A question with facts before it: more than one sentence, or over LONG_QUESTION_WORDS words."""
    return len(question.split()) > LONG_QUESTION_WORDS or len(sentences(question)) > 1


def forms_for(question: str) -> tuple[Form, ...]:
    """The forms that suit `question`, in order: a word problem's, or a short question's without the
    one it is already in ("Which city ...?" gains nothing from the 'which' form)."""
    if is_word_problem(question):
        return WORD_PROBLEM_FORMS
    start = question.strip().lower()
    return tuple(f for f in SHORT_FORMS if not (f.starts and start.startswith(f.starts)))


def form_messages(question: str, form: Form) -> list[Message]:
    """The messages of the call that puts `question` in `form`: its worked example, then the question."""
    example, reply = form.example
    asked = (_filled("form", instruction=form.instruction, question=tagged("question", q)) for q in (example, question))
    first, last = asked
    return [
        {"role": "user", "content": first},
        {"role": "assistant", "content": reply},
        {"role": "user", "content": last},
    ]
