"""Which wordings of a request the paraphrase call could not steer: the vote guard
(`selfpara.pipeline.vote.guard_original`) lets no challenger overrule the original's answer without
one. The kinds, why each counts, and the probe: docs/guards.md#injection-the-paraphrase-call-does-not-decide-alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from selfpara.pipeline.lexicon.tables import LEXICON
from selfpara.pipeline.lexicon.text import STOPWORDS, stem, words
from selfpara.result import Variant

FORM_WORDS = LEXICON.word_set("independence.form_words")
"""Words a sentence form adds or drops without changing what is asked (`en/words.toml` says where they come from)."""


def independent_wordings(variants: Sequence[Variant], *, given: bool = False) -> set[int]:
    """Variant indices whose wording the paraphrase call could not steer (never the original's 0).

    Args:
        variants: the request's wordings, the original (index 0) among them.
        given: the caller gave every wording (no paraphrase call was made).
    """
    question = next((v.text for v in variants if v.is_original), None)
    return {
        v.index
        for v in variants
        if not v.is_original
        and (
            given or v.top_up or v.verified or is_renaming(v) or (question is not None and same_words(question, v.text))
        )
    }


def is_renaming(variant: Variant) -> bool:
    """Whether `variant` was made by the renamings table (no model wrote it)."""
    return (variant.source or "").startswith("renaming:")


def same_words(question: str, wording: str) -> bool:
    """Whether `wording` is made of `question`'s own content words: none dropped, none added (`FORM_WORDS` aside).
    Words are compared by stem, short ones too: a changed element symbol ("Nb" to "Xe") counts."""
    return _content_stems(question) - _FORM_STEMS == _content_stems(wording) - _FORM_STEMS


def _content_stems(text: str) -> set[str]:
    return {stem(w) for w in words(text) if w not in STOPWORDS}


_FORM_STEMS = frozenset(stem(w) for w in FORM_WORDS)
