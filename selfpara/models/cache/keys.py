"""Which model calls may be cached, and the key of one: a hash of everything that shapes its output.

A call is cacheable when its output is a function of its inputs: greedy decoding
(temperature 0) or a sampled call with an explicit seed. An unseeded sampled call is a
fresh draw each time and is never answered from the cache.

The key is a SHA-256 over the model, the exact messages and every generation parameter
(temperature, max_tokens, seed, logprobs, the base URL, ...) but those that cannot change
what the model says (the timeout), and over the call's tenant: a fingerprint of the upstream's
address and the credential the call is made with (`tenant`), so that callers with other keys
to one upstream, or one key to other upstreams, never share an entry (two proxies with their
own upstream keys on one Redis served each other's answers). A credential itself never reaches
the key material: only that fingerprint, an HMAC keyed by it, which cannot be turned back into it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import Any

from selfpara.result import Message

KEY_VERSION = 2
"""Part of every key: bump it when the key material changes, so that old entries are never misread."""

NON_OUTPUT_PARAMS = frozenset({"timeout", "api_key", "headers", "extra_headers", "num_retries"})
"""Call parameters left out of the key: they change how a call is made, not what it returns."""


def cacheable(params: Mapping[str, Any]) -> bool:
    """Whether a call with `params` may be answered from the cache: temperature 0, or an explicit seed."""
    if params.get("seed") is not None:
        return True
    temperature = params.get("temperature", 0.0)
    return temperature is not None and float(temperature) == 0.0


def tenant(address: str | None, credential: str | None) -> str:
    """The fingerprint of whom a call is made for: HMAC-SHA256, keyed by the credential (None: none),
    of the upstream's address (None: the provider's default endpoint)."""
    message = f"selfpara call cache tenant\n{address or ''}".encode()
    return hmac.new((credential or "").encode(), message, hashlib.sha256).hexdigest()


def key_material(
    model: str,
    messages: list[Message],
    params: Mapping[str, Any],
    namespace: Mapping[str, Any] | None = None,
    tenant: str | None = None,
) -> dict[str, Any]:
    """What a call's key is the hash of.

    Args:
        model: the model string the call goes to.
        messages: the exact messages sent.
        params: the call's parameters, as the backend gets them.
        namespace: extra key parts that keep otherwise identical calls apart (the bench's
            arm label for unseeded sampled calls); None: none.
        tenant: the call's `tenant` fingerprint; None: left out (the bench's own cache, one user).
    """
    material = {
        "v": KEY_VERSION,
        "ns": dict(namespace or {}),
        "model": model,
        "messages": messages,
        "params": {k: v for k, v in sorted(params.items()) if k not in NON_OUTPUT_PARAMS},
    }
    if tenant is not None:
        material["tenant"] = tenant
    return material


def digest(material: Mapping[str, Any]) -> str:
    """SHA-256 (hex) of `material` written as canonical JSON."""
    blob = json.dumps(material, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def call_key(
    model: str,
    messages: list[Message],
    params: Mapping[str, Any],
    namespace: Mapping[str, Any] | None = None,
    tenant: str | None = None,
) -> str:
    """The cache key of a call (see `key_material` for the arguments)."""
    return digest(key_material(model, messages, params, namespace, tenant))
