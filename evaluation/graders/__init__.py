"""Graders: turn an answer into a correctness label (METHOD §5).

Every grader has `async grade(item, answer) -> Label` with Label one of "correct",
"incorrect", "not_attempted". A missing answer (None: the call failed) and an
abstention ("I don't know") are "not_attempted".

- `MatchGrader`: normalized exact / alias / contains match against the gold aliases;
- `NumericGrader`: the final answer (\\boxed{}, ####, "the answer is", last number)
  compared with the gold by value (fractions, decimals, thousands separators, units);
- `TruthfulGrader`: TruthfulQA convention by matching: a false reference in the answer
  makes it incorrect, a true one correct, otherwise the closer reference decides;
- `NLIGrader`: entailment of the gold by the answer (given the question), with an
  `entail(premise, hypothesis) -> float` callable or a `selfpara.pipeline.equivalence.nli.NLIModel`;
- `LLMGrader`: a model judges, SimpleQA convention (CORRECT / INCORRECT /
  NOT_ATTEMPTED, sees the original question, the gold and the response) or TruthfulQA
  convention (sees the true and the false references);
- `AutoGrader`: picks by the item's kind (factual: match, math: numeric, truthful: truthful).

Each grader is one module that registers its names (`registry.register_grader`);
`grader_for(kind, name)` builds one by name.
"""

from __future__ import annotations

# The built-in graders register themselves on import, in this order: the order GRADERS
# lists them in, as the table above does.
# isort: off
from evaluation.graders import match, numeric, truthful, nli, llm  # noqa: F401

# isort: on
from evaluation.graders.auto import AutoGrader
from evaluation.graders.base import Grader, label_by_match
from evaluation.graders.choose import grader_for
from evaluation.graders.llm import LLMGrader, parse_verdict
from evaluation.graders.match import MatchGrader
from evaluation.graders.nli import NLIGrader
from evaluation.graders.numeric import NumericGrader, word_number
from evaluation.graders.registry import GRADERS, check_grader_name, register_grader
from evaluation.graders.truthful import TruthfulGrader, token_f1

__all__ = [
    "GRADERS",
    "AutoGrader",
    "Grader",
    "LLMGrader",
    "MatchGrader",
    "NLIGrader",
    "NumericGrader",
    "TruthfulGrader",
    "check_grader_name",
    "grader_for",
    "label_by_match",
    "parse_verdict",
    "register_grader",
    "token_f1",
    "word_number",
]
