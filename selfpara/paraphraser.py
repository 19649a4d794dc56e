"""SelfParaphraser: the one entry to the path from a question to a WrappedAnswer, shared by the library,
server, CLI and benchmark. It holds what outlives a request (the client, the equivalences with their
pair caches) and hands them to each request; one request's stages, in order, are
`selfpara.pipeline.request.answer_request`'s (see `selfpara.pipeline`).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from selfpara.config import WrapConfig, build_config
from selfpara.errors import InputError
from selfpara.models.cache import open_call_cache
from selfpara.models.client import ModelClient
from selfpara.models.names import provider_of
from selfpara.pipeline.budget import VoteBudget
from selfpara.pipeline.equivalence import Equivalence, build_equivalence
from selfpara.pipeline.equivalence.nli import load_nli
from selfpara.pipeline.paraphrase import equivalence_filter
from selfpara.pipeline.paraphrase.calls import paraphrase_check
from selfpara.pipeline.paraphrase.lines import LineSource, Restart
from selfpara.pipeline.request import answer_request
from selfpara.pipeline.state import Request
from selfpara.result import Message, RejectedParaphrase, Timings, Usage, WrappedAnswer
from selfpara.util.messages import content_text


def client_from_config(config: WrapConfig, **changes: Any) -> ModelClient:
    """The client `config` describes: its base URL, key, timeout, retries, concurrency, call
    cache and transport, with the base URL and key sent only to the answering model's provider.

    Args:
        config: the settings to read.
        **changes: `ModelClient` arguments that replace what `config` gives (e.g.
            `concurrency=`, `backoff_s=`, `http=`, `backend=`, or `provider=None` to send the
            base URL and key to every model, `cache=None` for no cache).
    """
    if "cache" not in changes:
        changes["cache"] = open_call_cache(
            config.cache,
            size=config.cache_size,
            ttl_s=config.cache_ttl_s,
            # a Redis connection per call in flight: lookups beyond it wait for one
            max_connections=int(changes.get("concurrency", config.concurrency)),
        )
    values: dict[str, Any] = {
        "api_base": config.api_base,
        "api_key": config.api_key.get_secret_value() if config.api_key else None,
        "timeout_s": config.call_timeout_s,
        "retries": config.retries,
        "concurrency": config.concurrency,
        "provider": provider_of(config.model),
        "transport": config.transport,
    }
    return ModelClient(**{**values, **changes})


MAX_QUESTION_CHARS = 32_000
MAX_EQUIVALENCES = 32


def split_messages(question: str | list[Message]) -> tuple[list[Message], str]:
    """Validate the input and return (messages, question text); the question is the last user message."""
    messages: list[Message] = [{"role": "user", "content": question}] if isinstance(question, str) else list(question)
    if not messages:
        raise InputError("no messages given")
    idx = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "user"), None)
    if idx is None:
        raise InputError("the conversation has no user message to answer")
    if idx != len(messages) - 1:
        raise InputError("the last message must be the user's question")
    content = content_text(messages[idx].get("content"))
    if not content.strip():
        raise InputError("the question is empty")
    if len(content) > MAX_QUESTION_CHARS:
        raise InputError(f"the question is {len(content)} characters; the limit is {MAX_QUESTION_CHARS}")
    return messages, content.strip()


class SelfParaphraser:
    """Answers questions by self-paraphrase majority vote.

    Args:
        config: settings (default: the embedded model, k=5).
        client: the model door; default one built from `config` (pass one to share a
            concurrency limit or plug in a fake backend).
        **settings: shorthand for WrapConfig fields when `config` is not given.
    """

    def __init__(
        self, config: WrapConfig | None = None, *, client: ModelClient | None = None, **settings: object
    ) -> None:
        if config is not None and settings:
            raise TypeError("pass either config or keyword settings, not both")
        self.config = config or build_config(**settings)
        self.client = client or client_from_config(self.config)
        # Bounded: a server's clients may name many judge models over time.
        self._equivalences: OrderedDict[tuple[str, ...], Equivalence] = OrderedDict()
        self.budget = VoteBudget()  # doubt first's account: what the votes of this wrapper's requests may cost

    # --- public entry points -------------------------------------------------

    def answer(
        self,
        question: str | list[Message],
        *,
        paraphrases: Sequence[str] | None = None,
        seeds: Sequence[int] | None = None,
        **overrides: object,
    ) -> WrappedAnswer:
        """Blocking form of `aanswer` (not for use inside a running event loop)."""
        return asyncio.run(self.aanswer(question, paraphrases=paraphrases, seeds=seeds, **overrides))

    async def aanswer(
        self,
        question: str | list[Message],
        *,
        paraphrases: Sequence[str] | None = None,
        seeds: Sequence[int] | None = None,
        **overrides: object,
    ) -> WrappedAnswer:
        """Answer a question (a string, or chat messages whose last user message is the question).

        Args:
            question: the question, or messages whose last (user) message is the question.
            paraphrases: answer exactly these wordings beside the original instead of
                generating and filtering k of them (saved variants; repeats allowed, as
                self-consistency's samples of one wording). None: generate.
            seeds: seed of each answer call, the original's first, then one per
                paraphrase in order (reproducible sampled answers); None: unseeded.
            overrides: WrapConfig fields for this request only (k, equivalence, temperature, ...).

        Raises InputError, ConfigError (MissingCredential, before any call, for a model whose key is
        nowhere), or UpstreamError when no answer came back at all.
        """
        cfg = self.config.with_overrides(**overrides) if overrides else self.config
        messages, q = split_messages(question)
        for model in dict.fromkeys(m for m in (cfg.model, cfg.paraphrase_model, cfg.judge_model) if m):
            self.client.require_credentials(model)
        given = None if paraphrases is None else [str(p).strip() for p in paraphrases]
        if given is not None and not all(given):
            raise InputError("a given paraphrase is empty")
        equivalence = self.equivalence_for(cfg)  # loads an NLI model now: a bad path fails before any model call
        request = Request(
            cfg, messages, q, self.client, equivalence, given=given, seeds=list(seeds or []), budget=self.budget
        )
        return await answer_request(request)

    async def paraphrase(
        self, question: str, *, usage: Usage | None = None, **overrides: object
    ) -> tuple[list[str], list[RejectedParaphrase], dict[str, str]]:
        """Make and filter paraphrases of `question` only (no answers), as a request would: (kept,
        rejected, where each kept one came from).

        The evaluation package uses this to build variant sets once and reuse them.

        Args:
            question: the question.
            usage: where to count the calls (default: a fresh Usage).
            overrides: WrapConfig fields for this call only.

        Raises UpstreamError when a paraphrase call failed and nothing was kept.
        """
        cfg = self.config.with_overrides(**overrides) if overrides else self.config
        _, q = split_messages(question)
        usage = usage if usage is not None else Usage()
        source = LineSource(self.client, cfg, q, usage, flags=[], timings=Timings())
        lines: list[str] = []
        async for item in source.lines():
            lines = lines[: item.keep] if isinstance(item, Restart) else lines + item
        kept, rejected = await equivalence_filter(q, lines, paraphrase_check(cfg, self.client, usage))
        if not kept and source.failure is not None:
            raise source.failure
        return kept, source.cheap_rejected + rejected, {line: source.sources[line] for line in kept}

    # --- what outlives a request ------------------------------------------------

    def equivalence_for(self, cfg: WrapConfig) -> Equivalence:
        """The Equivalence (with its pair cache) for these settings, built once per combination."""
        names = cfg.equivalence_functions
        key = (*names, cfg.judge_model or cfg.model, cfg.nli_model or "")
        if key in self._equivalences:
            self._equivalences.move_to_end(key)
            return self._equivalences[key]
        nli = load_nli(cfg.nli_model) if cfg.nli_model else None
        equivalence = self._equivalences[key] = build_equivalence(
            names, client=self.client, judge_model=cfg.judge_model or cfg.model, nli=nli
        )
        if len(self._equivalences) > MAX_EQUIVALENCES:
            self._equivalences.popitem(last=False)
        return equivalence


async def aanswer(question: str | list[Message], **settings: object) -> WrappedAnswer:
    """One-off: build a SelfParaphraser from `settings` and answer `question`."""
    return await SelfParaphraser(build_config(**settings)).aanswer(question)


def answer(question: str | list[Message], **settings: object) -> WrappedAnswer:
    """Blocking one-off form of `aanswer`."""
    return SelfParaphraser(build_config(**settings)).answer(question)
