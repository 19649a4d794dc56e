"""The method's parts that run on recorded answers, without a model: the one surface the evaluation package
reaches below the public API (`selfpara`). A live request runs them through `SelfParaphraser`; a recorded
run is re-voted (`evaluation.revote`), graded and scored with the same functions, so an offline replay
decides what the live path would have decided.

- filtering recorded wordings: `drift_filter`; which of them count as independent: `independent_wordings`;
- equivalence: `build_equivalence`, `Equivalence`, `EQUIVALENCE_FUNCTIONS`, `model_free` (the functions
  that need no model), `load_nli`;
- the vote and what follows it: `cluster_answers`, `vote`, `decide_answer`, `withhold_below`,
  `answer_confidence`, `winner_confidence`;
- adaptive k's policy: `first_stage`, `settled`, `answers_to_settle`; doubt first's account: `VoteBudget`;
- the lexicon's readers of answers, for the graders: `normalize_answer`, `contains_phrase`,
  `is_abstention`, `number_set`, `final_answer`, `to_number`, `same_value`, `boxed`, `UNIT_WORDS`,
  `TENS_WORDS`.

`tests/test_architecture.py` holds the evaluation package to this module, the public API and the
`models`, `cli.common`, `cli.conventions` and `util` surfaces.
"""

from selfpara.pipeline.adaptive import answers_to_settle, first_stage, settled
from selfpara.pipeline.budget import VoteBudget
from selfpara.pipeline.confidence import answer_confidence, winner_confidence
from selfpara.pipeline.decision import decide_answer, withhold_below
from selfpara.pipeline.equivalence import EQUIVALENCE_FUNCTIONS, Equivalence, build_equivalence, model_free
from selfpara.pipeline.equivalence.nli import load_nli
from selfpara.pipeline.independence import independent_wordings
from selfpara.pipeline.lexicon.quantities import (
    TENS_WORDS,
    UNIT_WORDS,
    boxed,
    final_answer,
    number_set,
    same_value,
    to_number,
)
from selfpara.pipeline.lexicon.text import contains_phrase, is_abstention, normalize_answer
from selfpara.pipeline.paraphrase import drift_filter
from selfpara.pipeline.vote import cluster_answers, vote

__all__ = [
    "EQUIVALENCE_FUNCTIONS",
    "VoteBudget",
    "TENS_WORDS",
    "UNIT_WORDS",
    "Equivalence",
    "answer_confidence",
    "answers_to_settle",
    "boxed",
    "build_equivalence",
    "cluster_answers",
    "contains_phrase",
    "decide_answer",
    "drift_filter",
    "final_answer",
    "first_stage",
    "independent_wordings",
    "is_abstention",
    "load_nli",
    "model_free",
    "normalize_answer",
    "number_set",
    "same_value",
    "settled",
    "to_number",
    "vote",
    "winner_confidence",
    "withhold_below",
]
