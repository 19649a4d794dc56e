"""The stages of one request, in the order a question meets them (METHOD §2), and what they read:

    doubt first ─► paraphrase ─► drift ─► check ─► answer ─► equivalence ─► vote ─► decision
         └ the original answered first; a sure answer is returned with no vote

- `request`: the list of stages, top to bottom (`answer_request`), over one state (`state.Request`);
- `doubt`: doubt first, whether the original's answer is sure enough to return without a vote;
- `gather`: the rewordings made, filtered, checked and answered as they arrive; adaptive k's policy
  (`adaptive`: asks the vote whether it is settled) and top-ups;
- `paraphrase/`: where candidate wordings come from (`lines`, the model calls in `calls`), how a reply
  is read (`parse`) and the cheap filters (`filter`);
- `drift/`: cheap checks that a wording kept what the question asks; `independence`: which wordings the
  paraphrase call could not steer;
- `equivalence/`: whether two answers say the same thing;
- `vote`: greedy clustering, the majority with its tie rules and the guard of the original;
  `confidence`: how far to trust the winner; `decision`: from the vote to the answer returned;
- `lexicon/`: the method's English (word lists, aliases, patterns, renamings) and the text analysers;
- `prompts`: every prompt selfpara sends on its own behalf.

`selfpara.paraphraser.SelfParaphraser` makes each request and runs it; the stages imported here read
no settings and are importable on their own (the settings module validates names against their
registries).
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
