"""Greedy equivalence clustering, the majority vote with its tie rules, and semantic entropy (METHOD §2.4)."""

from __future__ import annotations

import math

from pydantic import BaseModel

from selfpara.equivalence import Equivalence
from selfpara.result import Answer, Cluster, Usage
from selfpara.text import is_abstention


class VoteOutcome(BaseModel):
    """The clusters of one set of answers and the vote over them."""

    clusters: list[Cluster]
    winner: int
    chosen: int  # variant index whose answer text is returned
    vote_share: float  # |winner| / answers voted
    entropy: float
    entropy_normalized: float


async def cluster_answers(
    question: str, answers: list[Answer], equivalence: Equivalence, usage: Usage | None = None
) -> list[Cluster]:
    """Cluster the successful answers greedily, in order; sets each Answer's `cluster` and `abstained`.

    An answer joins the first cluster whose representative (first member) it is
    equivalent to, else opens a new one. All abstentions share one cluster of their own.
    """
    clusters: list[Cluster] = []
    texts: list[str] = []  # representative text per cluster (None-safe: only ok answers)
    abstain_cluster: Cluster | None = None
    for ans in answers:
        if not ans.ok:
            continue
        text = ans.text or ""
        if is_abstention(text):
            ans.abstained = True
            if abstain_cluster is None:
                abstain_cluster = Cluster(id=len(clusters), members=[], abstention=True)
                clusters.append(abstain_cluster)
                texts.append(text)
            abstain_cluster.members.append(ans.variant)
            ans.cluster = abstain_cluster.id
            continue
        candidates = [c for c in clusters if not c.abstention]
        hit = await equivalence.equivalent_any(question, text, [texts[c.id] for c in candidates], usage)
        if hit is None:
            target = Cluster(id=len(clusters), members=[])
            clusters.append(target)
            texts.append(text)
        else:
            target = candidates[hit]
        target.members.append(ans.variant)
        ans.cluster = target.id
    by_variant = {a.variant: a for a in answers}
    for c in clusters:
        lps = [lp for m in c.members if (lp := by_variant[m].logprob) is not None]
        c.mean_logprob = sum(lps) / len(lps) if lps else None
    return clusters


def choose_winner(clusters: list[Cluster], original: int = 0) -> Cluster:
    """The largest cluster. Ties: a non-abstaining cluster beats an abstaining one, then the
    cluster holding the original's answer, then the higher mean log-probability, then the earlier."""
    if not clusters:
        raise ValueError("no clusters to vote over")
    return max(
        clusters,
        key=lambda c: (
            c.size,
            not c.abstention,
            original in c.members,
            c.mean_logprob if c.mean_logprob is not None else -math.inf,
            -c.id,
        ),
    )


def semantic_entropy(sizes: list[int]) -> tuple[float, float]:
    """Discrete semantic entropy H = -Σ p ln p over cluster shares, and H / ln(n) (0 when n = 1)."""
    n = sum(sizes)
    if n == 0:
        return 0.0, 0.0
    h = -sum((s / n) * math.log(s / n) for s in sizes if s)
    h = max(0.0, h)  # -0.0 when one cluster holds everything
    return h, (h / math.log(n) if n > 1 else 0.0)


async def central_member(
    question: str, cluster: Cluster, answers: list[Answer], equivalence: Equivalence, usage: Usage | None = None
) -> int:
    """The variant whose answer is returned: the original if in the cluster, else the member
    equivalent to the most other members (earliest on ties)."""
    if 0 in cluster.members or cluster.size <= 2 or cluster.abstention:
        return 0 if 0 in cluster.members else cluster.members[0]
    text = {a.variant: a.text or "" for a in answers}
    best, best_score = cluster.members[0], -1
    for m in cluster.members:
        others = [text[o] for o in cluster.members if o != m]
        score = 0
        for other in others:
            score += await equivalence.equivalent(question, text[m], other, usage)
        if score > best_score:
            best, best_score = m, score
    return best


async def vote(
    question: str, answers: list[Answer], equivalence: Equivalence, usage: Usage | None = None
) -> VoteOutcome:
    """Cluster `answers` (variant 0 = original), pick the winner and the text to return."""
    clusters = await cluster_answers(question, answers, equivalence, usage)
    winner = choose_winner(clusters)
    chosen = await central_member(question, winner, answers, equivalence, usage)
    h, h_norm = semantic_entropy([c.size for c in clusters])
    n = sum(c.size for c in clusters)
    return VoteOutcome(
        clusters=clusters, winner=winner.id, chosen=chosen, vote_share=winner.size / n,
        entropy=h, entropy_normalized=h_norm,
    )
