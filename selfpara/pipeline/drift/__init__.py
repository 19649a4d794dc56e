"""Stage 2, drift: cheap checks, without a model, that a paraphrase kept what the question asks
(`checks`: numbers, names, qualifiers, rates; `asks`: the kind of answer, the relation and
the arithmetic asked for). The words they read, and the synonyms they read as the words they stand
for ("seat of government" for "capital"), are the lexicon's (`selfpara.pipeline.lexicon`)."""

from selfpara.pipeline.drift.checks import (
    DRIFT_CHECKS,
    DriftCheck,
    entities_changed,
    numbers_changed,
    qualifiers_changed,
    rates_changed,
)

__all__ = [
    "DRIFT_CHECKS",
    "DriftCheck",
    "entities_changed",
    "numbers_changed",
    "qualifiers_changed",
    "rates_changed",
]
