"""Stage 2, drift: cheap checks, without a model, that a paraphrase kept what the question asks
(`checks`: numbers, names, qualifiers, rates, negation; `asks`: the kind of answer and the relation
asked for; `operations`: the arithmetic asked for; `renamings`: the faithful renamings, "seat of
government" for "capital", that the checks read as the word they rename)."""

from selfpara.pipeline.drift.checks import (
    DRIFT_CHECKS,
    DriftCheck,
    entities_changed,
    negation_changed,
    numbers_changed,
    qualifiers_changed,
    rates_changed,
)

__all__ = [
    "DRIFT_CHECKS",
    "DriftCheck",
    "entities_changed",
    "negation_changed",
    "numbers_changed",
    "qualifiers_changed",
    "rates_changed",
]
