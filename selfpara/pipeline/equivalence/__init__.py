"""Stage 4, equivalence: whether two answers say the same thing. `functions` holds the registry of
equivalence functions (exact, numeric, contains, distinct, core, nli, nli-lenient, llm) and
`Equivalence`, which tries them cheapest first with a pair cache; `answer_core` reads what a
sentence answer adds to its question; `nli` loads a local NLI classifier."""

from selfpara.pipeline.equivalence.functions import (
    EQUIVALENCE_FUNCTIONS,
    ContainsMatch,
    CoreMatch,
    DistinctAnswers,
    Equivalence,
    EquivalenceDeps,
    EquivalenceFn,
    ExactMatch,
    LLMJudge,
    NLIEquivalence,
    NumericMatch,
    build_equivalence,
    distinct_answers,
    model_free,
    register_equivalence,
)

__all__ = [
    "EQUIVALENCE_FUNCTIONS",
    "ContainsMatch",
    "CoreMatch",
    "DistinctAnswers",
    "Equivalence",
    "EquivalenceDeps",
    "EquivalenceFn",
    "ExactMatch",
    "LLMJudge",
    "NLIEquivalence",
    "NumericMatch",
    "build_equivalence",
    "distinct_answers",
    "model_free",
    "register_equivalence",
]
