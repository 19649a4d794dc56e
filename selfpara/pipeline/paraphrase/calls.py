"""The model calls that write paraphrases: what each asks for, of which model, with which parameters."""

from __future__ import annotations

from typing import Any

from selfpara.config import WrapConfig
from selfpara.models.names import takes_openai_params
from selfpara.pipeline import prompts
from selfpara.pipeline.lexicon.text import words
from selfpara.pipeline.prompts import Form
from selfpara.result import Message

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
