"""Request and response shapes of the OpenAI chat-completions API, as far as the proxy reads them.

Requests are parsed leniently (unknown OpenAI fields are kept and forwarded on
passthrough); the `selfpara` block is parsed strictly (an unknown setting is a 400).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

from selfpara.config import WrapConfig

log = logging.getLogger(__name__)


def check_text_parts(parts: list[dict[str, Any]], kinds: tuple[str, ...] = ("text",)) -> list[dict[str, Any]]:
    """Content parts of the given text kinds must carry their text as a string (a null or a
    number is a client bug, not a question to answer)."""
    for i, part in enumerate(parts):
        if part.get("type") in kinds and not isinstance(part.get("text"), str):
            raise ValueError(f"content part {i}: `text` must be a string")
    return parts


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[dict[str, Any]] | None = None
    name: str | None = None

    @field_validator("content")
    @classmethod
    def _text_parts(cls, value: Any) -> Any:
        return check_text_parts(value) if isinstance(value, list) else value


REQUEST_SETTINGS = (
    "k",
    "equivalence",
    "judge_model",
    "paraphrase_model",
    "paraphrase_check",
    "paraphrase_temperature",
    "top_up_temperature",
    "overrule_margin",
    "max_overlap",
    "nli_threshold",
    "low_vote_share",
    "low_vote_share_threshold",
    "confidence_threshold",
    "adaptive",
    "sure_probability",
)
"""The WrapConfig fields a request may set under `selfpara`; the others are the operator's."""


class RequestOptions(BaseModel):
    """The fields of the `selfpara` block that are not WrapConfig settings, and what the block asks for.

    `SelfparaOptions` adds one optional field per name in REQUEST_SETTINGS, typed and described
    as the WrapConfig field it overrides (its bounds are WrapConfig's to check: a bad value is
    the same 400 however it arrives).
    """

    # strict: `"k": true` or `"k": "3"` is a client bug to report, not a 1 or a 3 to guess
    model_config = ConfigDict(extra="forbid", strict=True)

    enabled: bool = Field(True, description="false: pass the request to the upstream unchanged.")
    api_base: str | None = Field(None, description="Only when the operator allows client upstreams.")
    api_key: str | None = Field(None, description="Key for a client-named api_base (never the server's).")

    def overrides(self) -> dict[str, Any]:
        """The WrapConfig overrides this block asks for (None values dropped)."""
        values = {name: getattr(self, name, None) for name in REQUEST_SETTINGS}
        return {name: value for name, value in values.items() if value is not None}


def _request_settings() -> dict[str, Any]:
    """create_model's field definitions: each of REQUEST_SETTINGS as an optional WrapConfig field."""
    fields: dict[str, Any] = {}
    for name in REQUEST_SETTINGS:
        info = WrapConfig.model_fields[name]
        fields[name] = (Optional[info.annotation], Field(None, description=info.description))
    return fields


if TYPE_CHECKING:
    SelfparaOptions = RequestOptions  # the derived fields are read through `overrides()`
else:
    SelfparaOptions = create_model(
        "SelfparaOptions",
        __base__=RequestOptions,
        __doc__='Per-request settings under the body\'s `selfpara` key (`extra_body={"selfpara": {...}}`).',
        **_request_settings(),
    )


class ChatCompletionRequest(BaseModel):
    model_config = ConfigDict(extra="allow")

    model: str = Field(min_length=1)
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = Field(False, strict=True)
    stream_options: dict[str, Any] | None = None
    n: int | None = Field(None, ge=1, strict=True)
    temperature: float | None = Field(None, strict=True)
    max_tokens: int | None = Field(None, ge=1, strict=True)
    max_completion_tokens: int | None = Field(None, ge=1, strict=True)
    logprobs: bool | None = Field(None, strict=True)
    top_logprobs: int | None = Field(None, ge=0, le=20, strict=True)
    tools: list[dict[str, Any]] | None = None
    tool_choice: Any = None
    functions: list[dict[str, Any]] | None = None
    function_call: Any = None
    response_format: dict[str, Any] | None = None
    selfpara: SelfparaOptions | None = None

    @field_validator("selfpara", mode="before")
    @classmethod
    def _none_is_default(cls, value: Any) -> Any:
        return {} if value is None else value

    @property
    def options(self) -> SelfparaOptions:
        return self.selfpara or SelfparaOptions()

    @property
    def requested_max_tokens(self) -> int | None:
        return self.max_completion_tokens or self.max_tokens


# ---- responses -----------------------------------------------------------------------


class ResponseMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str | None


class Choice(BaseModel):
    index: int = 0
    message: ResponseMessage
    finish_reason: str = "stop"
    logprobs: dict[str, Any] | None = None


class CompletionUsage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class ChatCompletion(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int = Field(default_factory=lambda: int(time.time()))
    model: str
    choices: list[Choice]
    usage: CompletionUsage
    system_fingerprint: str | None = None
    selfpara: dict[str, Any] = Field(default_factory=dict)


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str = "selfpara"


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]


def chunk(
    completion_id: str,
    created: int,
    model: str,
    *,
    delta: dict[str, Any] | None = None,
    finish_reason: str | None = None,
    usage: dict[str, int] | None = None,
    no_choices: bool = False,
    logprobs: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """One `chat.completion.chunk` object; `logprobs`: the token log-probabilities of its content."""
    out: dict[str, Any] = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": []
        if no_choices
        else [
            {
                "index": 0,
                "delta": delta or {},
                "finish_reason": finish_reason,
                "logprobs": None if logprobs is None else {"content": logprobs, "refusal": None},
            }
        ],
    }
    if usage is not None:
        out["usage"] = usage
    out.update(extra)
    return out
