"""A pool of deployments of one model: load balancing, failover and cooldowns, with litellm's
setting names and defaults. Each deployment has its own backend, the lean http transport or litellm
(`routing.build_pool` chooses). What it does and why it replaced litellm's Router: docs/scale-out.md.
"""

from __future__ import annotations

import itertools
import logging
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from selfpara.errors import UpstreamError
from selfpara.models.backends import RawBackend
from selfpara.models.routing.model_list import POOL_STRATEGIES, Deployment
from selfpara.models.unreachable import UpstreamUnreachable
from selfpara.result import Completion, Message

log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_ALLOWED_FAILS = 3
DEFAULT_COOLDOWN_S = 5.0
DEFAULT_NUM_RETRIES = 2
_COOL_AT_ONCE = (429, 401, 404)  # litellm cools these down at the first one too
_FAILOVER = (401, 404)  # not retryable on the same deployment, but another may be right


@dataclass
class DeploymentState:
    """One deployment's backend and its record (read by the proxy's /metrics)."""

    deployment: Deployment
    backend: RawBackend
    in_flight: int = 0
    calls: int = 0
    failures: int = 0
    cooldowns: int = 0
    failures_in_row: int = 0
    cooled_until: float = 0.0  # 0: not cooled since its last success
    probing: bool = False  # its one call after a cooldown is in flight
    last_error: str = field(default="", repr=False)

    @property
    def label(self) -> str:
        return self.deployment.label

    def cooling(self, now: float) -> bool:
        return now < self.cooled_until

    def available(self, now: float) -> bool:
        """Not cooling down, and not waiting for the answer to its probe."""
        return not self.cooling(now) and not self.probing

    def recovering(self, now: float) -> bool:
        """Its cooldown is over but it has not answered since: its next call is a probe."""
        return self.cooled_until != 0.0 and not self.cooling(now)


class DeploymentPool:
    """A `selfpara.models.backends.RawBackend` over several deployments of one model group.

    Args:
        group: the model_name the deployments serve (for logs and errors).
        deployments: the group's deployments.
        backends: the backend of each deployment, in the same order, pinned to its base URL
            and key (the caller's are dropped from every call).
        routing_strategy: simple-shuffle or least-busy.
        allowed_fails: failures in a row a deployment may have before it cools down.
        cooldown_s: seconds a failing deployment is left out.
        num_retries: other deployments a failed call is sent to, at once.
        clock: monotonic seconds (tests pass a fake one).
        rng: the random source of simple-shuffle (tests pass a seeded one).
    """

    cache_tenant = ""  # set by build_routes: the group's fingerprint for the call cache

    def __init__(
        self,
        group: str,
        deployments: list[Deployment],
        backends: list[RawBackend],
        *,
        routing_strategy: str = "simple-shuffle",
        allowed_fails: int = DEFAULT_ALLOWED_FAILS,
        cooldown_s: float = DEFAULT_COOLDOWN_S,
        num_retries: int = DEFAULT_NUM_RETRIES,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
    ) -> None:
        if not deployments or len(backends) != len(deployments):
            raise ValueError(f"{group}: a pool needs at least one deployment, and one backend for each")
        if routing_strategy not in POOL_STRATEGIES:
            raise ValueError(f"{group}: routing_strategy must be one of {POOL_STRATEGIES}, not {routing_strategy!r}")
        self.group = group
        self.routing_strategy = routing_strategy
        self.allowed_fails = allowed_fails
        self.cooldown_s = cooldown_s
        self.num_retries = num_retries
        self._clock = clock
        self._rng = rng or random.Random()
        self._turn = itertools.count()
        self.states = [DeploymentState(d, b) for d, b in zip(deployments, backends, strict=True)]
        # Passthrough endpoints any deployment serves; a call goes only to those that serve its own.
        self.raw_endpoints: frozenset[str] = frozenset().union(*(b.raw_endpoints for b in backends))

    # ---- choosing ---------------------------------------------------------------------

    def _choose(self, tried: set[int], endpoint: str | None) -> DeploymentState | None:
        """The next deployment to call, leaving out those tried and, for a passthrough call, those
        that do not serve its `endpoint`; None when none is left."""
        now = self._clock()
        left = [
            s
            for i, s in enumerate(self.states)
            if i not in tried and (endpoint is None or endpoint in s.backend.raw_endpoints)
        ]
        if not left:
            return None
        ready = [s for s in left if s.available(now)]
        if not ready:  # all cooling down: the one that comes back first, rather than no call at all
            return min(left, key=lambda s: s.cooled_until)
        if self.routing_strategy == "least-busy":
            fewest = min(s.in_flight for s in ready)
            idle = [s for s in ready if s.in_flight == fewest]
            return idle[next(self._turn) % len(idle)]
        return self._rng.choices(ready, weights=[s.deployment.weight for s in ready])[0]

    def _succeeded(self, state: DeploymentState) -> None:
        state.failures_in_row = 0
        state.cooled_until = 0.0
        state.probing = False

    def _failed(self, state: DeploymentState, exc: UpstreamError) -> None:
        state.probing = False
        state.failures += 1
        state.failures_in_row += 1
        state.last_error = str(exc)[:200]
        if exc.status in _COOL_AT_ONCE or state.failures_in_row > self.allowed_fails:
            now = self._clock()
            if not state.cooling(now):
                state.cooldowns += 1
                log.warning(
                    "%s: deployment %s cooling down for %gs after %d failure(s) in a row (%s)",
                    self.group,
                    state.label,
                    self.cooldown_s,
                    state.failures_in_row,
                    state.last_error,
                )
            state.cooled_until = now + self.cooldown_s

    async def _routed(
        self,
        call: Callable[[RawBackend, Deployment], Awaitable[T]],
        *,
        endpoint: str | None = None,
        held: bool = False,
    ) -> T:
        """`call` on a chosen deployment, on another after a failure that another may not have.

        Args:
            endpoint: a passthrough call's endpoint (None: a `complete` call, which every backend makes).
            held: the result is an event stream: the deployment counts as busy until it ends.
        """
        tried: set[int] = set()
        last: UpstreamError | None = None
        for _ in range(1 + min(self.num_retries, len(self.states) - 1)):
            state = self._choose(tried, endpoint)
            if state is None:
                break
            tried.add(self.states.index(state))
            if state.recovering(self._clock()):
                state.probing = True  # one call at a time finds out whether it is back
            state.calls += 1
            state.in_flight += 1
            try:
                result = await call(state.backend, state.deployment)
            except BaseException as exc:
                state.in_flight -= 1
                if not isinstance(exc, UpstreamError) or not (
                    exc.retryable or exc.status in _FAILOVER or isinstance(exc, UpstreamUnreachable)
                ):
                    # Cancelled (ModelClient's timeout too, so a hang never counts against a deployment),
                    # or the request's own fault (400): no other deployment will take it, and a probe
                    # that ended so told nothing.
                    state.probing = False
                    raise
                self._failed(state, exc)
                last = exc
                continue
            self._succeeded(state)
            if held:
                return _Held(result, state)  # type: ignore[arg-type,return-value]
            state.in_flight -= 1
            return result
        if last is None:  # ModelClient checks `raw_endpoints` first, so only a direct caller gets here
            raise UpstreamError(f"{self.group}: no deployment passes {endpoint} requests through", status=400)
        raise last

    # ---- the backend ------------------------------------------------------------------

    async def complete(self, model: str, messages: list[Message], params: dict[str, Any]) -> Completion:
        params = _own(params)
        return await self._routed(lambda backend, d: backend.complete(d.model, messages, params))

    async def raw(self, model: str, endpoint: str, body: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
        params = _own(params)
        return await self._routed(lambda backend, d: backend.raw(d.model, endpoint, body, params), endpoint=endpoint)

    async def raw_stream(
        self, model: str, endpoint: str, body: dict[str, Any], params: dict[str, Any]
    ) -> AsyncIterator[dict[str, Any]]:
        """Opens the stream on a deployment (failing over while it does not open); a stream
        that breaks off midway raises from the iterator, as on one upstream."""
        params = _own(params)
        return await self._routed(
            lambda backend, d: backend.raw_stream(d.model, endpoint, body, params), endpoint=endpoint, held=True
        )

    def snapshot(self) -> list[dict[str, Any]]:
        """Each deployment's record (for logs and /ready)."""
        now = self._clock()
        return [
            {
                "deployment": s.label,
                "calls": s.calls,
                "failures": s.failures,
                "cooldowns": s.cooldowns,
                "in_flight": s.in_flight,
                "cooling_down": s.cooling(now),
            }
            for s in self.states
        ]


def _own(params: dict[str, Any]) -> dict[str, Any]:
    """The call's parameters without the client's base URL and key: each deployment has its own."""
    return {k: v for k, v in params.items() if k not in ("api_base", "api_key")}


class _Held:
    """An event stream that counts its deployment busy until it ends, fails or is closed."""

    def __init__(self, events: AsyncIterator[dict[str, Any]], state: DeploymentState) -> None:
        self._events = events.__aiter__()
        self._state: DeploymentState | None = state

    def _release(self) -> None:
        if self._state is not None:
            self._state.in_flight -= 1
            self._state = None

    def __aiter__(self) -> _Held:
        return self

    async def __anext__(self) -> dict[str, Any]:
        try:
            return await self._events.__anext__()
        except BaseException:  # StopAsyncIteration included: the stream is over either way
            self._release()
            raise

    async def aclose(self) -> None:
        self._release()
        close = getattr(self._events, "aclose", None)
        if close is not None:
            await close()
