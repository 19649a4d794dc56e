import math

import pytest

from selfpara.pipeline.confidence import agreement_estimate, answer_confidence, winner_confidence
from selfpara.pipeline.equivalence import ContainsMatch, DistinctAnswers, Equivalence, ExactMatch
from selfpara.pipeline.vote import vote
from selfpara.result import Answer, Cluster

AGR = Equivalence([ExactMatch(), ContainsMatch(), DistinctAnswers()])
UNSURE = Equivalence([ExactMatch(), ContainsMatch()])  # cannot tell Lyon from Paris


def test_agreement_estimate_is_the_rule_of_succession():
    assert agreement_estimate(1, 1) == pytest.approx(2 / 3)  # one answer alone is not full agreement
    assert agreement_estimate(4, 4) == pytest.approx(5 / 6)
    assert agreement_estimate(2, 4) == pytest.approx(1 / 2)
    assert agreement_estimate(0, 0) == pytest.approx(1 / 2)


def test_more_agreeing_evidence_means_more_confidence():
    # the vote share is 1.0 in all three; the estimate grows with the number of wordings
    assert agreement_estimate(1, 1) < agreement_estimate(2, 2) < agreement_estimate(4, 4)


def test_agreement_estimate_rejects_impossible_counts():
    with pytest.raises(ValueError, match="between 0 and"):
        agreement_estimate(3, 2)
    with pytest.raises(ValueError):
        agreement_estimate(-1, 2)


def test_answer_confidence_multiplies_in_the_token_probability():
    assert answer_confidence(3, 4, None) == pytest.approx(4 / 6)
    assert answer_confidence(3, 4, math.log(0.9)) == pytest.approx(4 / 6 * 0.9)
    # a (numerically) positive mean log-probability is not a probability above 1
    assert answer_confidence(3, 4, 1e-9) == pytest.approx(4 / 6)


async def test_vote_reports_the_confidence_of_its_winner():
    ans = [
        Answer(variant=0, text="Lyon", logprob=-0.1),
        Answer(variant=1, text="Paris", logprob=-0.2),
        Answer(variant=2, text="Paris", logprob=-0.4),
    ]
    out = await vote("q", ans, AGR)
    assert out.returned == 1
    assert out.confidence == pytest.approx((2 + 1) / (3 + 2) * math.exp(-0.3))


async def test_answers_no_function_could_compare_are_not_evidence_against_the_winner():
    ans = [
        Answer(variant=0, text="Lyon", logprob=-0.1),
        Answer(variant=1, text="Paris", logprob=-0.2),
        Answer(variant=2, text="Paris", logprob=-0.4),
    ]
    sure, unsure = await vote("q", ans, AGR), await vote("q", ans, UNSURE)
    assert (sure.undecided, unsure.undecided) == (0, 2)  # each Paris against Lyon
    # the same clusters and winner either way; Lyon counts against Paris only where it was told apart
    assert [c.members for c in sure.clusters] == [c.members for c in unsure.clusters] == [[0], [1, 2]]
    assert unsure.confidence == pytest.approx((2 + 1) / (2 + 2) * math.exp(-0.3))
    assert unsure.confidence > sure.confidence


async def test_a_lone_answer_is_less_confident_than_its_vote_share_says():
    out = await vote("q", [Answer(variant=0, text="Paris")], AGR)
    assert out.vote_share == 1.0 and out.confidence == pytest.approx(2 / 3)


def test_winner_confidence_reads_the_winner_among_all_clusters():
    clusters = [Cluster(id=0, members=[0]), Cluster(id=1, members=[1, 2, 3], mean_logprob=math.log(0.5))]
    assert winner_confidence(clusters, 1) == pytest.approx(4 / 6 * 0.5)
    assert winner_confidence(clusters, 0) == pytest.approx(2 / 6)
    with pytest.raises(ValueError, match="winner's id 7"):
        winner_confidence(clusters, 7)
    # a cluster undecided against the winner drops out of the count; the winner itself never does
    assert winner_confidence(clusters, 1, unknown={0}) == pytest.approx(4 / 5 * 0.5)
    assert winner_confidence(clusters, 1, unknown={1}) == pytest.approx(4 / 6 * 0.5)
