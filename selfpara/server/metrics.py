"""Prometheus metrics of one proxy app, served at `GET /metrics`; the series are listed in
docs/proxy.md#metrics. Each app has its own registry (`ProxyMetrics`), so apps in one process count
apart; the series that move with the call cache sit in `operator_registry`, for the metrics key only.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from selfpara.errors import UpstreamError, UpstreamTimeout
from selfpara.models.upstream_data import UpstreamInvalidResponse, UpstreamResponseTooLarge
from selfpara.result import Doubt, WrappedAnswer

STAGES = ("paraphrase", "filter", "answer", "cluster", "total")
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
_ENDPOINTS = {
    "/chat/completions": "chat/completions",
    "/completions": "completions",
    "/responses": "responses",
    "/models": "models",
    "/health": "health",
    "/ready": "ready",
    "/metrics": "metrics",
}


def endpoint_of(path: str) -> str:
    """The endpoint label of a request path: the route, `/v1` or not; `other` for unknown
    paths (a label per scanned path would grow without bound)."""
    path = path.rstrip("/") or "/"
    if path.startswith("/v1/") or path == "/v1":
        path = path[3:] or "/"
    if path.startswith("/models/"):
        return "models/{id}"
    return _ENDPOINTS.get(path, "other")


def vote_outcome(doubt: Doubt) -> str:
    """What doubt first did with an answer: `voted`, `sure` or `over_budget` (the budget is named only there
    or on a vote it admitted)."""
    if doubt.voted:
        return "voted"
    return "over_budget" if doubt.budget is not None else "sure"


def reason_of(exc: UpstreamError) -> str:
    """Why an upstream attempt failed, as a label."""
    if isinstance(exc, UpstreamTimeout):
        return "timeout"
    if isinstance(exc, UpstreamResponseTooLarge):
        return "too_large"
    if isinstance(exc, UpstreamInvalidResponse):
        return "invalid_response"
    return {429: "rate_limited", 401: "auth", 404: "not_found", 400: "rejected"}.get(exc.status, "unavailable")


class ProxyMetrics:
    """The metrics of one proxy app and their registry.

    Args:
        in_flight: returns the requests in flight now (read at each scrape).
        client: the app's ModelClient; its routed deployment pools are read at each scrape.
    """

    def __init__(self, *, in_flight: Any = None, client: Any = None) -> None:
        self.registry = CollectorRegistry()
        self.operator_registry = CollectorRegistry()  # what tells whether a question was cached: the metrics key's
        r, own = self.registry, self.operator_registry
        self.requests = Counter(
            "selfpara_requests",
            "HTTP requests answered, by endpoint and status code.",
            ["endpoint", "status"],
            registry=r,
        )
        self.request_seconds = Histogram(
            "selfpara_request_duration_seconds",
            "Seconds from a request's arrival to the end of its response (streams included), by endpoint.",
            ["endpoint"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.errors = Counter(
            "selfpara_errors",
            "Error answers of the POST routes, by the error code sent to the client.",
            ["kind"],
            registry=r,
        )
        self.upstream_calls = Counter(
            "selfpara_upstream_calls",
            "Upstream call attempts by kind (paraphrase, answer, judge, passthrough); each retry counts.",
            ["kind"],
            registry=own,
        )
        self.upstream_errors = Counter(
            "selfpara_upstream_errors",
            "Failed upstream call attempts by kind and reason.",
            ["kind", "reason"],
            registry=own,
        )
        self.stage_seconds = Histogram(
            "selfpara_stage_duration_seconds",
            "Seconds per pipeline stage of a wrapped answer (paraphrase, filter, answer, cluster, total).",
            ["stage"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.wrapped = Counter("selfpara_wrapped_answers", "Answers returned by the wrapped pipeline.", registry=r)
        self.flags = Counter(
            "selfpara_answer_flags", "Flags carried by wrapped answers (low_vote_share, ...).", ["flag"], registry=r
        )
        self.votes = Counter(
            "selfpara_votes",
            "Wrapped answers by what doubt first did: voted, sure (no vote) or over_budget (held back by the budget).",
            ["outcome"],
            registry=r,
        )
        self.calls_saved = Counter(
            "selfpara_calls_saved",
            "Upstream calls adaptive k did not make (answers and checks of paraphrases it did not need).",
            registry=r,
        )
        self.cache_hits = Counter(
            "selfpara_cache_hits", "Model calls of wrapped answers answered from the call cache.", registry=own
        )
        self.cache_errors = Counter(
            "selfpara_cache_errors",
            "Cacheable model calls of wrapped answers made without the cache because it was unreachable.",
            registry=own,
        )
        if in_flight is not None:
            gauge = Gauge(
                "selfpara_requests_in_flight", "Requests holding a place under max_concurrent_requests.", registry=r
            )
            gauge.set_function(in_flight)
        if client is not None:
            own.register(_DeploymentCollector(client))

    def observe_call(self, kind: str, error: UpstreamError | None) -> None:
        """A `selfpara.models.backends.CallObserver`: one upstream attempt."""
        self.upstream_calls.labels(kind=kind).inc()
        if error is not None:
            self.upstream_errors.labels(kind=kind, reason=reason_of(error)).inc()

    def observe_answer(self, wa: WrappedAnswer) -> None:
        """A wrapped answer returned: its stage timings and flags."""
        self.wrapped.inc()
        timings = wa.timings
        for stage in STAGES:
            self.stage_seconds.labels(stage=stage).observe(getattr(timings, f"{stage}_s"))
        for flag in wa.flags:
            self.flags.labels(flag=flag).inc()
        self.votes.labels(outcome=vote_outcome(wa.doubt)).inc()
        self.calls_saved.inc(wa.calls_saved)
        self.cache_hits.inc(wa.usage.cache_hits)
        self.cache_errors.inc(wa.usage.cache_errors)

    def observe_error(self, kind: str) -> None:
        self.errors.labels(kind=kind).inc()

    def observe_request(self, endpoint: str, status: int | None, seconds: float) -> None:
        self.requests.labels(endpoint=endpoint, status=str(status) if status else "none").inc()
        self.request_seconds.labels(endpoint=endpoint).observe(seconds)


class _DeploymentCollector:
    """Reads the deployment pools of a ModelClient's routes at scrape time (their own counters)."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        from selfpara.models.routing import DeploymentPool

        pools = {id(b): b for b in getattr(self.client, "routes", {}).values() if isinstance(b, DeploymentPool)}
        labels = ["group", "deployment"]
        calls = CounterMetricFamily("selfpara_deployment_calls", "Calls sent to each deployment.", labels=labels)
        failures = CounterMetricFamily(
            "selfpara_deployment_failures", "Failed calls of each deployment.", labels=labels
        )
        cooldowns = CounterMetricFamily(
            "selfpara_deployment_cooldowns", "Times each deployment was cooled down.", labels=labels
        )
        in_flight = GaugeMetricFamily("selfpara_deployment_in_flight", "Calls in flight per deployment.", labels=labels)
        cooling = GaugeMetricFamily(
            "selfpara_deployment_cooling_down", "1 while a deployment is cooling down, else 0.", labels=labels
        )
        for pool in pools.values():
            for row in pool.snapshot():
                key = [pool.group, row["deployment"]]
                calls.add_metric(key, row["calls"])
                failures.add_metric(key, row["failures"])
                cooldowns.add_metric(key, row["cooldowns"])
                in_flight.add_metric(key, row["in_flight"])
                cooling.add_metric(key, 1.0 if row["cooling_down"] else 0.0)
        yield from (calls, failures, cooldowns, in_flight, cooling)


class MetricsMiddleware:
    """Counts and times every HTTP request by endpoint and status (the outermost layer, so
    that the 500s the request-id layer makes of unexpected errors count too)."""

    def __init__(self, app: Any, metrics: ProxyMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status: list[int] = []

        async def counted(message: Any) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, counted)
        finally:
            self.metrics.observe_request(
                endpoint_of(scope.get("path", "")), status[0] if status else None, time.perf_counter() - started
            )
