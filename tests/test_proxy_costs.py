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
