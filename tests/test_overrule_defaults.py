"""Issue 47: at every entry point's defaults the vote can change an answer. A scripted upstream (a remote model:
rewordings from one list call, checked by the model itself) answers the original one river and every rewording
another, on a question no renaming reads: the library, `ask` and the proxy return the rewordings' answer, with
the original's marked overruled. Before, the proxy ran its rewordings past a guard that let no list call's
wording count, so the reply was the original's, flagged `original_kept`."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from selfpara import SelfParaphraser, WrapConfig
from selfpara.cli import app
from selfpara.pipeline.lexicon.renamings import renamings
from selfpara.server.settings import ServerSettings
from tests.fake_upstream import FakeUpstream, serve_fake
from tests.helpers.proxy import PROXY_KEY, UPSTREAM_KEY, chat, post, start

QUESTION = "Which river flows through Vienna?"
WRONG, RIGHT = "The Rhine flows through Vienna.", "The Danube flows through Vienna."


@pytest.fixture(scope="module")
def upstream() -> Iterator[FakeUpstream]:
    yield from serve_fake()


@pytest.fixture(autouse=True)
def scripted(upstream: FakeUpstream) -> None:
    upstream.reset(answer=RIGHT, answers={0: WRONG})  # variant 0 is the original; every rewording says RIGHT


def test_no_renaming_reads_the_question() -> None:
    assert renamings(QUESTION) == []


def test_the_library_at_its_defaults(upstream: FakeUpstream) -> None:
    sp = SelfParaphraser(model="openai/fake", api_base=upstream.url, api_key=UPSTREAM_KEY)
    r = sp.answer(QUESTION)
    assert r.k_requested == WrapConfig().k == 3 and r.k_kept == 3
    assert r.answer == RIGHT and not r.original_won and "original_kept" not in r.flags
    assert all(v.verified and v.source == "list" for v in r.variants[1:])  # the model checked each rewording


def test_ask_at_its_defaults(upstream: FakeUpstream) -> None:
    result = CliRunner().invoke(
        app,
        ["ask", QUESTION, "--model", "openai/fake", "--api-base", upstream.url, "--json"],
        env={"OPENAI_API_KEY": UPSTREAM_KEY},
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["answer"] == RIGHT and not report["original_won"]


def test_the_proxy_at_its_defaults(upstream: FakeUpstream) -> None:
    settings = ServerSettings(
        api_key=PROXY_KEY,
        upstream=WrapConfig(model="openai/fake", api_base=upstream.url, api_key=UPSTREAM_KEY, cache="off"),
    )
    with start(settings) as proxy:
        r = post(proxy, chat(QUESTION))
    assert r.status_code == 200, r.text
    assert r.json()["choices"][0]["message"]["content"] == RIGHT
    report = r.json()["selfpara"]
    assert not report["original_won"] and "original_kept" not in report["flags"]


def test_rewordings_the_check_refuses_do_not_count(upstream: FakeUpstream) -> None:
    """The check is what lets a list call's wording count: with every rewording refused, nothing is voted."""
    upstream.raw(b'{"choices": [{"message": {"role": "assistant", "content": "NO"}}]}', when="judge", times=None)
    sp = SelfParaphraser(model="openai/fake", api_base=upstream.url, api_key=UPSTREAM_KEY)
    r = sp.answer(QUESTION)
    assert r.answer == WRONG and r.k_kept == 0 and "no_paraphrases" in r.flags
