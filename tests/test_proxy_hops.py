"""Where the proxy's calls may go and how they end (issue 45's fourth round of probes, replayed against the
real proxy on loopback and scripted fake upstreams): a redirect is never followed, on either transport,
so an upstream on the operator's list cannot hand a request on to one that is not, nor turn its POST
into a GET; a passthrough stream that ends before its first event is a 502, not an empty 200."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.fake_upstream import FakeUpstream, serve_fake
from tests.helpers.proxy import (  # fake, reset_fake: the module's fake upstream, reset before each test
    AUTH,
    assert_openai_error,
    chat,
    fake,
    healthy,
    post,
    reset_fake,
    settings_for,
    sse,
    start,
)

FIXTURES = (fake, reset_fake)


@pytest.fixture(scope="module")
def listed_upstream() -> Iterator[FakeUpstream]:
    yield from serve_fake()


@pytest.fixture(scope="module")
def unlisted_upstream() -> Iterator[FakeUpstream]:
    yield from serve_fake()


@pytest.fixture()
def listed(listed_upstream: FakeUpstream) -> FakeUpstream:
    """The upstream a request may name (on the operator's list), reset for each test."""
    listed_upstream.reset(answer="Berlin")
    return listed_upstream


@pytest.fixture()
def unlisted(unlisted_upstream: FakeUpstream) -> FakeUpstream:
    """Where the listed upstream redirects to: not on the list (reset for each test)."""
    unlisted_upstream.reset(answer="Rome")
    return unlisted_upstream


def host_port(upstream: FakeUpstream) -> str:
    return upstream.url.split("//", 1)[1].split("/", 1)[0]  # type: ignore[attr-defined]


# ---- 1. redirects ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["http", "litellm"])
@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_listed_upstream_cannot_redirect_a_request_off_the_list(
    fake: FakeUpstream, listed: FakeUpstream, unlisted: FakeUpstream, transport: str, status: int
) -> None:
    """The probe: with 127.0.0.1:19010 listed and 19010 answering 307 to 19011, a request naming 19010 got
    19011's answer (19011 logged 6 POSTs); on 301/302 the proxy followed with a GET and relayed its body."""
    where = {"Location": f"{unlisted.url}/chat/completions"}  # type: ignore[attr-defined]
    listed.raw(b'{"moved": true}', status=status, headers=where, times=None)
    settings = settings_for(fake, client_api_bases=[host_port(listed)], upstream_transport=transport)
    with start(settings) as proxy:
        own = {"api_base": listed.url, "api_key": "client-own-key"}  # type: ignore[attr-defined]
        assert_openai_error(post(proxy, chat(selfpara=own)), 502, "upstream_failed")
        for stream in (False, True):  # passthrough, plain and streamed
            body = chat(selfpara={**own, "enabled": False}, stream=stream)
            assert_openai_error(post(proxy, body), 502, "upstream_failed")
        assert unlisted.requests == [] and unlisted.calls == []  # not one hop, POST or GET
        assert listed.requests and {method for method, _ in listed.requests} == {"POST"}
        assert len(listed.requests) == len(listed.calls)  # a redirect is not retried either
    assert fake.calls == []


def test_the_proxys_own_upstream_redirecting_is_a_502_too(fake: FakeUpstream, unlisted: FakeUpstream) -> None:
    fake.raw(b"{}", status=307, headers={"Location": f"{unlisted.url}/chat/completions"}, times=None)  # type: ignore[attr-defined]
    with start(settings_for(fake)) as proxy:
        assert_openai_error(post(proxy, chat()), 502, "upstream_failed")
    assert unlisted.requests == []


def test_a_client_upstream_over_litellms_own_clients_is_refused(fake: FakeUpstream, listed: FakeUpstream) -> None:
    """litellm's clients for providers other than openai/ follow redirects: such a request-named upstream is a 400."""
    settings = settings_for(
        fake, {"model": "hosted_vllm/fake"}, client_api_bases=[host_port(listed)], upstream_transport="litellm"
    )
    with start(settings) as proxy:
        body = {**chat(selfpara={"api_base": listed.url}), "model": "hosted_vllm/fake"}  # type: ignore[attr-defined]
        error = assert_openai_error(post(proxy, body), 400)
        assert error["param"] == "selfpara.api_base" and "redirect" in error["message"]
    assert listed.requests == [] and fake.calls == []


# ---- 10. a stream that ends before its first event ------------------------------------------------------------


@pytest.mark.parametrize("transport", ["http", "litellm"])
@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/completions"])
def test_a_passthrough_stream_that_opens_with_done_is_a_502(fake: FakeUpstream, transport: str, path: str) -> None:
    """The probe: `data: [DONE]` as the first event was relayed as a 200 stream of no chunk."""
    with start(settings_for(fake, upstream_transport=transport)) as proxy:
        body = chat(selfpara={"enabled": False}, stream=True)
        if path == "/v1/completions":
            body = {"model": "openai/fake", "prompt": "Paris is", "stream": True}
        fake.raw(sse("[DONE]"), stream=True, times=None, when="completion" if path == "/v1/completions" else "any")
        r = httpx.post(f"{proxy.base}{path}", json=body, headers=AUTH, timeout=30)
        assert_openai_error(r, 502, "upstream_failed")
        fake.reset()
        healthy(proxy, fake)
