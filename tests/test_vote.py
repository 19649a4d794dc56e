import math

import pytest

from selfpara.equivalence import ContainsMatch, Equivalence, ExactMatch
from selfpara.result import Answer, Cluster
from selfpara.vote import choose_winner, cluster_answers, semantic_entropy, vote

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
    assert out.chosen == 1 and out.vote_share == pytest.approx(2 / 3)


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
    assert out.chosen == 1


def test_semantic_entropy():
    h0, _ = semantic_entropy([3])
    assert (h0, str(h0)) == (0.0, "0.0")
    h, hn = semantic_entropy([1, 1])
    assert h == pytest.approx(math.log(2)) and hn == pytest.approx(1.0)
    h, hn = semantic_entropy([2, 1, 1])
    assert h == pytest.approx(-(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25)))
    assert hn == pytest.approx(h / math.log(4))
