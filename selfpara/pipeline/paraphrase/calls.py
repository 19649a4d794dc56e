"""The model calls of the paraphrase stage: those that write rewordings (one per form, or one asking for a
list, streamed where it can be) and the check that judges a rewording, each with its model and parameters."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from typing import Any

from selfpara.config import WrapConfig
from selfpara.errors import UpstreamError
from selfpara.models.client import ModelClient
from selfpara.models.names import takes_openai_params
from selfpara.models.upstream_data import one_piece
from selfpara.pipeline import prompts
from selfpara.pipeline.equivalence.nli import load_nli
from selfpara.pipeline.lexicon.text import words
from selfpara.pipeline.paraphrase.filter import EquivalenceCheck
from selfpara.pipeline.paraphrase.parse import parse_yes_no
from selfpara.pipeline.prompts import Form
from selfpara.result import Message, Usage

log = logging.getLogger(__name__)

Call = tuple[str, list[Message], dict[str, Any]]
"""(model, messages, call parameters)."""


def paraphrase_budget(question: str, k: int) -> int:
    """Tokens to allow for k rewordings: about twice the question's words each, plus list markup."""
    return min(4096, 16 + k * (2 * len(words(question)) + 12))


def _params(question: str, cfg: WrapConfig, model: str, k: int) -> dict[str, Any]:
    params: dict[str, Any] = {"temperature": cfg.paraphrase_temperature, "max_tokens": paraphrase_budget(question, k)}
    if cfg.paraphrase_seed is not None and takes_openai_params(model):
        params["seed"] = cfg.paraphrase_seed
    return params


def list_request(question: str, cfg: WrapConfig, n: int) -> Call:
    """The call asking for `n` rewordings of `question` in one numbered list."""
    model = cfg.paraphrase_model or cfg.model
    return model, prompts.paraphrase_messages(question, n), _params(question, cfg, model, n)


def form_request(question: str, cfg: WrapConfig, form: Form) -> Call:
    """The call asking for `question` in `form`: one line."""
    model = cfg.paraphrase_model or cfg.model
    return model, prompts.form_messages(question, form), _params(question, cfg, model, 1)


async def form_reply(client: ModelClient, question: str, form: Form, cfg: WrapConfig, usage: Usage) -> str:
    """The reply of the call asking for `question` in `form` (one line). Raises UpstreamError.

    Args:
        client: the model door.
        question: the question to reword.
        form: the form to put it in.
        cfg: the request's settings.
        usage: where the call is counted.
    """
    model, messages, params = form_request(question, cfg, form)
    reply = await client.complete(model, messages, usage=usage, kind="paraphrase", **params)
    return reply.text


async def list_reply(
    client: ModelClient, question: str, cfg: WrapConfig, usage: Usage, n: int
) -> AsyncGenerator[str, None]:
    """The reply of the call asking for `n` rewordings in a list, in pieces: streamed as the model writes it
    where the backend can and `cfg.streams_paraphrases`, else whole (arguments as `form_reply`'s).

    An upstream that refuses the stream (a non-retryable error other than a rejected key: no streaming, an
    unknown `stream_options`, a plain JSON answer) is asked again without it. Raises UpstreamError as
    `ModelClient.complete` does.
    """
    model, messages, params = list_request(question, cfg, n)
    if cfg.streams_paraphrases:
        try:
            stream = await client.stream_text(model, messages, usage=usage, kind="paraphrase", **params)
        except UpstreamError as exc:
            if exc.retryable or exc.status == 401:
                raise
            log.info("the paraphrase call could not stream (%s): asking for the whole reply", exc)
            stream = None
        if stream is not None:  # None: the backend cannot stream
            return stream
    reply = await client.complete(model, messages, usage=usage, kind="paraphrase", **params)
    return one_piece(reply.text)


def paraphrase_check(cfg: WrapConfig, client: ModelClient, usage: Usage) -> EquivalenceCheck | None:
    """The configured check that a rewording asks what the question asks (`paraphrase_check`), or None when
    it is off: NLI entailment both ways at `nli_threshold`, or a judge model's YES.

    Args:
        cfg: the request's settings (the check, its judge model or NLI model).
        client: the model door, for the judge.
        usage: where the judge's calls are counted.
    """
    kind = cfg.resolved_paraphrase_check
    if kind == "off":
        return None
    if kind == "nli":
        assert cfg.nli_model is not None  # WrapConfig validation guarantees nli_model
        nli = load_nli(cfg.nli_model)

        async def nli_check(q: str, p: str) -> tuple[bool, str]:
            fwd, back = await nli.aprobs([(q, p), (p, q)])
            score = (fwd.entailment + back.entailment) / 2
            return score >= cfg.nli_threshold, f"entailment {score:.2f}"

        return nli_check
    judge = cfg.judge_model or cfg.model

    async def llm_check(q: str, p: str) -> tuple[bool, str]:
        prompt = prompts.same_question(q, p)
        reply = await client.complete(
            judge, [{"role": "user", "content": prompt}], usage=usage, max_tokens=8, kind="judge"
        )
        verdict = parse_yes_no(reply.text)
        return verdict is True, f"judge said {reply.text.strip()[:40]!r}"

    return llm_check
