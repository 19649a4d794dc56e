"""Re-vote a recorded run under stricter settings, with no model call: what a guard would have changed.

A selfpara sample records every wording it answered and every answer. A change that only
*removes* paraphrases (another drift check) or changes how the recorded answers are
counted (overrule margin or rule, weighting, low-vote-share policy) can be applied to that record
exactly: the paraphrases the new checks reject are dropped, the remaining answers are
clustered again with the arm's own cheap equivalence functions and voted under the new
rule, and a changed answer is graded again with the run's grader. The result is written
as a new arm of a copy of the run, so `selfpara report` scores it beside the others.

Doubt first (`sure_probability`) replays too, on a run whose arm voted on every question: an
original whose recorded token probability reaches the threshold gets its own answer and the cost of
that one call, which is the run's raw arm's record of the same wording (the same greedy call); the
others keep the vote. So one always-on run gives the whole cost-gain curve of the gate
(`research/gate_curve.py`).

Adaptive k (`adaptive=true`) replays on an arm that ran fixed k: greedy clustering never moves an
earlier answer, so its stages are replayed on the recorded answers in order (`selfpara.pipeline.adaptive`
decides, as in a live run, the whole paraphrase reply taken as known at once), and the vote runs on the
answers it would have asked for. A sample's calls lose those of the answers it skipped (an answer call,
a check call where an LLM checked paraphrases, the judge calls that compared their answers); its tokens,
cost and latency stay the fixed-k run's. This is the one offline replay: the re-vote is how a recorded
run answers "what would this setting have done".

`regrade_run` grades every sample of a run again with today's grader, nothing else changed: labels are
written when a sample is answered, so a grader fixed later (or a re-vote, which grades the answers it
changes with the grader of the moment) would leave a run graded two ways.

    python -m evaluation.revote RUN OUT --arm selfpara --set drift_checks=numbers,entities,asks
    python -m evaluation.revote RUN OUT --regrade

Not replayable (the arm is refused): settings that would answer wordings the run never
answered (fewer drift checks, a larger k), and equivalence or grading that needs a model.
"""

from __future__ import annotations

import json
import math
import shutil
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from evaluation.arms.evidence import recorded_confidence
from evaluation.arms.registry import ARMS
from evaluation.datasets.items import load_items
from evaluation.graders import grader_for
from evaluation.records import Item, SampleRecord
from evaluation.rundir import ITEMS_FILE, SAMPLES_FILE, latest_records, load_bench_config, read_config, read_samples
from selfpara.config import WrapConfig, build_config
from selfpara.errors import ConfigError
from selfpara.pipeline.offline import (
    Equivalence,
    VoteBudget,
    answer_confidence,
    answers_to_settle,
    build_equivalence,
    cluster_answers,
    decide_answer,
    drift_filter,
    first_stage,
    independent_wordings,
    model_free,
    settled,
    vote,
    withhold_below,
)
from selfpara.result import Answer, Comparison, RejectedParaphrase, Variant


@dataclass
class Change:
    """One re-voted sample whose answer differs from the recorded one."""

    item_id: str
    variant_id: int
    dropped: list[str]
    before: str | None
    after: str | None
    label_before: str
    label_after: str


def arm_config(config: dict[str, Any], arm: str) -> WrapConfig:
    """The WrapConfig a run's `arm` answered with (from its config.json)."""
    described = next((a for a in config.get("arms", []) if a.get("label") == arm), None)
    if described is None:
        raise ConfigError(f"the run has no {arm!r} arm")
    # selfpara records its whole config; a voting baseline (sc) only its own settings.
    recorded = described.get("config") or {**described.get("settings", {}), "model": described.get("model")}
    known = {k: v for k, v in recorded.items() if k in WrapConfig.model_fields and v is not None}
    if "sure_probability" in recorded and recorded["sure_probability"] is None:
        known["sure_probability"] = "off"  # recorded before it took "auto"/"off": None was off
    if described.get("config") and "vote_budget" not in recorded:
        known["vote_budget"] = "off"  # recorded before the vote budget: its votes had no cap
    return build_config(**known)


def _check_replayable(before: WrapConfig, after: WrapConfig) -> None:
    if not set(before.drift_check_names) <= set(after.drift_check_names):
        raise ConfigError("the re-vote can only add drift checks: fewer would keep paraphrases never answered")
    if after.k != before.k or after.max_overlap != before.max_overlap:
        raise ConfigError("the re-vote cannot change k or the overlap rule (other wordings would be answered)")
    if after.top_up_temperature != before.top_up_temperature:
        raise ConfigError("the re-vote cannot change top_up_temperature (other answers would be sampled)")
    if after.top_up_temperature is not None and after.drift_check_names != before.drift_check_names:
        raise ConfigError(
            "the re-vote cannot add drift checks to a topped-up run: the slots they free were never sampled"
        )
    if model_free(after.equivalence_functions) != after.equivalence_functions:
        raise ConfigError("the re-vote runs no model: use cheap equivalence functions (exact, numeric, ...)")
    if before.sure_threshold is not None and after.sure_threshold != before.sure_threshold:
        raise ConfigError("the re-vote can set sure_probability only on an arm that voted on every question")
    if before.adapts and not after.adapts:
        raise ConfigError("the arm ran adaptive k: the answers it skipped were never asked for")


def _check_settled(records: list[SampleRecord], arm: str, before: WrapConfig, after: WrapConfig) -> None:
    """Refuse to re-vote an adaptive arm under another vote rule or more drift checks where it left paraphrases
    unanswered: it stopped once *its own* rule was settled, and the new one may need their answers."""
    if before.vote_rule == after.vote_rule and before.drift_check_names == after.drift_check_names:
        return
    ours = [r for r in records if r.arm == arm and not r.error]
    short = sum(1 for r in ours if r.skipped_paraphrases)
    if short:
        raise ConfigError(
            f"{short} of {len(ours)} samples of {arm!r} left paraphrases unanswered (adaptive k settled the vote "
            "under the arm's own rule), so another vote rule or drift check may need answers the run never asked "
            "for: re-run the arm with adaptive=false to re-vote it"
        )


def _original_logprob(record: SampleRecord) -> float | None:
    """The recorded mean token log-probability of the original's answer (None where it failed or none was)."""
    evidence = record.details.get("evidence")
    answers = evidence.get("answers", []) if isinstance(evidence, dict) else []
    original = next((a for a in answers if a.get("variant") == 0 and a.get("error") is None), None)
    return original.get("logprob") if original else None


def _original_failed(record: SampleRecord) -> bool:
    """Whether the recorded vote holds the original's answer call as failed (the vote was its only answer)."""
    evidence = record.details.get("evidence")
    answers = evidence.get("answers", []) if isinstance(evidence, dict) else []
    return any(a.get("variant") == 0 and a.get("error") is not None for a in answers)


def sure(record: SampleRecord, threshold: float | None) -> bool:
    """Whether doubt first at `threshold` returns `record`'s original answer without a vote: its recorded token
    probability (the original's mean token log-probability in the evidence) reaches the threshold."""
    logprob = _original_logprob(record)
    return threshold is not None and logprob is not None and math.exp(min(0.0, logprob)) >= threshold


class Revoted(NamedTuple):
    """One sample re-voted: its answer, the paraphrases the new drift checks dropped, the vote's figures, and
    under adaptive k the kept paraphrases it did not answer and the calls that spared."""

    answer: str | None
    dropped: list[str]
    vote_share: float
    confidence: float | None
    skipped: list[str] = []
    calls_saved: int = 0


async def adaptive_prefix(
    question: str, answers: list[Answer], variants: list[Variant], cfg: WrapConfig, equivalence: Equivalence
) -> int:
    """How many paraphrases adaptive k answers of `answers` (the original's first, then each kept wording's in
    order, `variants` their wordings): its stages replayed as a live request takes them (`selfpara.pipeline.gather`)."""
    rule, share = cfg.vote_rule, withhold_below(cfg)
    kept = len(answers) - 1
    answered = min(first_stage(rule, cfg.k, share_threshold=share), kept)
    while True:
        prefix = answers[: 1 + answered]
        wordings = [v.text for v in variants[1 : 1 + answered]]
        clusters = await cluster_answers(question, prefix, equivalence, wordings=wordings)
        independent = independent_wordings(variants[: 1 + answered])
        remaining = kept - answered
        if settled(clusters, prefix, rule, remaining, share_threshold=share, independent=independent):
            return answered
        answered = min(
            kept, answered + max(1, answers_to_settle(clusters, prefix, rule, remaining, share_threshold=share))
        )


def _calls_spared(record: SampleRecord, skipped: set[int], cfg: WrapConfig) -> int:
    """The calls a sample's skipped answers (their variants) had cost: each answer, its check where an LLM checked
    paraphrases, and the judge calls that compared it."""
    evidence = record.details.get("evidence") or {}
    comparisons = [Comparison.model_validate(c) for c in evidence.get("comparisons", [])]
    judged = sum(1 for c in comparisons if c.decided_by == "llm" and {c.a, c.b} & skipped)
    checks = len(skipped) if cfg.resolved_paraphrase_check == "llm" else 0
    return len(skipped) + checks + judged


async def revote_sample(
    record: SampleRecord, cfg: WrapConfig, equivalence: Equivalence, *, given: bool = False, adapt: bool = False
) -> Revoted:
    """`record` re-voted under `cfg` (as it was, where it holds no evidence to re-vote).

    `given`: the arm voted with wordings it was given (`Arm.given_wordings`, the oracle), which
    the pipeline never filters; they are voted as they were, not drift-checked. `adapt`: replay
    adaptive k on the fixed-k record (not on given wordings or a topped-up vote, which it never runs on).
    """
    evidence = record.details.get("evidence")
    as_was = Revoted(
        record.answer, [], float(record.details.get("vote_share") or 0.0), recorded_confidence(record.details)
    )
    if not isinstance(evidence, dict) or record.answer is None:
        return as_was
    variants = {v["index"]: v["text"] for v in evidence["variants"]}
    question = variants[0]
    answers = [Answer.model_validate(a) for a in evidence["answers"]]
    rejected: list[RejectedParaphrase] = []
    if given:
        kept = set(variants)
    else:
        kept_texts, rejected = drift_filter(
            question, [variants[i] for i in sorted(variants) if i], cfg.drift_check_names
        )
        kept = {0} | {i for i in variants if i and variants[i] in kept_texts}
    subset = [a for a in answers if a.variant in kept]
    if not any(a.ok for a in subset):
        return as_was._replace(dropped=[r.text for r in rejected])
    recorded = [Variant.model_validate(v) for v in evidence["variants"]]
    skipped: list[Variant] = []
    if adapt and not given and not any(v.top_up for v in recorded):
        ordered = [v for v in sorted(recorded, key=lambda v: v.index) if v.index in kept]
        answered = await adaptive_prefix(question, subset, ordered, cfg, equivalence)
        subset, skipped = subset[: 1 + answered], ordered[1 + answered :]
        kept -= {v.index for v in skipped}
    independent = independent_wordings(recorded, given=given)
    wordings = [variants[i] for i in sorted(kept) if i]
    outcome = await vote(question, subset, equivalence, None, cfg.vote_rule, independent=independent, wordings=wordings)
    return Revoted(
        decide_answer(outcome, subset, cfg).answer,
        [r.text for r in rejected],
        outcome.vote_share,
        outcome.confidence,
        [v.text for v in skipped],
        _calls_spared(record, {v.index for v in skipped}, cfg),
    )


async def revote_run(
    run_dir: str | Path, out: str | Path, changes: dict[str, Any], *, arm: str = "selfpara", label: str | None = None
) -> list[Change]:
    """Copy `run_dir` to `out` and add arm `label` (default `arm+changes`): `arm`'s samples re-voted
    under `changes` (WrapConfig fields). Returns the samples whose answer changed."""
    src, dst = Path(run_dir), Path(out)
    if dst.exists():
        raise ConfigError(f"{dst} exists; choose a new directory for the re-voted run")
    config = read_config(src)
    before = arm_config(config, arm)
    after = before.with_overrides(**changes)
    _check_replayable(before, after)
    # An arm voting with given wordings (the oracle's) never filtered them: a drift check cannot replay on them.
    described = next(a for a in config["arms"] if a.get("label") == arm)  # arm_config found it
    given = ARMS.knows(described.get("arm", "")) and ARMS[described["arm"]].given_wordings
    if given and after.drift_check_names != before.drift_check_names:
        raise ConfigError(f"{arm!r} votes with given wordings, which no drift check filters: re-vote its rule only")
    label = label or arm + "+" + ",".join(f"{k}={v}" for k, v in changes.items())
    items = {
        i.id: i
        for i in (Item.model_validate_json(line) for line in (src / ITEMS_FILE).read_text().splitlines() if line)
    }
    equivalence = build_equivalence(after.equivalence_functions, client=None, judge_model="")  # type: ignore[arg-type]
    records = latest_records(read_samples(src / SAMPLES_FILE))
    _check_settled(records, arm, before, after)
    raw = {(r.item_id, r.variant_id): r for r in records if r.arm == "raw"}
    replay_gate = after.sure_threshold is not None and after.sure_threshold != before.sure_threshold
    if replay_gate and not raw:
        raise ConfigError("re-voting sure_probability needs the run's raw arm: its records are what one call costs")
    # The vote budget replays in the order the run recorded its answers, each vote charged the calls it made.
    per_answer, budget = (after.budget_per_answer if replay_gate else None), VoteBudget()
    new: list[SampleRecord] = []
    changed: list[Change] = []
    for r in records:
        if r.arm != arm:
            continue
        voted = not replay_gate or not sure(r, after.sure_threshold)
        if per_answer is not None:
            admitted = budget.admit(per_answer, doubtful=voted, reserve=after.k + 1, needed=_original_failed(r))
            if admitted:
                budget.settle(after.k + 1, r.calls - 1)
            voted = admitted
        one_call = None if voted else raw.get((r.item_id, r.variant_id))
        if one_call is not None:  # doubt first: the original's own answer, at the cost of its one call
            cost = {f: getattr(one_call, f) for f in _COST}
            alone = answer_confidence(1, 1, _original_logprob(r))
            details = {
                **r.details,
                "vote_share": 1.0,
                "confidence": alone,
                "revote": {"from": arm, "voted": False},
            }
            answer, lab = one_call.answer, one_call.label
            if answer != r.answer:
                changed.append(Change(r.item_id, r.variant_id, [], r.answer, answer, r.label, lab))
            new.append(r.model_copy(update={"arm": label, "answer": answer, "label": lab, "details": details, **cost}))
            continue
        answer, dropped, share, confidence, skipped, saved = await revote_sample(
            r, after, equivalence, given=given, adapt=after.adapts and not before.adapts
        )
        lab = r.label
        if answer != r.answer:
            item = items[r.item_id]
            lab = await grader_for(item.kind).grade(item, answer)
            changed.append(Change(r.item_id, r.variant_id, dropped, r.answer, answer, r.label, lab))
        details = {**r.details, "vote_share": share, "revote": {"from": arm, "dropped": dropped}}
        if confidence is not None:
            details["confidence"] = confidence
        if skipped:  # adaptive k: what the live arm reports of the paraphrases it did not answer
            details["k_kept"] = int(details.get("k_kept", 0)) - len(skipped)
            details["evidence"] = {**details["evidence"], "skipped_paraphrases": skipped, "calls_saved": saved}
        update = {"arm": label, "answer": answer, "label": lab, "details": details, "calls": r.calls - saved}
        new.append(r.model_copy(update=update))
    shutil.copytree(src, dst)
    with (dst / SAMPLES_FILE).open("a", encoding="utf-8") as f:
        for r in new:
            f.write(r.model_dump_json() + "\n")
    config["arms"].append({**described, "label": label, "config": after.model_dump(mode="json"), "revote": changes})
    (dst / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return changed


async def regrade_run(run_dir: str | Path, out: str | Path) -> Counter[tuple[str, str]]:
    """Copy `run_dir` to `out` with every sample graded again; returns (old label, new label) counts.

    Args:
        run_dir: a bench run directory (config.json, items.jsonl, samples.jsonl).
        out: where the regraded copy goes; must not exist.
    """
    src, dst = Path(run_dir), Path(out)
    if dst.exists():
        raise ConfigError(f"{dst} exists; choose a new directory for the regraded run")
    grader_name = load_bench_config(src).grader
    items = {item.id: item for item in load_items(src / ITEMS_FILE)}
    moves: Counter[tuple[str, str]] = Counter()
    regraded = []
    for r in latest_records(read_samples(src / SAMPLES_FILE)):
        item = items[r.item_id]
        label = r.label if r.error else await grader_for(item.kind, grader_name).grade(item, r.answer)
        moves[(r.label, label)] += 1
        regraded.append(r.model_copy(update={"label": label}))
    shutil.copytree(src, dst)
    (dst / SAMPLES_FILE).write_text("".join(r.model_dump_json() + "\n" for r in regraded), encoding="utf-8")
    return moves


_COST = ("calls", "prompt_tokens", "completion_tokens", "cost", "latency_s", "model_s", "queue_s")
"""What a record says an answer cost: taken from the raw record where doubt first makes one call."""


def main() -> None:
    """`python -m evaluation.revote RUN OUT --arm selfpara --set equivalence=exact,numeric [--label L]`, or
    `... RUN OUT --regrade`."""
    import argparse
    import asyncio

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--arm", default="selfpara", help="the recorded arm to re-vote")
    parser.add_argument("--set", dest="changes", action="append", default=[], metavar="SETTING=VALUE")
    parser.add_argument("--label", help="the new arm's label (default: ARM+SETTING=VALUE,...)")
    parser.add_argument("--regrade", action="store_true", help="grade every sample again instead, nothing else")
    args = parser.parse_args()
    if args.regrade:
        for (before, after), n in sorted(asyncio.run(regrade_run(args.run, args.out)).items()):
            print(f"{before:>14} -> {after:<14} {n}")
        return
    changes: dict[str, Any] = {}
    for pair in args.changes:
        key, sep, value = pair.partition("=")
        if not sep:
            parser.error(f"--set takes SETTING=VALUE, not {pair!r}")
        changes[key.strip()] = value.strip()
    changed = asyncio.run(revote_run(args.run, args.out, changes, arm=args.arm, label=args.label))
    print(f"{len(changed)} answers changed")
    for c in changed:
        print(f"  {c.item_id}#{c.variant_id}: {c.label_before} -> {c.label_after}: {c.before!r} -> {c.after!r}")


if __name__ == "__main__":
    main()
