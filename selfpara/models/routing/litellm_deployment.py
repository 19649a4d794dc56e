"""One deployment reached through litellm (any provider it knows), for the pool's deployments
the lean http transport cannot reach as written."""

from __future__ import annotations

from typing import Any

from selfpara.models.litellm_backend import LiteLLMBackend
from selfpara.models.litellm_import import import_litellm
from selfpara.models.routing.model_list import POOL_PARAMS, Deployment


class LiteLLMDeployment(LiteLLMBackend):
    """A `selfpara.models.backends.RawBackend` pinned to one deployment: its model, api_base,
    api_key and other litellm_params go into every call. The call's own parameters win over
    the deployment's others (as litellm's Router merged them), but never over its model, base
    URL or key.
    """

    def __init__(self, deployment: Deployment) -> None:
        super().__init__()  # litellm's own clients read its replies (uncapped until in: docs/proxy.md)
        import_litellm()  # its import takes seconds: at startup, never inside a call's timeout
        self.deployment = deployment
        self._params = {k: v for k, v in deployment.params.items() if k not in POOL_PARAMS}

    async def _target(self, model: str, params: dict[str, Any]) -> dict[str, Any]:
        d = self.deployment
        call = {k: v for k, v in params.items() if k not in ("api_base", "api_key")}  # the caller's upstream
        target = {**await super()._target(d.model, {**self._params, **call}), "api_base": d.api_base}
        if d.api_key is not None:  # else litellm reads the provider's variable
            target["api_key"] = d.api_key.get_secret_value()
        return target
