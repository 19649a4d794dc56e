"""What one request may cost and what a failed helper call costs it (issue 45's fourth round, replayed against
the real proxy on loopback and the fake upstream): a failed LLM judge call leaves its pair to the cheap
equivalence functions and flags the answer (it was a 502 although every answer had come back); prompt
arrays, `best_of` and the upstream calls of one request have limits."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.fake_upstream import FakeUpstream
from tests.helpers.proxy import (  # fake, reset_fake: the module's fake upstream, reset before each test
    AUTH,
    assert_openai_error,
    chat,
    fake,
    post,
    reset_fake,
    settings_for,
    start,
)

FIXTURES = (fake, reset_fake)
JUDGED = {"equivalence": "exact,numeric,llm", "paraphrase_check": "off"}  # the docs' example


# ---- 3. a failed judge ---------------------------------------------------------------------------------------


def test_a_failed_judge_call_leaves_its_pair_to_the_cheap_functions(fake: FakeUpstream) -> None:
    """The probe: with the upstream failing only judge prompts, the client got 502 upstream_failed although
    all 4 answers had come back."""
    fake.reset(answer=lambda i: "Paris" if i % 2 == 0 else "It is Paris")  # exact cannot tell: the judge is asked
    fake.fail(500, when="judge", times=None)
    with start(settings_for(fake, {**JUDGED, "retries": 0})) as server:
        r = post(server, chat())
        assert r.status_code == 200, r.text
        report = r.json()["selfpara"]
        assert "judge_failed" in report["flags"] and "partial_failure" not in report["flags"]
        assert all(a["error"] is None for a in report["answers"]) and len(report["answers"]) == 4
        judged = [c for c in report["comparisons"] if c["decided_by"] != "exact"]
        assert judged and {c["decided_by"] for c in judged} == {"none"}  # undecided: counted as different
        assert r.json()["choices"][0]["message"]["content"] == "Paris"
        assert "judge_failed" in r.headers["x-selfpara-flags"]
        # the failed verdicts were not kept: with the judge back, the same question is judged again
        fake.reset(answer=lambda i: "Paris" if i % 2 == 0 else "It is Paris")
        again = post(server, chat())
        assert again.status_code == 200 and "judge_failed" not in again.json()["selfpara"]["flags"]
        assert fake.calls_of("judge")


# ---- 4. what one request may cost -----------------------------------------------------------------------------


def complete(server: Any, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(f"{server.base}/v1/completions", json=body, headers=AUTH, timeout=30)


def test_prompt_arrays_and_best_of_have_limits(fake: FakeUpstream) -> None:
    """The probe: 150,000 prompts with best_of 1000 went upstream as one call (n and max_tokens were capped)."""
    with start(settings_for(fake, max_prompts=4)) as server:
        many = {"model": "openai/fake", "prompt": ["x"] * 5, "max_tokens": 8}
        assert assert_openai_error(complete(server, many), 400)["param"] == "prompt"
        best = {"model": "openai/fake", "prompt": "x", "best_of": 1000}
        assert assert_openai_error(complete(server, best), 400)["param"] == "best_of"
        assert fake.calls == []
        for fits in (["x"] * 4, [101, 102, 103, 104, 105, 106], [[101, 102], [103]], "x"):  # token ids: one prompt
            assert complete(server, {"model": "openai/fake", "prompt": fits, "best_of": 6}).status_code == 200, fits
        r = complete(server, {"model": "openai/fake", "prompt": "x", "best_of": "6"})
        assert assert_openai_error(r, 400)["param"] == "best_of"  # a string is not coerced


def test_one_request_makes_at_most_max_upstream_calls(fake: FakeUpstream) -> None:
    """The probe: one wrapped request could make 77 upstream calls (k = 10, llm equivalence), with no cap."""
    cities = ["Paris", "Lyon", "Nice", "Lille", "Metz", "Brest"]
    fake.reset(answer=lambda i: cities[i])  # six answers no cheap function decides: 15 judge calls wanted
    with start(settings_for(fake, {**JUDGED, "k": 5}, max_upstream_calls=17)) as server:
        r = post(server, chat())
        assert r.status_code == 200, r.text
        report = r.json()["selfpara"]
        assert len(fake.calls) == 17 and len(fake.calls_of("judge")) == 10  # 1 paraphrase + 6 answers + 10
        assert "call_limit_reached" in report["flags"] and report["usage"]["calls"] == 17
        assert all(a["error"] is None for a in report["answers"])  # the answers were never refused


def test_the_call_limit_must_leave_room_for_a_request_of_max_k(fake: FakeUpstream) -> None:
    with pytest.raises(ValueError, match="max_upstream_calls=31 is below 32"):
        settings_for(fake, max_k=10, max_upstream_calls=31)
    assert settings_for(fake, max_k=10, max_upstream_calls=32).max_upstream_calls == 32
