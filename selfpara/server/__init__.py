"""The OpenAI-compatible proxy (`selfpara serve`): a thin HTTP shell over the pipeline.

    from selfpara.server import ServerSettings, create_app
    app = create_app(ServerSettings(upstream=build_config(model="openai/llama3", api_base="http://...")))

See docs/proxy.md.
"""

from selfpara.server.app import create_app
from selfpara.server.settings import ServerSettings, load_settings

__all__ = ["ServerSettings", "create_app", "load_settings"]
