import math

import pytest

from selfpara.pipeline.equivalence import ContainsMatch, Equivalence, ExactMatch
from selfpara.pipeline.vote import VoteRule, choose_winner, cluster_answers, semantic_entropy, vote
from selfpara.result import Answer, Cluster

AGR = Equivalence([ExactMatch(), ContainsMatch()])


def answers(*texts, logprobs=None):
    return [Answer(variant=i, text=t, logprob=(logprobs or [None] * len(texts))[i]) for i, t in enumerate(texts)]


async def test_greedy_clustering_in_order():
    ans = answers("Paris", "Lyon", "It is Paris.", "lyon", "Nice")
    clusters = await cluster_answers("q", ans, AGR)
    assert [c.members for c in clusters] == [[0, 2], [1, 3], [4]]
    assert [a.cluster for a in ans] == [0, 1, 0, 1, 2]


async def test_failed_answers_are_skipped_and_abstentions_share_a_cluster():
    ans = answers("I don't know", "Paris", "No idea, sorry", "Paris")
    ans.insert(2, Answer(variant=9, error="boom"))
    clusters = await cluster_answers("q", ans, AGR)
    assert [(c.members, c.abstention) for c in clusters] == [([0, 2], True), ([1, 3], False)]
    assert ans[2].cluster is None


async def test_majority_wins():
    out = await vote("q", answers("Lyon", "Paris", "Paris"), AGR)
    assert out.returned == 1 and out.vote_share == pytest.approx(2 / 3)


def test_tie_goes_to_original_cluster():
    c = [Cluster(id=0, members=[1, 2]), Cluster(id=1, members=[0, 3])]
    assert choose_winner(c).id == 1


def test_tie_non_abstaining_beats_abstaining_even_with_original():
    c = [Cluster(id=0, members=[0, 1], abstention=True), Cluster(id=1, members=[2, 3])]
    assert choose_winner(c).id == 1


def test_tie_then_logprob_then_earlier():
    c = [Cluster(id=0, members=[1], mean_logprob=-2.0), Cluster(id=1, members=[2], mean_logprob=-0.5)]
    assert choose_winner(c).id == 1
    c = [Cluster(id=0, members=[1]), Cluster(id=1, members=[2])]
    assert choose_winner(c).id == 0


async def test_returned_text_is_most_central_when_original_lost():
    # cluster {1,2,3}: "Paris" ~ "It is Paris" ~ "Paris, France" via contains; 2 and 3 don't match each other
    ans = answers("Lyon", "Paris", "It is Paris.", "Paris is the one, France")
    out = await vote("q", ans, AGR)
    assert out.clusters[out.winner].members == [1, 2, 3]
    assert out.returned == 1


def test_semantic_entropy():
    h0, _ = semantic_entropy([3])
    assert (h0, str(h0)) == (0.0, "0.0")
    h, hn = semantic_entropy([1, 1])
    assert h == pytest.approx(math.log(2)) and hn == pytest.approx(1.0)
    h, hn = semantic_entropy([2, 1, 1])
    assert h == pytest.approx(-(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25)))
    assert hn == pytest.approx(h / math.log(4))


GUARD = VoteRule(overrule_margin=2)


async def test_a_one_vote_lead_does_not_flip_the_original():
    # k=3: two drifted paraphrases agree on "8", one more says "9": 2 vs 1 is no decisive majority
    out = await vote("q", answers("7", "8", "8", "9"), AGR, rule=GUARD)
    assert out.returned == 0 and out.winner == 0 and out.vote_share == 0.25
    assert "short of the margin 2" in out.original_kept_reason
    plain = await vote("q", answers("7", "8", "8", "9"), AGR)
    assert plain.returned == 1 and plain.original_kept_reason is None


async def test_a_decisive_majority_still_wins():
    out = await vote("q", answers("Lyon", "Paris", "Paris", "Paris"), AGR, rule=GUARD)
    assert out.returned == 1 and out.vote_share == 0.75 and out.original_kept_reason is None
    # a tie with the original is no lead at all, whatever the margin
    out = await vote("q", answers("Lyon", "Lyon", "Paris", "Paris"), AGR, rule=VoteRule(overrule_margin=0))
    assert out.returned == 0


async def test_an_abstaining_original_is_not_protected():
    out = await vote("q", answers("I don't know", "Paris", "Paris", "Lyon"), AGR, rule=GUARD)
    assert out.returned == 1 and out.original_kept_reason is None


async def test_a_vote_counts_answers_and_token_probability_breaks_ties_only():
    # two unsure answers (p ~ 0.05 each) outvote one sure one: a vote counts answers
    out = await vote("q", answers("Lyon", "Paris", "Paris", logprobs=[0.0, -3.0, -3.0]), AGR)
    assert out.returned == 1 and out.clusters[1].votes == 2.0
