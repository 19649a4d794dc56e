"""One request's state, which every stage reads and writes, and the one call every stage makes: answer a
wording. The stages themselves, in order, are `selfpara.pipeline.request.answer_request`'s."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from selfpara.config import WrapConfig
from selfpara.errors import UpstreamError
from selfpara.models.client import ModelClient
from selfpara.pipeline.budget import VoteBudget
from selfpara.pipeline.doubt import doubt_of
from selfpara.pipeline.equivalence import Equivalence
from selfpara.result import Answer, Doubt, Flag, Message, RejectedParaphrase, Timings, Usage, Variant


@dataclass
class Request:
    """One request, from the question to what the vote is given; lives only for that request.

    The runner (`SelfParaphraser`) fills the first fields and hands over what outlives a request (the
    client, the equivalence with its pair cache); the stages fill the rest.

    Attributes:
        cfg: the request's settings.
        messages: the conversation; its last (user) message is the question.
        question: the question's text.
        client: the model door every call goes through.
        equivalence: whether two answers say the same (the vote's, and adaptive k's).
        given: wordings to answer as given (no generation, no filter, no adaptive k); None: generate.
        seeds: seed of each answer call by variant index (the original's first).
        budget: the wrapper's vote budget account (doubt first's cap on what votes cost); reserved: the calls
            this request's vote reserved in it (0: no vote charged).
        usage, timings, flags: what the request spent, how long each stage took, what it noticed.
        failures: the answer calls' upstream errors (the request's own error when no answer came back).
        doubt: whether a vote was spent and why (doubt first).
        original: the original wording's answer call, started first.
        variants, answers: the wordings voted (the original first) and their answers, in the same order.
        rejected: the candidates the filters and the check rejected, in the order the filters list them.
        skipped: the candidates adaptive k did not need; calls_saved: the calls that spared.
        spans: [start, end] of the answer calls and of the checks, for the timings.
    """

    cfg: WrapConfig
    messages: list[Message]
    question: str
    client: ModelClient
    equivalence: Equivalence
    given: list[str] | None = None
    seeds: list[int] = field(default_factory=list)
    budget: VoteBudget = field(default_factory=VoteBudget)
    reserved: int = 0
    usage: Usage = field(init=False)
    timings: Timings = field(default_factory=Timings)
    flags: list[Flag] = field(default_factory=list)
    failures: list[UpstreamError] = field(default_factory=list)
    doubt: Doubt = field(default_factory=lambda: doubt_of(Answer(variant=0), None))
    original: asyncio.Task[Answer] | None = None
    variants: list[Variant] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)
    rejected: list[RejectedParaphrase] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    calls_saved: int = 0
    spans: dict[str, list[float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.usage = Usage.limited(self.cfg.max_calls)  # the request's call cap (the proxy's max_upstream_calls)
        if self.cfg.judge_is_model_under_test:
            self.flags.append("judge_is_model_under_test")

    @property
    def original_answer(self) -> asyncio.Task[Answer]:
        """The original's answer call (started by the first stage)."""
        assert self.original is not None, "the original is answered first"
        return self.original

    def span(self, name: str, start: float) -> None:
        """Stretch the span `name` to cover a piece of work that started at `start` and ends now."""
        span = self.spans.setdefault(name, [start, start])
        span[0], span[1] = min(span[0], start), time.perf_counter()


def with_question(messages: list[Message], text: str) -> list[Message]:
    """`messages` with the last (user) message's content replaced by `text`; context kept."""
    return [*messages[:-1], {**messages[-1], "content": text}]


def logprob_params(cfg: WrapConfig) -> dict[str, object]:
    """The answer calls' logprob parameters: none unless `cfg.logprobs` asks for them or doubt first reads them."""
    if not (cfg.logprobs or cfg.wants_logprobs):
        return {}
    return {"logprobs": True} if cfg.top_logprobs is None else {"logprobs": True, "top_logprobs": cfg.top_logprobs}


async def answer_wording(
    req: Request, variant: int, text: str, temperature: float | None = None, seed: int | None = None
) -> Answer:
    """Answer one wording of the question; a failed call is an Answer with its error (and in `req.failures`).

    Args:
        req: the request.
        variant: the wording's variant index (0: the original).
        text: the wording.
        temperature, seed: a top-up's sampling; None: the request's temperature and its seed for `variant`.
    """
    t = time.perf_counter()
    if temperature is None:
        temperature = req.cfg.temperature
        seed = req.seeds[variant] if variant < len(req.seeds) else None
    # Unseeded calls send no seed at all, so their parameters (and cache keys) stay as they were.
    seed_param = {} if seed is None else {"seed": seed}
    try:
        out = await req.client.complete(
            req.cfg.model,
            with_question(req.messages, text),
            usage=req.usage,
            temperature=temperature,
            max_tokens=req.cfg.max_tokens,
            kind="answer",
            **seed_param,
            **logprob_params(req.cfg),
        )
    except UpstreamError as exc:
        req.failures.append(exc)
        return Answer(variant=variant, error=str(exc), latency_s=time.perf_counter() - t)
    finally:
        if variant > 0:
            req.span("answer", t)
    return Answer(
        variant=variant,
        text=out.text.strip(),
        logprob=out.logprob,
        finish_reason=out.finish_reason,
        token_logprobs=out.token_logprobs,
        latency_s=time.perf_counter() - t,
    )
