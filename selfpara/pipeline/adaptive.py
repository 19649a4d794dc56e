"""Adaptive k's policy: when the vote is settled (no answer still to come can change what
`selfpara.pipeline.vote.winner_of` returns), and how many answers to ask for next. The adversary's
moves and the tests: docs/adaptive.md#adaptive-k-adaptive-default-on-for-embedded-models.
"""

from __future__ import annotations

from collections.abc import Collection

from selfpara.pipeline.vote import ORIGINAL, VoteRule, tally, winner_of
from selfpara.result import Answer, Cluster


def _with_joined(clusters: list[Cluster], target: int | None, joined: list[Answer]) -> list[Cluster]:
    """Copies of `clusters` with the `joined` answers' variants in the cluster of id `target` (None: a new
    cluster, whose id comes after theirs)."""
    trial = [c.model_copy(deep=True) for c in clusters]
    members = [a.variant for a in joined]
    if target is None:
        trial.append(Cluster(id=len(trial), members=members))
    else:
        next(c for c in trial if c.id == target).members.extend(members)
    return trial


def _winner_holds(clusters: list[Cluster], answers: list[Answer], rule: VoteRule, remaining: int) -> bool:
    """Whether the vote's winner stays the winner whatever the `remaining` answers not yet seen are."""
    tally(clusters, answers)
    winner = winner_of(clusters, answers, rule).id
    first = min(a.variant for a in answers) - 1
    unseen = [Answer(variant=first - i, text="", logprob=0.0) for i in range(remaining)]
    for target in [*(c.id for c in clusters), None]:
        trial = _with_joined(clusters, target, unseen)
        tally(trial, [*answers, *unseen])
        if winner_of(trial, [*answers, *unseen], rule).id != winner:
            return False
    return True


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
        rule: the vote rule (its margin).
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
    if not clusters or ORIGINAL not in {a.variant for a in answers}:
        return False  # the original's answer decides the guard: wait for it
    if not _winner_holds(clusters, answers, rule, remaining):
        return False
    if independent is not None and more_independent:
        leader = winner_of(clusters, answers, rule)
        if ORIGINAL not in leader.members and not any(m in independent for m in leader.members):
            return False  # kept out by the guard now; an independent answer joining it would let it win
    if share_threshold is None:
        return True
    winner = winner_of(clusters, answers, rule, independent=independent)
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
    (0: settled now; `remaining` at most): the size of adaptive k's next stage."""
    for more in range(max(remaining, 0) + 1):
        joined = [Answer(variant=-1 - i, text="") for i in range(more)]
        trial = [c.model_copy(deep=True) for c in clusters]
        if trial and more:
            tally(trial, answers)
            trial = _with_joined(trial, winner_of(trial, answers, rule).id, joined)
        if settled(trial, [*answers, *joined], rule, remaining - more, share_threshold=share_threshold):
            return more
    return max(remaining, 0)


def first_stage(rule: VoteRule, k: int, *, share_threshold: float | None = None) -> int:
    """Paraphrases to answer with the original at first: the fewest that could settle the vote
    if they all agree with the original (k at most)."""
    original = [Answer(variant=ORIGINAL, text="")]
    return answers_to_settle([Cluster(id=0, members=[ORIGINAL])], original, rule, k, share_threshold=share_threshold)
