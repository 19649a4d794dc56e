"""When the vote is settled: the test adaptive k stops on, and how many answers to ask for next.

Adaptive k answers the original and a few paraphrases, then asks whether the answers still
to come could change what the vote returns. `settled` decides that exactly for the vote of
`selfpara.pipeline.vote` (greedy clusters, the plurality with its tie rules, the original's guard
with its margin, count or log-probability weighting), under this model of an answer not
yet seen: it may fail, abstain, join any existing cluster or open a new one (which later
answers may join), and carry any mean token log-probability (≤ 0) or none. Greedy
clustering never moves an earlier answer, so the clusters of the answers seen stay as they
are whatever comes after them.

The adversary's best moves are few: give every remaining answer the most weight (1) and
send all of them to one cluster. Either the strongest challenger of the winner gathers
them (and wins any tie it can win on log-probability, with each new answer's at 0), or the
original's cluster does (undoing an overrule). `tests/test_adaptive.py` checks this
against every outcome of the remaining answers, enumerated.
"""

from __future__ import annotations

import math
from collections.abc import Collection

from selfpara.pipeline.vote import ORIGINAL, VoteRule, choose_winner, guard_original, weigh
from selfpara.result import Answer, Cluster


def _grown(votes: float, remaining: int) -> float:
    """`votes` after `remaining` answers of weight 1 join, added one at a time as `weigh` sums them."""
    for _ in range(remaining):
        votes += 1.0
    return votes


def _best_mean(cluster: Cluster | None, answers: dict[int, Answer], remaining: int) -> float:
    """The highest mean token log-probability `cluster` (None: a new one) can reach with `remaining` answers
    of weight 1 joining it: each brings a log-probability of 0 (or none, where that is higher)."""
    lps = [] if cluster is None else [lp for m in cluster.members if (lp := answers[m].logprob) is not None]
    if not lps:
        return 0.0
    return sum(lps) / (len(lps) + remaining)


def _tie_key(cluster: Cluster | None, mean: float, new_id: int) -> tuple[bool, bool, float, int]:
    """`choose_winner`'s tie-break after the votes, for `cluster` (None: a new, non-abstaining one)."""
    if cluster is None:
        return (True, False, mean, -new_id)
    return (not cluster.abstention, ORIGINAL in cluster.members, mean, -cluster.id)


def _overtakes(
    challenger: Cluster | None, leader: Cluster, clusters: list[Cluster], answers: dict[int, Answer], r: int
) -> bool:
    """Whether `challenger` (None: a new cluster) can end above `leader` in `choose_winner`'s order when
    all `r` remaining answers join it and none joins the leader."""
    votes = _grown(0.0 if challenger is None else (challenger.votes or 0.0), r)
    lead = leader.votes or 0.0
    if votes != lead:
        return votes > lead
    mine = _tie_key(challenger, _best_mean(challenger, answers, r), len(clusters))
    theirs = _tie_key(leader, leader.mean_logprob if leader.mean_logprob is not None else -math.inf, len(clusters))
    return mine > theirs


def _winner_holds(clusters: list[Cluster], answers: dict[int, Answer], rule: VoteRule, r: int) -> bool:
    """Whether the current winner stays the winner whatever the `r` remaining answers are."""
    winner, _ = guard_original(clusters, choose_winner(clusters), list(answers.values()), rule)
    mine = next((c for c in clusters if ORIGINAL in c.members), None)
    guarded = mine is not None and not mine.abstention
    if guarded:
        assert mine is not None
        own = mine.votes or 0.0
        if winner is mine:
            # Lost only to a challenger ending ahead by the margin; with margin 0, to one strictly ahead
            # (the original's cluster wins ties).
            best = _grown(max((c.votes or 0.0 for c in clusters if c is not mine), default=0.0), r)
            return best - own < rule.overrule_margin if rule.overrule_margin > 0 else best <= own
        # Overruled: the original's cluster may gather the rest and undo it (it wins ties too).
        grown = _grown(own, r)
        if (winner.votes or 0.0) - grown < rule.overrule_margin or grown >= (winner.votes or 0.0):
            return False
    # A plurality (or an overrule that stands against the original): no other cluster may overtake it.
    others: list[Cluster | None] = [c for c in clusters if c is not winner and not (guarded and c is mine)]
    return not any(_overtakes(c, winner, clusters, answers, r) for c in [*others, None])


def settled(
    clusters: list[Cluster],
    answers: list[Answer],
    rule: VoteRule,
    remaining: int,
    *,
    share_threshold: float | None = None,
    independent: Collection[int] | None = None,
    more_independent: bool = True,
) -> bool:
    """Whether the vote's outcome is fixed, whatever the `remaining` answers not yet seen turn out to be.

    Args:
        clusters: the clusters of `answers` (from `cluster_answers`); their votes are set here.
        answers: the answers seen so far (the original, variant 0, among them), in order.
        rule: the vote rule (margin, confident log-probability, weighting).
        remaining: answers that may still come (at most); 0 settles the vote.
        share_threshold: also require the winner's vote share to stay on one side of this
            (the low-vote-share policy's threshold, when it changes the answer); None: ignore shares.
        independent: the seen answers' variants whose wording the paraphrase call could not steer
            (`guard_original`); None: the guard without that condition.
        more_independent: whether an answer still to come may be to such a wording.

    "Fixed" means the same winning cluster (and, with `share_threshold`, the same side of it).
    Exact without `independent`; with it, never wrong but it may wait for answers the guard's
    independence condition makes moot: the test is the one without it, plus that a challenger
    holding the vote without an independent wording cannot gain one.
    """
    if remaining <= 0:
        return True
    by_variant = {a.variant: a for a in answers}
    if not clusters or ORIGINAL not in by_variant:
        return False  # the original's answer decides the guard: wait for it
    weigh(clusters, answers, rule.vote_weighting)
    if not _winner_holds(clusters, by_variant, rule, remaining):
        return False
    if independent is not None and more_independent:
        leader, _ = guard_original(clusters, choose_winner(clusters), answers, rule)
        if ORIGINAL not in leader.members and not any(m in independent for m in leader.members):
            return False  # kept out by the guard now; an independent answer joining it would let it win
    if share_threshold is None:
        return True
    winner, _ = guard_original(clusters, choose_winner(clusters), answers, rule, independent=independent)
    n = sum(c.size for c in clusters)
    lowest, highest = winner.size / (n + remaining), (winner.size + remaining) / (n + remaining)
    return lowest >= share_threshold or highest < share_threshold


def answers_to_settle(
    clusters: list[Cluster],
    answers: list[Answer],
    rule: VoteRule,
    remaining: int,
    *,
    share_threshold: float | None = None,
) -> int:
    """The fewest more answers after which the vote could be settled, if they all join the current winner
    (0: settled now; `remaining` at most)."""
    for more in range(max(remaining, 0) + 1):
        trial = [c.model_copy(deep=True) for c in clusters]
        joined = [Answer(variant=-1 - i, text="") for i in range(more)]
        if trial and more:
            weigh(trial, answers, rule.vote_weighting)
            lead, _ = guard_original(trial, choose_winner(trial), answers, rule)
            lead.members.extend(a.variant for a in joined)
        if settled(trial, [*answers, *joined], rule, remaining - more, share_threshold=share_threshold):
            return more
    return max(remaining, 0)


def first_stage(rule: VoteRule, k: int, *, share_threshold: float | None = None) -> int:
    """Paraphrases to answer with the original at first: the fewest that could settle the vote
    if they all agree with the original (k at most)."""
    original = [Answer(variant=ORIGINAL, text="")]
    return answers_to_settle([Cluster(id=0, members=[ORIGINAL])], original, rule, k, share_threshold=share_threshold)
