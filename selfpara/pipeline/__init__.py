"""The stages of one request, in the order a question meets them (METHOD §2):

    question ──► paraphrase ──► drift ──► answer (fan-out) ──► equivalence ──► vote ──► decision
        └────────── original answered at once, in parallel ──┘

- `paraphrase/`: candidate wordings, read from the model's reply and filtered (near-copies);
- `drift/`: cheap checks that a wording kept what the question asks;
- `request`: one request's event loop, the stages above in order: each kept wording answered
  as it lands, adaptive k's stages (`adaptive`), then the vote;
- `equivalence/`: whether two answers say the same thing;
- `vote`: greedy clustering, the majority with its tie rules and the guard of the original;
  `confidence`: how far to trust the winner;
- `decision`: from the vote to the answer returned (withheld or flagged on a low vote share);
- `prompts`: every prompt selfpara sends on its own behalf.

`selfpara.paraphraser.SelfParaphraser` runs them; the stages here that read no settings are
importable on their own (the settings module validates names against their registries).
"""

from selfpara.pipeline.drift import DRIFT_CHECKS
from selfpara.pipeline.equivalence import EQUIVALENCE_FUNCTIONS, Equivalence, build_equivalence
from selfpara.pipeline.paraphrase import drift_filter, lexical_filter, parse_paraphrases
from selfpara.pipeline.vote import VoteOutcome, VoteRule, cluster_answers, vote

__all__ = [
    "DRIFT_CHECKS",
    "EQUIVALENCE_FUNCTIONS",
    "Equivalence",
    "VoteOutcome",
    "VoteRule",
    "build_equivalence",
    "cluster_answers",
    "drift_filter",
    "lexical_filter",
    "parse_paraphrases",
    "vote",
]
