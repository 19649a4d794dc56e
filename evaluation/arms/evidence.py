"""What a voting arm records about each answer: the vote's summary and the pipeline's whole evidence.

The evidence is the `WrappedAnswer` itself, minus what the record holds elsewhere (the
answer, usage) or what is not evidence (timings): variants, each rejected paraphrase
with its reason and detail, each answer with its cluster, the clusters, every compared
pair with the function that decided it, flags. It is dumped generically, so fields the
pipeline adds later reach the per-sample log without a change here.
"""

from __future__ import annotations

from typing import Any

from selfpara.pipeline.offline import winner_confidence
from selfpara.result import Cluster, WrappedAnswer

_NOT_EVIDENCE = {"answer", "question", "model", "usage", "timings"}
"""Fields the record keeps elsewhere (answer, calls and tokens) or that do not explain the decision."""


def evidence(wrapped: WrappedAnswer) -> dict[str, Any]:
    """Everything the WrappedAnswer says about how it decided, JSON-ready (new fields included)."""
    return wrapped.model_dump(mode="json", exclude=_NOT_EVIDENCE)


def recorded_confidence(details: dict[str, Any]) -> float | None:
    """The answer's confidence as recorded, or computed from the recorded evidence for runs saved
    before the pipeline reported one (None when neither is there)."""
    if details.get("confidence") is not None:
        return float(details["confidence"])
    ev = details.get("evidence")
    if not isinstance(ev, dict) or not ev.get("clusters") or ev.get("winner") is None:
        return None
    clusters = [Cluster.model_validate(c) for c in ev["clusters"]]
    if all(c.id != ev["winner"] for c in clusters):
        return None
    return winner_confidence(clusters, ev["winner"])


def vote_details(wrapped: WrappedAnswer) -> dict[str, Any]:
    """The details every voting arm (selfpara, sc) records: the vote's summary, then the full evidence.

    The summary keys (vote_share, entropy, ...) are what reports read; `evidence` is for
    finding out afterwards why an answer won.
    """
    return {
        "vote_share": wrapped.vote_share,
        # unrounded: a threshold calibrated on it is compared with the live value, which is not rounded
        "confidence": wrapped.confidence,
        "entropy": round(wrapped.entropy, 4),
        "entropy_normalized": round(wrapped.entropy_normalized, 4),
        "original_won": wrapped.original_won,
        "abstained": wrapped.abstained,
        "flags": list(wrapped.flags),
        "answers": [a.text if a.ok else None for a in wrapped.answers],
        "clusters": [a.cluster for a in wrapped.answers],
        "evidence": evidence(wrapped),
    }
