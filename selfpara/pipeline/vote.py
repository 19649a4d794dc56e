"""Greedy equivalence clustering, the majority vote with its tie rules and the guard that keeps the
original's answer unless a decisive majority overrules it, and semantic entropy (METHOD §2.4, §2.6)."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

from pydantic import BaseModel, ConfigDict, Field

from selfpara.pipeline.confidence import winner_confidence
from selfpara.pipeline.equivalence import Equivalence
from selfpara.pipeline.lexicon.text import is_abstention
from selfpara.result import Answer, Cluster, Comparison, Usage

ORIGINAL = 0
"""Variant index of the original question's answer."""


class VoteRule(BaseModel):
    """When the original's answer may be overruled (WrapConfig's field of the same name).

    The default is the plain vote: the largest cluster wins, ties go to the original's.
    """

    model_config = ConfigDict(frozen=True)

    overrule_margin: float = Field(
        1.0, ge=0.0, description="Votes by which a cluster must lead the original's cluster to overrule it."
    )


class VoteOutcome(BaseModel):
    """The clusters of one set of answers and the vote over them."""

    clusters: list[Cluster]
    winner: int
    returned: int  # variant index whose answer text is returned
    vote_share: float  # |winner| / answers voted
    confidence: float  # see selfpara.pipeline.confidence: the vote's evidence times the winner's token probability
    entropy: float
    entropy_normalized: float
    original_kept_reason: str | None = None  # why the guard kept the original over a larger cluster
    comparisons: list[Comparison] = []  # every pair compared, with what decided it
    undecided: int = 0  # pairs no equivalence function decided (counted as different)


async def cluster_answers(
    question: str,
    answers: list[Answer],
    equivalence: Equivalence,
    usage: Usage | None = None,
    comparisons: list[Comparison] | None = None,
    wordings: Sequence[str] = (),
) -> list[Cluster]:
    """Cluster the successful answers greedily, in order; sets each Answer's `cluster` and `abstained`.

    An answer joins the first cluster whose representative (first member) it is
    equivalent to, else opens a new one. All abstentions share one cluster of their own.
    Each pair compared is appended to `comparisons` when given. `wordings`: the other wordings the
    answers replied to (`Equivalence.decide`).
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
        verdicts = await equivalence.decide_all(question, text, [texts[c.id] for c in candidates], usage, wordings)
        if comparisons is not None:
            comparisons.extend(
                Comparison(a=ans.variant, b=c.members[0], equivalent=same, decided_by=by)
                for c, (same, by) in zip(candidates, verdicts, strict=True)
            )
        hit = next((i for i, (same, _) in enumerate(verdicts) if same), None)
        if hit is None:
            target = Cluster(id=len(clusters), members=[])
            clusters.append(target)
            texts.append(text)
        else:
            target = candidates[hit]
        target.members.append(ans.variant)
        ans.cluster = target.id
    tally(clusters, answers)
    return clusters


def tally(clusters: list[Cluster], answers: list[Answer]) -> None:
    """Set each cluster's `votes` (one per answer) and `mean_logprob` (of its answers that report one: the
    tie-break after the votes) from its members, whose answers are among `answers`."""
    by_variant = {a.variant: a for a in answers}
    for c in clusters:
        lps = [lp for m in c.members if (lp := by_variant[m].logprob) is not None]
        c.mean_logprob = sum(lps) / len(lps) if lps else None
        c.votes = float(c.size)


def winner_of(
    clusters: list[Cluster], answers: list[Answer], rule: VoteRule, independent: Collection[int] | None = None
) -> Cluster:
    """The cluster the vote returns: the plurality (`choose_winner`) once the original is guarded
    (`guard_original`), over `clusters` as tallied (`tally`)."""
    return guard_original(clusters, choose_winner(clusters), answers, rule, independent=independent)[0]


def choose_winner(clusters: list[Cluster], original: int = 0) -> Cluster:
    """The cluster with the most votes. Ties: a non-abstaining cluster beats an abstaining one, then
    the cluster holding the original's answer, then the higher mean log-probability, then the earlier."""
    if not clusters:
        raise ValueError("no clusters to vote over")
    return max(
        clusters,
        key=lambda c: (
            c.votes if c.votes is not None else c.size,
            not c.abstention,
            original in c.members,
            c.mean_logprob if c.mean_logprob is not None else -math.inf,
            -c.id,
        ),
    )


def guard_original(
    clusters: list[Cluster],
    plurality: Cluster,
    answers: list[Answer],
    rule: VoteRule,
    original: int = 0,
    independent: Collection[int] | None = None,
) -> tuple[Cluster, str | None]:
    """The winner once the original is protected: (cluster, why the original was kept or None).

    The original's cluster loses to `plurality` only when `plurality` leads it by at least
    `rule.overrule_margin` votes and, where `independent` is given,
    `plurality` holds an answer to one of those wordings (ones the paraphrase call could not steer): the
    paraphrase call alone may not carry the vote (`selfpara.pipeline.independence`). An abstaining
    original is not protected: there is no answer to keep. `independent` None: no such condition
    (re-votes of records that do not say where a wording came from).
    """
    mine = next((c for c in clusters if original in c.members), None)
    if mine is None or mine is plurality or mine.abstention:
        return plurality, None
    lead = (plurality.votes or 0.0) - (mine.votes or 0.0)
    if lead < rule.overrule_margin:
        return mine, f"challenger leads by {lead:.3g} vote(s), short of the margin {rule.overrule_margin:g}"
    if independent is not None and not any(m in independent for m in plurality.members):
        return mine, (
            f"challenger leads by {lead:.3g} vote(s), but every wording it holds came from the paraphrase call "
            "(no renaming, sample of the original, given wording or line of the question's own words agrees)"
        )
    return plurality, None


def undecided_with(clusters: list[Cluster], comparisons: list[Comparison], cluster_id: int) -> set[int]:
    """Ids of the clusters whose first member's comparison with the first member of `cluster_id` was undecided.

    Clustering compares each answer with the first member of every earlier cluster, so two
    clusters' first members were compared exactly once, and that verdict is the one that
    kept them apart.
    """
    firsts = {c.members[0]: c.id for c in clusters if c.members}
    mine = next((c.members[0] for c in clusters if c.id == cluster_id and c.members), None)
    found: set[int] = set()
    for cmp in comparisons:
        if cmp.decided_by != Equivalence.UNDECIDED or mine not in (cmp.a, cmp.b):
            continue
        other = cmp.b if cmp.a == mine else cmp.a
        if other in firsts and firsts[other] != cluster_id:
            found.add(firsts[other])
    return found


def semantic_entropy(sizes: list[int]) -> tuple[float, float]:
    """Discrete semantic entropy H = -Σ p ln p over cluster shares, and H / ln(n) (0 when n = 1)."""
    n = sum(sizes)
    if n == 0:
        return 0.0, 0.0
    h = -sum((s / n) * math.log(s / n) for s in sizes if s)
    h = max(0.0, h)  # -0.0 when one cluster holds everything
    return h, (h / math.log(n) if n > 1 else 0.0)


def central_member(cluster: Cluster) -> int:
    """The variant whose answer is returned: the original if in the cluster, else the member equivalent
    to the most other members, earliest on ties. That is always the cluster's first member: every
    other member joined the cluster by matching it (`cluster_answers`), so it agrees with all of
    them, the most any member can; no pair needs comparing to find it."""
    return ORIGINAL if ORIGINAL in cluster.members else cluster.members[0]


async def vote(
    question: str,
    answers: list[Answer],
    equivalence: Equivalence,
    usage: Usage | None = None,
    rule: VoteRule | None = None,
    independent: Collection[int] | None = None,
    wordings: Sequence[str] = (),
) -> VoteOutcome:
    """Cluster `answers` (variant 0 = original), pick the winner and the text to return.

    `rule` (default: the plain vote) sets the original's protection; `independent`
    the variants whose wording did not come from the paraphrase call (see `guard_original`); `wordings` the
    other wordings the answers replied to (`Equivalence.decide`).
    """
    rule = rule or VoteRule()
    comparisons: list[Comparison] = []
    clusters = await cluster_answers(question, answers, equivalence, usage, comparisons, wordings)
    winner, kept = guard_original(clusters, choose_winner(clusters), answers, rule, independent=independent)
    returned = central_member(winner)
    h, h_norm = semantic_entropy([c.size for c in clusters])
    n = sum(c.size for c in clusters)
    return VoteOutcome(
        clusters=clusters,
        winner=winner.id,
        returned=returned,
        vote_share=winner.size / n,
        confidence=winner_confidence(clusters, winner.id, undecided_with(clusters, comparisons, winner.id)),
        entropy=h,
        entropy_normalized=h_norm,
        original_kept_reason=kept,
        comparisons=comparisons,
        undecided=sum(1 for c in comparisons if c.decided_by == Equivalence.UNDECIDED),
    )
