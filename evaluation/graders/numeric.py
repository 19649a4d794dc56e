"""`numeric`: a math answer's final value against the gold by value; numbers written in words."""

from __future__ import annotations

import re
from collections.abc import Sequence

from evaluation.graders.base import label_by_match
from evaluation.graders.registry import register_grader
from evaluation.records import Item, Label
from selfpara.pipeline.offline import TENS_WORDS as _TENS_WORDS
from selfpara.pipeline.offline import UNIT_WORDS as _UNITS_WORDS
from selfpara.pipeline.offline import boxed, final_answer, same_value, to_number

_SCALE_WORDS = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_NUMBER_WORD_RUN = re.compile(
    r"\b(?:(?:" + "|".join([*_UNITS_WORDS, *_TENS_WORDS, *_SCALE_WORDS, "a"]) + r")\b(?:[\s-]+(?:and[\s-]+)?)?)+",
    re.IGNORECASE,
)


def word_number(text: str) -> int | None:
    """The value of the last run of English number words in `text` ("twenty-four" -> 24), else None."""
    best: int | None = None
    for match in _NUMBER_WORD_RUN.finditer(text):
        tokens = [t for t in re.split(r"[\s-]+", match.group(0).lower()) if t and t != "and"]
        if tokens and tokens[0] == "a":
            tokens = tokens[1:] if len(tokens) > 1 and tokens[1] in _SCALE_WORDS else []
        if not tokens or "a" in tokens:
            continue
        total, current, ok = 0, 0, True
        for token in tokens:
            if token in _UNITS_WORDS:
                current += _UNITS_WORDS[token]
            elif token in _TENS_WORDS:
                current += _TENS_WORDS[token]
            elif token == "hundred":
                current = max(current, 1) * 100
            elif token in _SCALE_WORDS:
                total += max(current, 1) * _SCALE_WORDS[token]
                current = 0
            else:
                ok = False
        if ok:
            best = total + current
    return best


class NumericGrader:
    """Math final-answer match (METHOD §5): extract, normalize, compare by value.

    The answer's final answer is `\\boxed{...}`, then `#### ...`, then "the answer is ...",
    then the last number (`selfpara.pipeline.offline.final_answer`); failing all of these, a
    number written in words. A gold that is a worked solution ("... #### 18") is reduced
    to its final answer the same way. Values compare as exact fractions ("3/4" = "0.75"
    = "\\frac{3}{4}"), non-numeric answers by normalized LaTeX text. Missing answers and
    abstentions that do not state the gold are not_attempted.
    """

    name = "numeric"

    async def grade(self, item: Item, answer: str | None) -> Label:
        return label_by_match(answer, item.gold, self.matches)

    @staticmethod
    def final(answer: str) -> str | None:
        """The final answer stated in `answer`; numbers written in words become digits."""
        found = final_answer(answer)
        if found is None:
            spelled = word_number(answer)
            return None if spelled is None else str(spelled)
        if to_number(found) is None and boxed(answer) is None:
            spelled = word_number(found)  # "the answer is twelve"
            if spelled is not None:
                return str(spelled)
        return found

    def matches(self, answer: str, gold: Sequence[str]) -> bool:
        stated = self.final(answer)
        if stated is None:
            return False
        for target in gold:
            reference = target
            if "####" in target or boxed(target) is not None:
                reference = final_answer(target) or target
            if _same(stated, reference):
                return True
        return False


_LATEX_NOISE = re.compile(r"\\left|\\right|\\!|\\,|\\;|\\displaystyle|\$|\s+")


def _same(a: str, b: str) -> bool:
    if same_value(a, b):
        return True

    # light symbolic normalisation: \dfrac -> \frac, x = 5 -> 5, \text{...} unwrapped, ^\circ dropped
    def norm(s: str) -> str:
        s = re.sub(r"\\[dt]frac", r"\\frac", s)
        s = re.sub(r"\\text\{([^{}]*)\}", r"\1", s)
        s = re.sub(r"^\s*[a-zA-Z]\s*=\s*", "", s)
        s = s.replace("^\\circ", "").replace("^{\\circ}", "")
        return _LATEX_NOISE.sub("", s).rstrip(".").lower()

    na, nb = norm(a), norm(b)
    if na == nb and na:
        return True
    va, vb = to_number(na), to_number(nb)
    return va is not None and va == vb


@register_grader("numeric", "math")
def _numeric(**_: object) -> NumericGrader:
    return NumericGrader()
