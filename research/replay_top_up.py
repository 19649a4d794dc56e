"""Replay top-up offline on a recorded run that has raw, sc and selfpara arms: no model call.

For each wording, the recorded selfpara evidence gives the paraphrases (filtered again with
the current default drift checks) and their greedy answers; the sc arm's samples of the original
fill the slots no kept paraphrase fills, as `top_up_temperature` would (slot i's seed is
sc's sample i - 1 when both use seed 0). Two more mixes show what the paraphrases add: the
original with every sc sample, and with both (`mixes`). Each combination is voted with
selfpara's own `vote`, at margins 1 and 2, its answer returned as the live run would (`decide_answer`,
under the selfpara arm's low-vote-share policy), and graded like the run.

    python research/replay_top_up.py RUN_DIR [SELFPARA_ARM]     # the selfpara arm's label, default selfpara

Prints A_strict, A_orig and the questions raw answered right in every wording that each
combination lost. This is how docs/results/qwen-gsm8k-topup.md replays the sample set.
"""

from __future__ import annotations

import asyncio
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from evaluation.datasets.items import load_items
from evaluation.graders import grader_for
from evaluation.records import SampleRecord
from evaluation.revote import arm_config
from evaluation.rundir import ITEMS_FILE, SAMPLES_FILE, latest_records, read_config, read_samples
from evaluation.stats import paired_bootstrap, percentile_interval, rng_for
from selfpara.config import build_config
from selfpara.pipeline.decision import decide_answer
from selfpara.pipeline.equivalence import build_equivalence
from selfpara.pipeline.paraphrase import drift_filter
from selfpara.pipeline.vote import VoteRule, vote
from selfpara.result import Answer

CHECKS = build_config().drift_check_names
BASELINES = ("raw", "sc")


def mixes(original: str, paraphrased: list[str], samples: list[str], k: int) -> dict[str, list[str]]:
    """The answers each replayed combination votes over, the original's first.

    `selfpara`: the kept paraphrases' answers. `top-up`: those, with sc's samples filling the
    empty slots up to k. `samples`: every sc sample and no paraphrase (sc with the greedy
    original). `both`: every kept paraphrase and every sc sample.
    """
    return {
        "selfpara": [original, *paraphrased],
        "top-up": [original, *paraphrased, *samples[len(paraphrased) : k]],
        "samples": [original, *samples],
        "both": [original, *paraphrased, *samples],
    }


async def replay(run: Path, selfpara: str = "selfpara") -> dict[str, dict[str, dict[int, bool]]]:
    """Correctness per combination, question and wording (`selfpara`: the label of the selfpara arm)."""
    items = {i.id: i for i in load_items(run / ITEMS_FILE)}
    rows: dict[tuple[str, int], dict[str, SampleRecord]] = defaultdict(dict)
    for r in latest_records(read_samples(run / SAMPLES_FILE)):
        rows[(r.item_id, r.variant_id)][r.arm] = r
    # the selfpara arm's own equivalence functions (a re-vote runs no model, so cheap ones only)
    # and low-vote-share policy (an arm that abstained returns abstention_text here too)
    cfg = arm_config(read_config(run), selfpara)
    equivalence = build_equivalence(cfg.equivalence_functions, client=None, judge_model="")  # type: ignore[arg-type]
    out: dict[str, dict[str, dict[int, bool]]] = defaultdict(lambda: defaultdict(dict))
    for (item_id, vid), arms in rows.items():
        if not {*BASELINES, selfpara} <= set(arms) or not (evidence := arms[selfpara].details.get("evidence")):
            continue
        item = items[item_id]
        variants = {v["index"]: v["text"] for v in evidence["variants"] if not v.get("top_up")}
        question = variants[0]
        kept, _ = drift_filter(question, [variants[i] for i in sorted(variants) if i], CHECKS)
        paraphrased = [
            a["text"] for a in evidence["answers"] if a["variant"] in variants and variants[a["variant"]] in kept
        ]
        samples = arms["sc"].details["answers"]
        original = arms["raw"].answer
        out["raw"][item_id][vid] = arms["raw"].label == "correct"
        for name, texts in mixes(original, paraphrased, samples, evidence["k_requested"]).items():
            for margin in (1, 2):
                answers = [Answer(variant=i, text=t) for i, t in enumerate(texts)]
                outcome = await vote(question, answers, equivalence, None, VoteRule(overrule_margin=margin))
                label = await grader_for(item.kind).grade(item, decide_answer(outcome, answers, cfg).answer)
                out[f"{name}, margin {margin}"][item_id][vid] = label == "correct"
    # only questions answered in every wording by every arm (an interrupted run leaves some short)
    complete = {q for q, by_variant in out["raw"].items() if len(by_variant) == len(items[q].variants)}
    return {name: {q: v for q, v in by_q.items() if q in complete} for name, by_q in out.items()}


def strict_gain(a: list[bool], b: list[bool]) -> str:
    """A_strict of a − b over the same questions, with a paired bootstrap 95% CI (2,000 resamples)."""
    ones = np.ones((len(a), 1))
    point, reps = paired_bootstrap(
        np.array(a, dtype=float)[:, None],
        ones,
        np.array(b, dtype=float)[:, None],
        ones,
        n_boot=2000,
        rng=rng_for(0, "replay"),
    )
    lo, hi = percentile_interval(reps)
    return f"{point[0]:+.3f} [{lo[0]:+.3f}, {hi[0]:+.3f}]"


def main(run: Path, selfpara: str = "selfpara") -> None:
    results = asyncio.run(replay(run, selfpara))
    raw = results["raw"]
    questions = list(raw)
    consistent = [q for q in questions if all(raw[q].values())]
    strict = {name: [all(by_q[q].values()) for q in questions] for name, by_q in results.items()}
    print(f"{len(questions)} questions; {len(consistent)} answered right in every wording by raw")
    for name, by_question in results.items():
        orig = sum(by_question[q][0] for q in questions) / len(questions)
        lost = sum(not all(by_question[q].values()) for q in consistent)
        print(
            f"{name:20s} A_strict {sum(strict[name]) / len(questions):.3f} "
            f"(− raw {strict_gain(strict[name], strict['raw'])})  A_orig {orig:.3f}  raw-consistent lost {lost}"
        )
    print(
        f"top-up − samples, margin 1: A_strict {strict_gain(strict['top-up, margin 1'], strict['samples, margin 1'])}"
    )


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    main(Path(sys.argv[1]), *sys.argv[2:])
