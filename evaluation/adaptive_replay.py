"""Adaptive k re-derived from a recorded run: the answers it would have asked for, its calls and its answer.

A selfpara sample in a run directory records every answer in order with its cluster. Greedy
clustering never moves an earlier answer, so the clusters of the first n answers are the
recorded ones restricted to them, and adaptive k's stages can be replayed exactly on the
recording (`selfpara.pipeline.adaptive` decides, as in a live run): the answers it asks for are
always the first of fixed k's. The replay takes the whole paraphrase reply as known at once
(a reply that does not stream, as the embedded model's). A sample is left out, with the
reason, when it cannot be replayed: no evidence recorded, the sample failed, or the
recorded vote does not come out of its own clusters (recorded with another vote rule).

The returned text is recomputed from the answers adaptive k asks for; where it differs from
the recorded one the sample is left out too (its label would need grading again). With the
stopping rule of `selfpara.pipeline.adaptive` it never differs: the winning cluster is the same, and
its text is its first member's (every member joined by matching it) or the original's.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from evaluation.metrics import compute_metrics, rows_from_records
from evaluation.records import Item, Label, SampleRecord
from evaluation.revote import arm_config
from evaluation.rundir import ITEMS_FILE, SAMPLES_FILE, latest_records, read_config, read_samples
from selfpara.config import WrapConfig
from selfpara.errors import ConfigError
from selfpara.pipeline.adaptive import answers_to_settle, first_stage, settled
from selfpara.pipeline.confidence import winner_confidence
from selfpara.pipeline.decision import decide_answer, withhold_below
from selfpara.pipeline.vote import central_member, choose_winner, guard_original, weigh
from selfpara.result import Answer, Cluster, Comparison


@dataclass(frozen=True)
class Policy:
    """Adaptive k's stage sizes (None: the fewest that could settle the vote, as `WrapConfig` defaults)."""

    name: str
    first: int | None = None
    step: int | None = None


class NotReplayable(Exception):
    """A sample adaptive k cannot be replayed on; the message says why."""


@dataclass
class Replayed:
    """One sample under adaptive k, next to what fixed k recorded.

    Attributes:
        answers_fixed / answers_adaptive: answer calls (the original's and each kept paraphrase's).
        calls_fixed / calls_adaptive: every upstream call (paraphrase, checks, answers, judges).
        stages: rounds of answer calls after the first (0: the first stage settled it).
    """

    record: SampleRecord
    answers_fixed: int
    answers_adaptive: int
    calls_fixed: int
    calls_adaptive: int
    stages: int
    answer: str | None
    label: Label
    paraphrase_call: int

    @property
    def same_answer(self) -> bool:
        return self.answer == self.record.answer


def recorded_clusters(answers: list[Answer]) -> list[Cluster]:
    """The clusters of `answers` as recorded (each answer's `cluster` and `abstained`), ids in order."""
    by_id: dict[int, Cluster] = {}
    for a in answers:
        if not a.ok or a.cluster is None:
            continue
        c = by_id.setdefault(a.cluster, Cluster(id=a.cluster, members=[], abstention=a.abstained))
        c.members.append(a.variant)
    clusters = [by_id[i] for i in sorted(by_id)]
    if [c.id for c in clusters] != list(range(len(clusters))):
        raise NotReplayable("the recorded cluster ids of a prefix are not 0..n-1")
    lps = {a.variant: a.logprob for a in answers}
    for c in clusters:
        values = [lp for m in c.members if (lp := lps[m]) is not None]
        c.mean_logprob = sum(values) / len(values) if values else None
    return clusters


class _RecordedVote(NamedTuple):
    """A vote re-counted from recorded clusters: the variant it returns, the winner's vote share and its
    confidence (the recorded clusters do not say which pairs were undecided: every answer counts)."""

    returned: int
    vote_share: float
    confidence: float


def returned(answers: list[Answer], cfg: WrapConfig) -> tuple[int, str]:
    """(winning cluster id, returned text) of the vote over `answers` with their recorded clusters."""
    rule = cfg.vote_rule
    clusters = recorded_clusters(answers)
    if not clusters:
        raise NotReplayable("no answer to vote over")
    weigh(clusters, answers, rule.vote_weighting)
    winner, _ = guard_original(clusters, choose_winner(clusters), answers, rule)
    share = winner.size / sum(c.size for c in clusters)
    vote = _RecordedVote(central_member(winner), share, winner_confidence(clusters, winner.id))
    return winner.id, decide_answer(vote, answers, cfg).answer


def stages(answers: list[Answer], cfg: WrapConfig, policy: Policy) -> tuple[int, int]:
    """(paraphrases adaptive k answers, rounds after the first) over the recorded answers, in order."""
    rule = cfg.vote_rule
    share = withhold_below(cfg)
    kept = len(answers) - 1
    first = policy.first if policy.first is not None else first_stage(rule, cfg.k, share_threshold=share)
    answered, rounds = min(first, kept), 0
    while True:
        prefix = answers[: 1 + answered]
        clusters = recorded_clusters(prefix)
        remaining = kept - answered
        if settled(clusters, prefix, rule, remaining, share_threshold=share):
            return answered, rounds
        step = policy.step or max(1, answers_to_settle(clusters, prefix, rule, remaining, share_threshold=share))
        answered, rounds = min(kept, answered + step), rounds + 1


def replay_sample(record: SampleRecord, cfg: WrapConfig, policy: Policy) -> Replayed:
    """`record` (a selfpara sample with its evidence) under adaptive k. Raises NotReplayable."""
    evidence = record.details.get("evidence")
    if not isinstance(evidence, dict) or "answers" not in evidence:
        raise NotReplayable("no evidence recorded")
    if record.error is not None or record.answer is None:
        raise NotReplayable("the sample failed")
    answers = [Answer.model_validate(a) for a in evidence["answers"]]
    if [a.variant for a in answers] != list(range(len(answers))):
        raise NotReplayable("the recorded answers are not in variant order")
    comparisons = [Comparison.model_validate(c) for c in evidence.get("comparisons", [])]
    winner, text = returned(answers, cfg)
    if winner != evidence.get("winner") or text != record.answer:
        raise NotReplayable("the recorded vote does not come out of its own clusters (another vote rule?)")
    answered, rounds = stages(answers, cfg, policy)
    prefix = answers[: 1 + answered]
    _, text = returned(prefix, cfg)
    if text != record.answer:
        raise NotReplayable("adaptive k returns another text (its label would need grading again)")
    skipped = {a.variant for a in answers[1 + answered :]}
    judged = sum(1 for c in comparisons if c.decided_by == "llm" and ({c.a, c.b} & skipped))
    checks = len(skipped) if cfg.resolved_paraphrase_check == "llm" else 0
    return Replayed(
        record=record,
        answers_fixed=len(answers),
        answers_adaptive=len(prefix),
        calls_fixed=record.calls,
        calls_adaptive=record.calls - len(skipped) - checks - judged,
        stages=rounds,
        answer=text,
        label=record.label,
        paraphrase_call=1,
    )


@dataclass
class PolicyReport:
    """Adaptive k under one policy over a run, against fixed k on the same samples."""

    policy: Policy
    replayed: list[Replayed] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        n = len(self.replayed) or 1
        fixed_pa = sum(r.paraphrase_call + r.answers_fixed for r in self.replayed) / n
        adaptive_pa = sum(r.paraphrase_call + r.answers_adaptive for r in self.replayed) / n
        fixed_all = sum(r.calls_fixed for r in self.replayed) / n
        adaptive_all = sum(r.calls_adaptive for r in self.replayed) / n
        return {
            "policy": {"name": self.policy.name, "first": self.policy.first, "step": self.policy.step},
            "samples": len(self.replayed),
            "paraphrase_and_answer_calls": {
                "fixed": fixed_pa,
                "adaptive": adaptive_pa,
                "reduction": 1 - adaptive_pa / fixed_pa if fixed_pa else 0.0,
            },
            "all_upstream_calls": {
                "fixed": fixed_all,
                "adaptive": adaptive_all,
                "reduction": 1 - adaptive_all / fixed_all if fixed_all else 0.0,
            },
            "stopped_after_first_stage": sum(1 for r in self.replayed if r.stages == 0),
            "extra_rounds": dict(sorted(Counter(r.stages for r in self.replayed).items())),
            "answers_changed": sum(1 for r in self.replayed if not r.same_answer),
            "labels_changed": sum(1 for r in self.replayed if r.label != r.record.label),
            "metrics": self.metrics,
        }


@dataclass
class ReplayReport:
    run_dir: str
    arm: str
    samples: int
    complete_items: int
    left_out: dict[str, int]
    policies: list[PolicyReport]

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_dir": self.run_dir,
            "arm": self.arm,
            "samples_of_complete_items": self.samples,
            "complete_items": self.complete_items,
            "left_out": self.left_out,
            "policies": [p.summary() for p in self.policies],
        }


def _arm_config(config: dict[str, Any], arm: str) -> WrapConfig:
    try:
        return arm_config(config, arm)
    except ConfigError as exc:
        raise NotReplayable(str(exc)) from None


def _metrics(records: list[SampleRecord], adaptive: dict[tuple[str, int], Replayed], seed: int = 0) -> dict[str, Any]:
    """A_exp and A_strict of fixed k (with its 95% CI) and of adaptive k, and the paired difference."""
    fixed_rows = [r.model_copy(update={"arm": "fixed"}) for r in records]
    adaptive_rows = [
        r.model_copy(update={"arm": "adaptive", "label": adaptive[(r.item_id, r.variant_id)].label}) for r in records
    ]
    table = compute_metrics(rows_from_records(fixed_rows + adaptive_rows), seed=seed, compare=("adaptive", "fixed"))
    out: dict[str, Any] = {}
    for metric in ("A_orig", "A_exp", "A_strict"):
        fixed, ada = table.groups["fixed"][metric], table.groups["adaptive"][metric]
        diff = table.comparison(metric, "adaptive", "fixed")
        inside = None
        if ada.value is not None and fixed.lo is not None and fixed.hi is not None:
            inside = fixed.lo - 1e-12 <= ada.value <= fixed.hi + 1e-12
        out[metric] = {
            "fixed": fixed.value,
            "fixed_ci": [fixed.lo, fixed.hi],
            "adaptive": ada.value,
            "inside_fixed_ci": inside,
            "paired_diff": None if diff is None else diff.diff,
            "paired_diff_ci": None if diff is None else [diff.lo, diff.hi],
        }
    return out


def replay_run(run_dir: str | Path, policies: list[Policy], *, arm: str = "selfpara") -> ReplayReport:
    """Replay adaptive k under each policy on every sample of `arm` in `run_dir` whose item is complete
    (every variant answered by the arm); metrics over the items whose every sample replays."""
    out = Path(run_dir)
    config = read_config(out)
    cfg = _arm_config(config, arm)
    if cfg.adapts:
        raise ConfigError(
            f"arm {arm!r} already ran adaptive k; a replay needs its fixed-k answers (run it as {arm}[adaptive=false])"
        )
    lines = (out / ITEMS_FILE).read_text(encoding="utf-8").splitlines()
    items = {i.id: i for i in (Item.model_validate_json(line) for line in lines if line.strip())}
    records = [r for r in latest_records(read_samples(out / SAMPLES_FILE)) if r.arm == arm]
    by_item: dict[str, list[SampleRecord]] = {}
    for r in records:
        by_item.setdefault(r.item_id, []).append(r)
    complete = {
        i: sorted(rs, key=lambda r: r.variant_id)
        for i, rs in by_item.items()
        if i in items and {r.variant_id for r in rs} == {v.id for v in items[i].variants}
    }
    left_out: Counter[str] = Counter()
    reports = []
    usable_items = set(complete)
    for policy in policies:
        report = PolicyReport(policy=policy)
        results: dict[tuple[str, int], Replayed] = {}
        for item_id, rs in complete.items():
            for r in rs:
                try:
                    results[(r.item_id, r.variant_id)] = replay_sample(r, cfg, policy)
                except NotReplayable as exc:
                    if policy is policies[0]:
                        left_out[str(exc)] += 1
                    usable_items.discard(item_id)
        reports.append((report, results))
    for report, results in reports:
        kept = [r for i in sorted(usable_items) for r in complete[i]]
        report.replayed = [results[(r.item_id, r.variant_id)] for r in kept]
        if kept:
            report.metrics = _metrics(kept, results)
    return ReplayReport(
        run_dir=str(out),
        arm=arm,
        samples=sum(len(rs) for rs in complete.values()),
        complete_items=len(complete),
        left_out=dict(left_out),
        policies=[r for r, _ in reports],
    )


def report_json(report: ReplayReport) -> str:
    return json.dumps(report.to_dict(), indent=2)
