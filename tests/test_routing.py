"""The router config (litellm's model_list format) and the deployment pool, in process:
parsing and its errors (what litellm's Router alone read included), which transport reaches
each deployment, a deployment pinned through litellm, and the pool's choice, failover and
cooldown with fake deployments and a fake clock. The real servers are in tests/test_scaleout.py."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

import pytest

from selfpara.config import build_config
from selfpara.errors import ConfigError, UpstreamError, UpstreamTimeout
from selfpara.models.http_backend import HttpBackend, HttpSessions
from selfpara.models.routing import DeploymentPool, build_pool, build_routes, load_router_config
from selfpara.models.routing.litellm_deployment import LiteLLMDeployment
from selfpara.paraphraser import client_from_config
from selfpara.result import Completion
from selfpara.server.metrics import endpoint_of, reason_of
from selfpara.server.settings import ServerSettings, load_settings
from tests.helpers.clock import FakeClock
from tests.helpers.waiting import settle

KEY = "sk-deployment-secret-0123456789"


def write(tmp_path: Path, text: str, name: str = "router.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


TWO = """
model_list:
  - model_name: qwen
    litellm_params: {model: openai/Qwen2.5-7B, api_base: "http://a:8000/v1", api_key: os.environ/KEY_A}
  - model_name: qwen
    litellm_params: {model: openai/Qwen2.5-7B, api_base: "http://b:8000/v1"}
  - model_name: judge
    litellm_params: {model: anthropic/claude-x}
router_settings: {routing_strategy: least-busy, allowed_fails: 1, cooldown_time: 2}
"""


# ---- the file ---------------------------------------------------------------------------------


def test_yaml_file_with_a_key_from_the_environment(tmp_path: Path) -> None:
    config = load_router_config(write(tmp_path, TWO), environ={"KEY_A": KEY})
    groups = config.groups()
    assert list(groups) == ["qwen", "judge"] and len(groups["qwen"]) == 2
    first = groups["qwen"][0]
    assert first.api_key is not None and first.api_key.get_secret_value() == KEY
    assert first.label == "http://a:8000/v1" and groups["judge"][0].label == "anthropic/claude-x"
    assert config.router_settings == {"routing_strategy": "least-busy", "allowed_fails": 1, "cooldown_time": 2}
    assert config.secrets() == [KEY]
    assert KEY not in json.dumps(config.model_dump(mode="json"))  # what `serve --check` prints


def test_json_file_and_a_bare_list(tmp_path: Path) -> None:
    entries = [{"model_name": "m", "litellm_params": {"model": "openai/m", "api_base": "http://x/v1"}}]
    path = write(tmp_path, json.dumps(entries), "router.json")
    assert [d.model for d in load_router_config(path).deployments] == ["openai/m"]


def test_credentials_in_urls_and_secret_params_are_hidden(tmp_path: Path) -> None:
    text = """
model_list:
  - model_name: m
    litellm_params: {model: bedrock/x, api_base: "https://user:pass123@h/v1", aws_secret_access_key: hushhush99}
"""
    config = load_router_config(write(tmp_path, text))
    dumped = json.dumps(config.model_dump(mode="json"))
    assert "pass123" not in dumped and "hushhush99" not in dumped
    assert config.deployments[0].label == "https://h/v1"
    assert "hushhush99" in config.secrets()


@pytest.mark.parametrize(
    "text, expected",
    [
        ("model_list: [\n  - {model_name: m", "cannot parse"),
        ("model_list: []", "non-empty list"),
        ("just a string", "expected a `model_list`"),
        ("model_list:\n  - {litellm_params: {model: openai/m}}", "model_name"),
        ("model_list:\n  - {model_name: m, litellm_params: {api_base: 'http://x'}}", "litellm_params.model"),
        ("model_list:\n  - {model_name: m, litellm_params: {model: openai/m, api_base: 'x:80'}}", "http(s) URL"),
        ("model_list:\n  - {model_name: m, litellm_params: {model: openai/m}}\nrouters: {}", "unknown section"),
        (
            "model_list:\n  - {model_name: m, litellm_params: {model: openai/m}}\nrouter_settings: {allowed_fails: -1}",
            "allowed_fails",
        ),
        (
            "model_list:\n  - {model_name: m, litellm_params: {model: openai/m, api_key: os.environ/NOPE_X}}",
            "variable NOPE_X is not set",
        ),
        # what only litellm's Router read: named, with what the pool supports
        (
            "model_list:\n  - {model_name: m, litellm_params: {model: openai/m}}\n"
            "router_settings: {fallbacks: [{m: [n]}], enable_pre_call_checks: true}",
            "router_settings ['enable_pre_call_checks', 'fallbacks'] are not supported (only litellm's Router "
            "read that, and the pool replaced it: docs/scale-out.md); the supported ones are allowed_fails, "
            "cooldown_time, num_retries, routing_strategy",
        ),
        (
            "model_list:\n  - {model_name: m, litellm_params: {model: openai/m}}\n"
            "router_settings: {routing_strategy: usage-based-routing-v2}",
            "routing_strategy 'usage-based-routing-v2' is not supported",
        ),
        (
            "model_list:\n  - {model_name: m, litellm_params: {model: openai/m}}\n"
            "router_settings: {routing_strategy: 1}",
            "use simple-shuffle or least-busy",
        ),
        (
            "model_list:\n  - {model_name: m, litellm_params: {model: openai/m, rpm: 60, tpm: 1000}}",
            "model_list[0]: litellm_params ['rpm', 'tpm'] are not supported",
        ),
    ],
)
def test_a_file_that_cannot_be_used_is_a_config_error(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_router_config(write(tmp_path, text), environ={})
    assert expected in str(info.value)


def test_a_parse_error_does_not_echo_the_file(tmp_path: Path) -> None:
    text = f"model_list:\n  - {{model_name: m, litellm_params: {{model: openai/m, api_key: {KEY}\n  - ]["
    with pytest.raises(ConfigError) as info:
        load_router_config(write(tmp_path, text))
    assert KEY not in str(info.value) and "line" in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read router config"):
        load_router_config(tmp_path / "nope.yaml")


def test_a_litellm_proxy_config_is_read_as_it_is(tmp_path: Path) -> None:
    text = TWO + "litellm_settings: {drop_params: true}\ngeneral_settings: {master_key: sk-1234}\n"
    assert len(load_router_config(write(tmp_path, text), environ={"KEY_A": KEY}).deployments) == 3


# ---- groups and transports ----------------------------------------------------------------------


def test_group_of_a_model_string(tmp_path: Path) -> None:
    config = load_router_config(write(tmp_path, TWO), environ={"KEY_A": KEY})
    assert config.group_for("qwen") == "qwen" and config.group_for("openai/qwen") == "qwen"
    assert config.group_for("openai/llama") is None
    with pytest.raises(ConfigError, match=r"names no deployment of 'openai/llama'.*\['judge', 'qwen'\]"):
        config.require_group("openai/llama")


MIXED = """
model_list:
  - model_name: qwen
    litellm_params: {model: openai/Qwen2.5-7B, api_base: "http://a:8000/v1", weight: 2}
  - model_name: qwen
    litellm_params: {model: openai/Qwen2.5-7B, api_base: "http://b:8000/v1", timeout: 30}
  - model_name: qwen
    litellm_params: {model: anthropic/claude-x, api_key: os.environ/KEY_A}
"""


def test_which_deployments_the_http_transport_reaches(tmp_path: Path) -> None:
    config = load_router_config(write(tmp_path, MIXED), environ={"KEY_A": KEY})
    # weight is the pool's; timeout only litellm passes on; anthropic is not an OpenAI-API server
    assert config.over_http("qwen", "auto") == [True, False, False]
    assert config.over_http("qwen", "litellm") == [False, False, False]
    with pytest.raises(ConfigError, match=r"deployment 2 \(openai/Qwen2.5-7B\) sets \['timeout'\], which only litellm"):
        config.over_http("qwen", "http")
    two = load_router_config(write(tmp_path, TWO), environ={"KEY_A": KEY})
    assert two.over_http("qwen", "http") == [True, True]
    with pytest.raises(
        ConfigError, match=r"cannot serve 'judge' .*: deployment 3 \(anthropic/claude-x\) is not an openai/"
    ):
        two.over_http("judge", "http")
    no_base = [{"model_name": "m", "litellm_params": {"model": "openai/m"}}]
    with pytest.raises(ConfigError, match="has no api_base"):
        load_router_config(write(tmp_path, json.dumps(no_base), "n.json")).over_http("m", "http")


def test_a_group_gets_a_backend_per_deployment(tmp_path: Path) -> None:
    config = load_router_config(write(tmp_path, MIXED), environ={"KEY_A": KEY})
    pool = build_pool(config, "qwen", transport="auto", http=HttpSessions())
    backends = [s.backend for s in pool.states]
    assert isinstance(backends[0], HttpBackend) and backends[0].api_base == "http://a:8000/v1"
    assert [type(b) for b in backends[1:]] == [LiteLLMDeployment, LiteLLMDeployment]
    # passthrough: /responses only where the http transport serves it, chat anywhere
    assert pool.raw_endpoints == {"chat/completions", "completions", "responses"}
    through_litellm = build_pool(config, "qwen", transport="litellm", http=HttpSessions())
    assert {type(s.backend) for s in through_litellm.states} == {LiteLLMDeployment}
    assert through_litellm.raw_endpoints == {"chat/completions", "completions"}


async def test_a_litellm_deployment_is_pinned_to_its_own_parameters(tmp_path: Path) -> None:
    config = load_router_config(write(tmp_path, MIXED), environ={"KEY_A": KEY})
    timeout_one, claude = (LiteLLMDeployment(d) for d in config.deployments[1:])
    call = {"api_base": "http://client/v1", "api_key": "client-key", "temperature": 0.5, "timeout": 5}
    target = await timeout_one._target("openai/asked-for", call)
    # its model, base URL and key, whatever the call says; the call's timeout over the deployment's
    assert target["model"] == "openai/Qwen2.5-7B" and target["api_base"] == "http://b:8000/v1"
    assert "api_key" not in target  # none of its own: litellm reads the provider's variable, never the caller's
    assert target["timeout"] == 5 and target["temperature"] == 0.5 and target["num_retries"] == 0
    claude_target = await claude._target("qwen", {"timeout": 5})
    assert claude_target["api_key"] == KEY and claude_target["api_base"] is None
    assert "weight" not in await LiteLLMDeployment(config.deployments[0])._target("m", {})  # the pool's, not litellm's


def test_a_pool_balances_over_http_and_litellm_deployments_and_fails_over(tmp_path: Path) -> None:
    # The litellm one answers from litellm's own mock_response (a real litellm call, offline).
    text = """
model_list:
  - {model_name: m, litellm_params: {model: openai/m, api_base: "http://a/v1"}}
  - {model_name: m, litellm_params: {model: openai/m, mock_response: from-litellm}}
"""
    config = load_router_config(write(tmp_path, text))
    http = FakeDeployment("from-http")
    litellm = LiteLLMDeployment(config.deployments[1])
    pool = DeploymentPool("m", config.deployments, [http, litellm], rng=random.Random(0), allowed_fails=0)
    answers = [call(pool) for _ in range(40)]
    assert {"from-http", "from-litellm"} == set(answers) and http.calls == answers.count("from-http")
    http.error = UpstreamError("m: upstream error 500", status=502, retryable=True)
    assert {call(pool) for _ in range(10)} == {"from-litellm"}  # the http one failed over, then cooled down
    assert pool.states[0].cooldowns == 1
    # and the other way: litellm's error read as selfpara's (a retryable 502), the http one answers
    failing = config.deployments[1].model_copy(update={"params": {"mock_response": "litellm.InternalServerError"}})
    http.error = None
    pool = DeploymentPool("m", [config.deployments[0], failing], [http, LiteLLMDeployment(failing)], allowed_fails=0)
    assert {call(pool) for _ in range(10)} == {"from-http"}
    assert pool.states[1].failures >= 1 and pool.states[1].cooldowns == 1


def test_server_settings_check_the_config_at_startup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEY_A", KEY)
    path = str(write(tmp_path, TWO))
    settings = load_settings(upstream={"model": "openai/qwen"}, server={"router_config": path})
    assert settings.router_group() == "qwen" and settings.resolved_transport() == "http"
    assert KEY in settings.secrets()
    with pytest.raises(ConfigError, match="names no deployment of 'openai/llama'"):
        load_settings(upstream={"model": "openai/llama"}, server={"router_config": path})
    with pytest.raises(ConfigError, match="api_base or a router_config, not both"):
        load_settings(upstream={"model": "openai/qwen", "api_base": "http://c/v1"}, server={"router_config": path})
    with pytest.raises(ConfigError, match="router_config: cannot read"):
        load_settings(upstream={"model": "openai/qwen"}, server={"router_config": str(tmp_path / "no.yaml")})
    settings_file = write(tmp_path, f'router_config = "{path}"\n[upstream]\nmodel = "openai/qwen"\n', "proxy.toml")
    assert load_settings(settings_file).router_config is not None
    mixed = str(write(tmp_path, MIXED, "mixed.yaml"))
    assert load_settings(upstream={"model": "openai/qwen"}, server={"router_config": mixed}).resolved_transport() == (
        "http+litellm"
    )
    forced = {"model": "openai/qwen", "transport": "litellm"}
    assert load_settings(upstream=forced, server={"router_config": mixed}).resolved_transport() == "litellm"
    with pytest.raises(ConfigError, match=r"transport http cannot serve 'qwen' .*\['timeout'\]"):
        load_settings(upstream={"model": "openai/qwen", "transport": "http"}, server={"router_config": mixed})


def test_routes_of_the_upstream_and_its_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KEY_A", KEY)
    settings = ServerSettings(
        upstream=build_config(model="openai/qwen", judge_model="openai/qwen"), router_config=str(write(tmp_path, TWO))
    )
    assert settings.router_config is not None
    routes = build_routes(
        settings.router_config, ["openai/qwen", "qwen", "openai/other"], transport="auto", http=HttpSessions()
    )
    assert set(routes) == {"openai/qwen", "qwen"} and routes["openai/qwen"] is routes["qwen"]
    assert isinstance(routes["qwen"], DeploymentPool)
    client = client_from_config(settings.upstream, routes=routes)
    assert client.backend_for("openai/qwen") is routes["qwen"]
    assert client.backend_for("openai/other") is not routes["qwen"]


# ---- the pool -----------------------------------------------------------------------------------


class FakeDeployment:
    """Stands in for one deployment's HttpBackend: answers, or fails as scripted."""

    raw_endpoints = frozenset({"chat/completions"})

    def __init__(self, name: str) -> None:
        self.name = name
        self.calls = 0
        self.error: UpstreamError | None = None
        self.gate: asyncio.Event | None = None

    async def complete(self, model: str, messages: Any, params: dict[str, Any]) -> Completion:
        self.calls += 1
        assert "api_key" not in params and "api_base" not in params  # each deployment has its own
        if self.gate is not None:
            await self.gate.wait()
        if self.error is not None:
            raise self.error
        return Completion(text=self.name)

    async def raw_stream(self, model: str, endpoint: str, body: Any, params: Any) -> Any:
        self.calls += 1
        if self.error is not None:
            raise self.error

        async def events() -> Any:
            yield {"choices": [{"delta": {"content": self.name}}]}

        return events()


def pool_of(tmp_path: Path, n: int = 2, **kwargs: Any) -> tuple[DeploymentPool, list[FakeDeployment], FakeClock]:
    entries = [
        {"model_name": "m", "litellm_params": {"model": "openai/m", "api_base": f"http://d{i}/v1"}} for i in range(n)
    ]
    config = load_router_config(write(tmp_path, json.dumps(entries), "r.json"))
    clock = FakeClock(100.0)
    fakes = [FakeDeployment(f"d{i}") for i in range(n)]
    pool = DeploymentPool("m", config.deployments, list(fakes), clock=clock, rng=random.Random(0), **kwargs)
    return pool, fakes, clock


def call(pool: DeploymentPool) -> str:
    messages = [{"role": "user", "content": "q"}]
    return asyncio.run(pool.complete("openai/m", messages, {"api_key": "client", "timeout": 1})).text


def test_failover_then_cooldown_then_probe(tmp_path: Path) -> None:
    pool, (bad, good), clock = pool_of(tmp_path, allowed_fails=2, cooldown_s=5)
    bad.error = UpstreamError("m: upstream error 500", status=502, retryable=True)
    answers = [call(pool) for _ in range(40)]
    assert answers == ["d1"] * 40  # every call answered: failed ones went to the other at once
    assert bad.calls == 3  # allowed_fails=2: the third failure in a row cooled it down
    assert pool.states[0].cooldowns == 1 and pool.snapshot()[0]["cooling_down"]
    clock.now += 5.1  # the cooldown is over: the next call that picks it is a probe
    for _ in range(20):
        call(pool)
    assert bad.calls == 4 and pool.states[0].cooldowns == 2  # one failed probe cools it down again at once
    bad.error = None
    clock.now += 5.1
    for _ in range(40):
        call(pool)
    assert bad.calls > 10 and pool.states[0].failures_in_row == 0  # back in the rotation


def test_one_probe_at_a_time_after_a_cooldown(tmp_path: Path) -> None:
    pool, (bad, good), clock = pool_of(tmp_path, routing_strategy="least-busy", allowed_fails=0, cooldown_s=5)
    bad.error = UpstreamError("m: upstream error 500", status=502, retryable=True)
    call(pool)
    assert bad.calls <= 1 and pool.states[0].cooldowns == bad.calls
    if bad.calls == 0:  # least-busy took the healthy one first: make the broken one fail once
        pool.states[1].in_flight = 1
        call(pool)
        pool.states[1].in_flight = 0
    assert bad.calls == 1 and pool.snapshot()[0]["cooling_down"]
    clock.now += 5.1

    async def burst() -> list[str]:
        bad.gate = good.gate = asyncio.Event()  # every call waits until all have chosen their deployment
        before = bad.calls + good.calls
        tasks = [asyncio.create_task(pool.complete("openai/m", [], {})) for _ in range(10)]
        await settle(lambda: bad.calls + good.calls == before + 10, "all 10 calls reached a deployment")
        bad.gate.set()
        return [c.text for c in await asyncio.gather(*tasks)]

    assert asyncio.run(burst()) == ["d1"] * 10  # the probe failed over too
    assert bad.calls == 2  # least-busy would have sent every idle-time call there; the probe kept them off
    assert pool.states[0].cooldowns == 2 and not pool.states[0].probing


def test_a_bad_request_is_not_sent_elsewhere(tmp_path: Path) -> None:
    pool, (first, second), _ = pool_of(tmp_path, routing_strategy="least-busy")
    first.error = second.error = UpstreamError("m: the upstream rejected the request", status=400)
    with pytest.raises(UpstreamError, match="rejected"):
        call(pool)
    assert first.calls + second.calls == 1 and pool.states[0].failures == 0


def test_a_wrong_key_or_model_name_fails_over_and_cools_down_at_once(tmp_path: Path) -> None:
    pool, (bad, good), _ = pool_of(tmp_path, routing_strategy="least-busy")
    bad.error = UpstreamError("m: the upstream rejected the API key (HTTP 401)", status=401)
    assert [call(pool) for _ in range(6)] == ["d1"] * 6
    assert bad.calls == 1 and pool.states[0].cooldowns == 1


def test_all_failing_raises_the_last_error_and_all_cooling_still_tries(tmp_path: Path) -> None:
    pool, fakes, _ = pool_of(tmp_path, allowed_fails=0)
    for f in fakes:
        f.error = UpstreamTimeout("m: timed out")
    with pytest.raises(UpstreamTimeout):
        call(pool)
    assert [f.calls for f in fakes] == [1, 1]
    assert all(s["cooling_down"] for s in pool.snapshot())
    with pytest.raises(UpstreamTimeout):  # every one cooling: tried anyway, rather than no call at all
        call(pool)
    assert sum(f.calls for f in fakes) == 4


def test_num_retries_bounds_the_failover(tmp_path: Path) -> None:
    pool, fakes, _ = pool_of(tmp_path, n=3, num_retries=0)
    for f in fakes:
        f.error = UpstreamError("m: upstream error 503", status=502, retryable=True)
    with pytest.raises(UpstreamError):
        call(pool)
    assert sum(f.calls for f in fakes) == 1


def test_least_busy_spreads_concurrent_calls(tmp_path: Path) -> None:
    pool, fakes, _ = pool_of(tmp_path, n=3, routing_strategy="least-busy")

    async def run() -> list[int]:
        gate = asyncio.Event()
        for f in fakes:
            f.gate = gate
        tasks = [asyncio.create_task(pool.complete("openai/m", [], {})) for _ in range(9)]
        await asyncio.sleep(0)
        busy = [s.in_flight for s in pool.states]
        gate.set()
        await asyncio.gather(*tasks)
        return busy

    assert asyncio.run(run()) == [3, 3, 3]
    assert [s.in_flight for s in pool.states] == [0, 0, 0]


def test_simple_shuffle_follows_the_weights(tmp_path: Path) -> None:
    entries = [
        {"model_name": "m", "litellm_params": {"model": "openai/m", "api_base": "http://a/v1", "weight": 3}},
        {"model_name": "m", "litellm_params": {"model": "openai/m", "api_base": "http://b/v1"}},
    ]
    config = load_router_config(write(tmp_path, json.dumps(entries), "w.json"))
    assert config.over_http("m", "auto") == [True, True]  # weight is the pool's: no reason for litellm
    fakes = [FakeDeployment("a"), FakeDeployment("b")]
    pool = DeploymentPool("m", config.deployments, list(fakes), rng=random.Random(1))
    answers = [call(pool) for _ in range(400)]
    assert 0.65 < answers.count("a") / 400 < 0.85  # 3:1


def test_a_stream_keeps_its_deployment_busy_until_it_is_closed(tmp_path: Path) -> None:
    pool, (bad, good), _ = pool_of(tmp_path, routing_strategy="least-busy")
    bad.error = UpstreamError("m: upstream unavailable", status=502, retryable=True)

    async def run() -> list[Any]:
        events = await pool.raw_stream("openai/m", "chat/completions", {}, {})
        held = [s.in_flight for s in pool.states]
        items = [item async for item in events]
        return [held, items, [s.in_flight for s in pool.states]]

    held, items, after = asyncio.run(run())
    assert held == [0, 1] and items[0]["choices"][0]["delta"]["content"] == "d1" and after == [0, 0]


def test_a_passthrough_call_goes_only_where_its_endpoint_is_served(tmp_path: Path) -> None:
    pool, (chat_only, both), _ = pool_of(tmp_path, routing_strategy="least-busy")
    both.raw_endpoints = frozenset({"chat/completions", "responses"})  # type: ignore[misc]
    pool.raw_endpoints = frozenset({"chat/completions", "responses"})

    async def first_text(endpoint: str) -> str:
        events = await pool.raw_stream("openai/m", endpoint, {}, {})
        return str([e async for e in events][0]["choices"][0]["delta"]["content"])

    assert {asyncio.run(first_text("responses")) for _ in range(6)} == {"d1"} and chat_only.calls == 0
    assert {asyncio.run(first_text("chat/completions")) for _ in range(6)} == {"d0", "d1"}
    both.error = UpstreamError("m: upstream unavailable", status=502, retryable=True)
    with pytest.raises(UpstreamError, match="unavailable"):  # no other deployment serves it: no failover there
        asyncio.run(first_text("responses"))
    with pytest.raises(UpstreamError, match="no deployment passes embeddings requests through"):
        asyncio.run(first_text("embeddings"))


# ---- metric labels ------------------------------------------------------------------------------


def test_endpoint_labels_are_bounded() -> None:
    assert endpoint_of("/v1/chat/completions") == endpoint_of("/chat/completions/") == "chat/completions"
    assert endpoint_of("/v1/models/openai/fake") == "models/{id}"
    assert endpoint_of("/metrics") == "metrics" and endpoint_of("/wp-login.php") == "other"


def test_error_reasons() -> None:
    assert reason_of(UpstreamTimeout("x")) == "timeout"
    assert reason_of(UpstreamError("x", status=429, retryable=True)) == "rate_limited"
    assert reason_of(UpstreamError("x", status=502, retryable=True)) == "unavailable"
    assert reason_of(UpstreamError("x", status=401)) == "auth"


def test_serve_check_reads_the_router_config_from_the_environment(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from selfpara.cli import app

    path = str(write(tmp_path, TWO))
    env = {"KEY_A": KEY, "SELFPARA_ROUTER_CONFIG": path, "SELFPARA_MODEL": None, "SELFPARA_API_BASE": None}
    runner = CliRunner()
    result = runner.invoke(app, ["serve", "--model", "openai/qwen", "--check"], env=env)
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert shown["router_config"]["path"] == path and len(shown["router_config"]["deployments"]) == 3
    assert KEY not in result.output
    wrong = runner.invoke(app, ["serve", "--model", "openai/llama", "--check"], env=env)
    said = " ".join(wrong.output.replace("│", " ").split())  # rich draws usage errors in a box
    assert wrong.exit_code == 2 and "names no deployment of 'openai/llama'" in said
