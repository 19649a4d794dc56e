"""`selfpara.pipeline.adaptive`: the settled test against brute force over every outcome of the answers to come."""

from __future__ import annotations

import asyncio
import itertools
import random

import pytest

from selfpara.pipeline.adaptive import answers_to_settle, first_stage, settled
from selfpara.pipeline.equivalence import Equivalence, ExactMatch
from selfpara.pipeline.lexicon.text import is_abstention
from selfpara.pipeline.vote import VoteRule, choose_winner, cluster_answers, guard_original, tally
from selfpara.result import Answer, Cluster

ABSTAIN = "I don't know"
FAIL = None
LOGPROBS = (None, 0.0, -1.0)  # none, the highest (weight 1), a low one


def clusters_of(answers: list[Answer]) -> list[Cluster]:
    """`cluster_answers` with exact matching, written out (fast enough to enumerate thousands of outcomes)."""
    clusters: list[Cluster] = []
    by_text: dict[str, Cluster] = {}
    for a in answers:
        if not a.ok:
            continue
        key = "\0abstain" if is_abstention(a.text or "") else a.text
        if key not in by_text:
            by_text[key] = Cluster(id=len(clusters), members=[], abstention=key == "\0abstain")
            clusters.append(by_text[key])
        by_text[key].members.append(a.variant)
    for c in clusters:
        lps = [lp for m in c.members if (lp := answers_by(answers)[m].logprob) is not None]
        c.mean_logprob = sum(lps) / len(lps) if lps else None
    return clusters


def answers_by(answers: list[Answer]) -> dict[int, Answer]:
    return {a.variant: a for a in answers}


def outcome(answers: list[Answer], rule: VoteRule) -> tuple[int, float]:
    """(winning cluster id, vote share) of the vote over `answers`."""
    clusters = clusters_of(answers)
    tally(clusters, answers)
    winner, _ = guard_original(clusters, choose_winner(clusters), answers, rule)
    return winner.id, winner.size / sum(c.size for c in clusters)


def make(texts: list[str | None], logprobs: list[float | None]) -> list[Answer]:
    return [
        Answer(variant=i, error="failed") if t is FAIL else Answer(variant=i, text=t, logprob=lp)
        for i, (t, lp) in enumerate(zip(texts, logprobs, strict=True))
    ]


def brute_force_settled(answers: list[Answer], rule: VoteRule, r: int, threshold: float | None) -> bool:
    """Whether every outcome of `r` more answers keeps the winner (and the side of `threshold`)."""
    winner, share = outcome(answers, rule)
    low = threshold is not None and share < threshold
    texts = sorted({a.text for a in answers if a.ok and not is_abstention(a.text or "")})
    choices = [FAIL, ABSTAIN, *texts, *(f"new{i}" for i in range(r))]
    per_answer = [(t, lp) for t in choices for lp in ((None,) if t is FAIL else LOGPROBS)]
    for more in itertools.product(per_answer, repeat=r):
        extra = make([t for t, _ in more], [lp for _, lp in more])
        for i, a in enumerate(extra):
            a.variant = len(answers) + i
        w, s = outcome([*answers, *extra], rule)
        if w != winner or (threshold is not None and (s < threshold) != low):
            return False
    return True


def test_the_written_out_clustering_is_cluster_answers():
    rng = random.Random(1)
    for _ in range(40):
        texts = [rng.choice(["A", "B", "C", ABSTAIN, FAIL]) for _ in range(rng.randint(1, 6))]
        answers = make(texts, [rng.choice(LOGPROBS) for _ in texts])
        real = asyncio.run(cluster_answers("q", answers, Equivalence([ExactMatch()])))
        assert [(c.members, c.abstention, c.mean_logprob) for c in real] == [
            (c.members, c.abstention, c.mean_logprob) for c in clusters_of(answers)
        ]


RULES = [
    VoteRule(overrule_margin=2.0),
    VoteRule(overrule_margin=1.0),
    VoteRule(overrule_margin=0.0),
    VoteRule(overrule_margin=1.5),
    VoteRule(overrule_margin=3.0),
]


def states(seed: int, count: int, max_seen: int):
    rng = random.Random(seed)
    for _ in range(count):
        n = rng.randint(1, max_seen)
        texts = [rng.choice(["A", "A", "B", "C", ABSTAIN, FAIL]) for _ in range(n)]
        yield make(texts, [rng.choice(LOGPROBS) for _ in texts]), rng.choice(RULES), rng.choice([None, 0.6])


@pytest.mark.parametrize("r", [1, 2])
def test_settled_is_exactly_brute_force(r):
    seen = {True: 0, False: 0}
    for answers, rule, threshold in states(seed=r, count=500 if r == 1 else 250, max_seen=5):
        if not answers[0].ok:
            continue  # the run waits for the original's answer (settled says False without it)
        claim = settled(clusters_of(answers), answers, rule, r, share_threshold=threshold)
        truth = brute_force_settled(answers, rule, r, threshold)
        assert claim == truth, (
            [(a.text, a.logprob) for a in answers],
            rule,
            r,
            threshold,
        )
        seen[claim] += 1
    assert seen[True] > 20 and seen[False] > 20  # both answers occur: the comparison means something


def test_settled_is_exactly_brute_force_with_three_to_come():
    for answers, rule, threshold in states(seed=7, count=25, max_seen=4):
        if not answers[0].ok:
            continue
        claim = settled(clusters_of(answers), answers, rule, 3, share_threshold=threshold)
        assert claim == brute_force_settled(answers, rule, 3, threshold)


def test_unanimous_answers_settle_early_and_disagreement_does_not():
    rule = VoteRule(overrule_margin=2.0)
    agree = make(["A", "A"], [None, None])
    assert settled(clusters_of(agree), agree, rule, 2)  # 2 vs at most 2: a lead of 0 cannot overrule
    assert not settled(clusters_of(agree), agree, rule, 4)  # 2 vs 4 could
    split = make(["A", "B"], [None, None])
    assert not settled(clusters_of(split), split, rule, 2)
    assert settled(clusters_of(split), split, rule, 0)


def test_the_original_is_awaited():
    later = [Answer(variant=1, text="A")]
    assert not settled(clusters_of(later), later, VoteRule(), 3)
    alone = make(["A"], [-0.1])
    assert not settled(clusters_of(alone), alone, VoteRule(overrule_margin=2), 10)


def test_stage_sizes():
    # margin 2: the original and m agreeing paraphrases settle k when (k - m) - (1 + m) < 2; at k <= 2 the
    # original cannot be overruled at all
    assert [first_stage(VoteRule(overrule_margin=2.0), k) for k in (1, 2, 3, 5, 10)] == [0, 0, 1, 2, 4]
    assert [first_stage(VoteRule(overrule_margin=1.0), k) for k in (1, 3, 5)] == [0, 1, 2]  # a tie keeps the original
    split = make(["A", "B"], [None, None])
    assert answers_to_settle(clusters_of(split), split, VoteRule(overrule_margin=2.0), 3) == 1  # A,A vs B + at most 2
    agree = make(["A", "A"], [None, None])
    assert answers_to_settle(clusters_of(agree), agree, VoteRule(overrule_margin=2.0), 2) == 0
