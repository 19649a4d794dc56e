"""The choices of the CLI's options that take one of a few words, as enums: typer shows them in
--help (`[auto|litellm|http]`), checks them before the command runs, and completes them.

Each mirrors a `Literal` of WrapConfig (tests/test_cli_conventions.py checks they agree).
"""

from __future__ import annotations

from enum import Enum


class Transport(str, Enum):
    """WrapConfig.transport: how openai/ and hosted_vllm/ models are reached."""

    auto = "auto"
    litellm = "litellm"
    http = "http"


class ParaphraseMethod(str, Enum):
    """WrapConfig.paraphrase_method: how the model writes the rewordings the renamings leave."""

    auto = "auto"
    forms = "forms"
    list = "list"


class ParaphraseCheck(str, Enum):
    """WrapConfig.paraphrase_check: the check a paraphrase passes before it is answered."""

    auto = "auto"
    off = "off"
    llm = "llm"
    nli = "nli"


class LowVoteShare(str, Enum):
    """WrapConfig.low_vote_share: what a vote share below the threshold does to the answer."""

    flag = "flag"
    abstain = "abstain"
    off = "off"


CHOICES_OF_FIELDS: dict[str, type[Enum]] = {
    "transport": Transport,
    "paraphrase_check": ParaphraseCheck,
    "low_vote_share": LowVoteShare,
}
"""WrapConfig field -> the enum of its CLI option."""
