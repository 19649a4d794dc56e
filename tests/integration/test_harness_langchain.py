"""LangChain's ChatOpenAI through the proxy: chat completions and Responses mode, with
per-request settings in `extra_body`, on 3 questions."""

from __future__ import annotations

import pytest

from .harness import MODEL, QUESTIONS, TARGET, Proxy, needs, wrapped_with_k

pytestmark = pytest.mark.integration
needs("langchain_openai", "langchain-openai")  # the whole module skips, before the proxy starts


def test_langchain_chat_openai(proxy: Proxy) -> None:
    from langchain_openai import ChatOpenAI

    start = proxy.log_length()
    llm = ChatOpenAI(
        model=MODEL,
        base_url=proxy.base,
        api_key=proxy.key,
        max_retries=0,
        extra_body={"selfpara": {"k": 2}},
        include_response_headers=True,
    )
    messages = llm.batch(QUESTIONS)
    assert [m.content for m in messages] == [TARGET] * 3
    for m in messages:
        assert m.response_metadata["finish_reason"] == "stop"
        assert m.response_metadata["system_fingerprint"].startswith("fp_selfpara_")
        assert m.response_metadata["headers"]["x-selfpara-vote-share"] == "1.0000"
        assert m.response_metadata["headers"]["x-selfpara-k"] == "2"
    assert "".join(str(chunk.content) for chunk in llm.stream(QUESTIONS[0])) == TARGET
    assert len(wrapped_with_k(proxy.request_lines(start), 2)) == 4


def test_langchain_responses_mode(proxy: Proxy) -> None:
    from langchain_openai import ChatOpenAI

    start = proxy.log_length()
    llm = ChatOpenAI(
        model=MODEL,
        base_url=proxy.base,
        api_key=proxy.key,
        max_retries=0,
        use_responses_api=True,
        extra_body={"selfpara": {"k": 1}},
    )
    messages = llm.batch(QUESTIONS)
    assert [m.text for m in messages] == [TARGET] * 3
    assert all(m.response_metadata["status"] == "completed" for m in messages)
    assert len(wrapped_with_k(proxy.request_lines(start), 1)) == 3
