"""Stage 1, paraphrase: where a request's candidate wordings come from (`lines`), how a reply is read
(`parse`) and the filters a candidate must pass before it is answered (`filter`)."""

from selfpara.pipeline.paraphrase.filter import (
    LEXICAL_REASONS,
    EquivalenceCheck,
    LexicalFilter,
    drift_filter,
    drift_rejection,
    equivalence_filter,
    lexical_filter,
)
from selfpara.pipeline.paraphrase.parse import LineParser, parse_line, parse_paraphrases, parse_yes_no

__all__ = [
    "LEXICAL_REASONS",
    "EquivalenceCheck",
    "LexicalFilter",
    "LineParser",
    "drift_filter",
    "drift_rejection",
    "equivalence_filter",
    "lexical_filter",
    "parse_line",
    "parse_paraphrases",
    "parse_yes_no",
]
