"""selfpara: ask a model several equivalent wordings of a question and return the answer they agree on.

from selfpara import SelfParaphraser
result = SelfParaphraser(k=3).answer("What is the capital of Australia?")
print(result.answer, result.vote_share)
"""

from selfpara.config import WrapConfig, build_config
from selfpara.config.file import config_from_file
from selfpara.errors import ConfigError, InputError, SelfparaError, UpstreamError, UpstreamTimeout
from selfpara.models.client import ModelClient
from selfpara.models.names import EMBEDDED_MODEL
from selfpara.paraphraser import SelfParaphraser, aanswer, answer
from selfpara.result import Answer, Cluster, Usage, Variant, WrappedAnswer

__all__ = [
    "EMBEDDED_MODEL",
    "Answer",
    "Cluster",
    "ConfigError",
    "InputError",
    "ModelClient",
    "SelfParaphraser",
    "SelfparaError",
    "UpstreamError",
    "UpstreamTimeout",
    "Usage",
    "Variant",
    "WrapConfig",
    "WrappedAnswer",
    "aanswer",
    "answer",
    "build_config",
    "config_from_file",
]
__version__ = "0.1.0"
