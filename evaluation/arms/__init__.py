"""Arms: the ways of answering one variant that a benchmark compares (METHOD §6).

    raw          one greedy call
    selfpara     the selfpara pipeline (any WrapConfig settings)
    sc           self-consistency: k+1 samples at temperature > 0, same clustered vote
    single_call  one call that writes k paraphrases, then one final answer
    rar          rephrase-and-respond: rewrite the question, then answer it
    oracle       a measuring instrument: selfpara's vote over the item's other dataset wordings
    se           semantic entropy: k+2 samples at temperature 1, confidence = the largest cluster's share
    hybrid       rewordings x samples: selfpara's kept paraphrases, each answered several times

An arm is named by a spec string: a name, optionally with settings in brackets,
`selfpara[k=5;equivalence=exact,numeric]`. The spec, as normalised by `parse_arm_spec`,
is the arm's label in logs and reports, so two variants of one arm can run side by side.

Each arm is one module that registers its class with `@register_arm` (`registry.py`);
a new arm is one more such module, imported below.
"""

from __future__ import annotations

# The built-in arms register themselves on import, in this order: the order in which error
# messages list them, as the table above does.
# isort: off
from evaluation.arms import raw, selfpara_arm, self_consistency, single_call, rephrase_respond, oracle  # noqa: F401
from evaluation.arms import semantic_entropy, hybrid  # noqa: F401

# isort: on
from evaluation.arms.base import Arm, ArmOutput, sample_seed
from evaluation.arms.registry import ARMS, register_arm, resolve_arm_name
from evaluation.arms.spec import ArmSpec, make_arm, parse_arm_list, parse_arm_spec

__all__ = [
    "ARMS",
    "Arm",
    "ArmOutput",
    "ArmSpec",
    "make_arm",
    "parse_arm_list",
    "parse_arm_spec",
    "register_arm",
    "resolve_arm_name",
    "sample_seed",
]
