"""The method's English, in one place: every word list, alias table and pattern the method reads, and
the text analysers that read them, each once.

- `en/`: the data, as TOML files the package ships: `words.toml` (word lists and tables, the one
  alias table among them), `patterns.toml` (phrases as regular expressions: the one sentence break,
  abstentions, the arithmetic shapes), `synonyms.toml` (what the drift checks read a phrase as) and
  `renamings.toml` (the renamings table with its examples) and `prompts.toml` (every prompt the method
  sends, its worked examples and forms). A second language would be a second folder beside it.
- `tables`: reads a folder (`LEXICON`, the English one).
- `text`: words, the one stemmer (`stem`), the one sentence splitter (`sentences`), names with their
  aliases and acronyms, negation, abstention, answer normalisation, the synonyms read.
- `quantities`: numbers in text, the final answer of a worked answer, the arithmetic asked for.
- `renamings`: applies the renamings table.

The drift checks, the renamings, the independence rule and the equivalence functions read only this;
the evaluation's graders read its answer normalisation and numbers.
"""

from selfpara.pipeline.lexicon.quantities import number_set, numbers, operation
from selfpara.pipeline.lexicon.renamings import RENAMINGS, Renamed, renamings
from selfpara.pipeline.lexicon.tables import LEXICON
from selfpara.pipeline.lexicon.text import (
    STOPWORDS,
    contains_phrase,
    is_abstention,
    normalize_answer,
    sentences,
    stem,
    words,
)

__all__ = [
    "LEXICON",
    "RENAMINGS",
    "STOPWORDS",
    "Renamed",
    "contains_phrase",
    "is_abstention",
    "normalize_answer",
    "number_set",
    "numbers",
    "operation",
    "renamings",
    "sentences",
    "stem",
    "words",
]
