"""One request from question to WrappedAnswer: a short list of named stages over one state (`Request`).

    doubt first ─┬─ sure: the original's answer, no vote ────────────┐
                 └─ in doubt: gather ────────────────────────────────┴─► vote
                      (paraphrase ─► filters ─► check ─► answer, as lines arrive;
                       adaptive k stops early; top-ups fill empty slots)

`answer_request` is that list, read top to bottom; each stage is a function of its own over the request:
`doubt_first` (here: the original answered first), `gather` (`selfpara.pipeline.gather`), `vote_on` (here:
cluster, vote, decide). No stage calls back into the runner: the request holds the client and the
equivalence it was handed.
"""

from __future__ import annotations

import asyncio
import logging
import time

from selfpara.models.upstream_data import combined_failure
from selfpara.pipeline.decision import decide_answer
from selfpara.pipeline.doubt import doubt_of, over_budget
from selfpara.pipeline.gather import gather
from selfpara.pipeline.independence import independent_wordings
from selfpara.pipeline.state import Request, answer_wording
from selfpara.pipeline.vote import vote
from selfpara.result import Variant, WrappedAnswer

log = logging.getLogger(__name__)


async def answer_request(req: Request) -> WrappedAnswer:
    """Answer one request: its stages, in order.

    Args:
        req: the request, as the runner made it (settings, question, client, equivalence, given wordings).
    """
    started = time.perf_counter()
    try:
        if await doubt_first(req):  # the original is answered first; a sure answer is returned with no vote
            await gather(req)  # rewordings made, filtered, checked and answered as they come; adaptive k; top-ups
        result = await vote_on(req)  # cluster the answers, vote, decide what is returned
    finally:
        if req.reserved:  # the vote budget is charged what the vote spent beyond the original's call
            req.budget.settle(req.reserved, req.usage.calls + req.usage.cache_hits - 1)
    result.timings.total_s = time.perf_counter() - started
    log.info(
        "answered k=%d kept=%d skipped=%d vote_share=%.2f calls=%d saved=%d in %.2fs",
        *(req.cfg.k, result.k_kept, len(req.skipped), result.vote_share, req.usage.calls, req.calls_saved),
        result.timings.total_s,
    )
    return result


async def doubt_first(req: Request) -> bool:
    """Start answering the original (variant 0), and say whether a vote is spent: with `sure_probability`
    set (and wordings not given) the original's answer decides, and a sure one is all that is voted on
    (`selfpara.pipeline.doubt`); otherwise the original's answer comes in beside the rewordings'. Records
    why in `req.doubt`."""
    req.original = asyncio.create_task(answer_wording(req, 0, req.question))
    if req.given is not None or req.cfg.sure_threshold is None:
        return True
    req.doubt = doubt_of(await req.original_answer, req.cfg.sure_threshold)
    per_answer = req.cfg.budget_per_answer
    if per_answer is not None:
        doubtful, needed = req.doubt.voted, not req.original_answer.result().ok
        if req.budget.admit(per_answer, doubtful=doubtful, reserve=req.cfg.k + 1, needed=needed):
            req.reserved = req.cfg.k + 1
            req.doubt = req.doubt.model_copy(update={"budget": per_answer})
        elif doubtful:
            req.doubt = over_budget(req.doubt, per_answer, req.budget.credit)
    if not req.doubt.voted:
        req.variants, req.answers = [Variant(index=0, text=req.question)], [req.original_answer.result()]
    return req.doubt.voted


async def vote_on(req: Request) -> WrappedAnswer:
    """Cluster the answers, vote under the guard, decide what is returned and how it is flagged.
    Raises the upstream's error when every answer call failed."""
    answers, variants, cfg = req.answers, req.variants, req.cfg
    ok = [a for a in answers if a.ok]
    if not ok:
        errors = "; ".join(sorted({a.error or "" for a in answers}))
        raise combined_failure(req.failures, f"every answer call failed: {errors}")
    if len(ok) < len(answers):
        req.flags.append("partial_failure")
    if not answers[0].ok:
        req.flags.append("original_failed")
    t = time.perf_counter()
    independent = independent_wordings(variants, given=req.given is not None)
    wordings = [v.text for v in variants if not v.is_original]
    outcome = await vote(
        req.question, answers, req.equivalence, req.usage, cfg.vote_rule, independent=independent, wordings=wordings
    )
    req.timings.cluster_s = time.perf_counter() - t
    if outcome.original_kept_reason:
        req.flags.append("original_kept")
    winner = outcome.clusters[outcome.winner]
    decision = decide_answer(outcome, answers, cfg)
    req.flags.extend(decision.flags)
    if req.usage.cache_errors:
        req.flags.append("cache_unavailable")
    if req.usage.judge_failures:
        req.flags.append("judge_failed")
    if req.usage.refused_calls:
        req.flags.append("call_limit_reached")
    return WrappedAnswer(
        answer=decision.answer,
        withheld_answer=decision.withheld,
        question=req.question,
        model=cfg.model,
        k_requested=cfg.k,
        k_kept=sum(1 for v in variants[1:] if not v.top_up),
        k_topped_up=sum(1 for v in variants if v.top_up),
        variants=variants,
        rejected=req.rejected,
        answers=answers,
        clusters=outcome.clusters,
        comparisons=outcome.comparisons,
        undecided_pairs=outcome.undecided,
        winner=outcome.winner,
        vote_share=outcome.vote_share,
        confidence=outcome.confidence,
        entropy=outcome.entropy,
        entropy_normalized=outcome.entropy_normalized,
        original_won=0 in winner.members,
        original_kept_reason=outcome.original_kept_reason,
        abstained=winner.abstention or decision.withheld is not None,
        flags=req.flags,
        doubt=req.doubt,
        skipped_paraphrases=req.skipped,
        calls_saved=req.calls_saved,
        paraphrase_check=cfg.resolved_paraphrase_check,
        equivalence_functions=req.equivalence.names,
        usage=req.usage,
        timings=req.timings,
    )
