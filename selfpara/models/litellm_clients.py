"""OpenAI clients for litellm whose responses stop at a byte cap and that follow no redirect.

litellm reads a whole response body before it returns, so the proxy's `max_upstream_response_bytes`
could only be checked afterwards: a 200 MB reply took the process to 1.1 GB, four at once to 3.4 GB.
For `openai/...` models litellm takes the OpenAI client to call with (its `client` argument); the ones
made here read through a transport that counts the bytes of each response as they arrive and fails
the call past the cap (a body announcing more fails before a byte of it is read). Other providers
read through litellm's own clients: uncapped until the reply is in (docs/proxy.md).

They never follow a redirect (the OpenAI client's own default does): a hop could lead from an upstream
on the proxy's allow-list to one that is not, and a 301/302 would turn the POST into a GET. A 3xx is
the upstream's answer, mapped as the http transport maps it (`classify_status`).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncGenerator, AsyncIterator
from typing import TYPE_CHECKING, Any

from selfpara.models.upstream_data import UpstreamResponseTooLarge

if TYPE_CHECKING:
    import httpx
    import openai

TOO_LARGE = "selfpara: the upstream's response exceeds"
"""How the error starts; litellm re-raises errors of the OpenAI client as its own, keeping their text."""


def too_large_error(exc: BaseException) -> UpstreamResponseTooLarge | None:
    """The cap's error behind `exc` (litellm's wrapping of it), or None."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, UpstreamResponseTooLarge):
            return current
        current = current.__cause__ or current.__context__
    text = str(exc)
    if TOO_LARGE in text:
        return UpstreamResponseTooLarge(text[text.index(TOO_LARGE) :].splitlines()[0])
    return None


def _capped_transport(cap: int | None) -> httpx.AsyncBaseTransport:
    import httpx

    if cap is None:
        return httpx.AsyncHTTPTransport()
    limit: int = cap  # narrowed for the classes below

    class CappedStream(httpx.AsyncByteStream):
        def __init__(self, stream: Any) -> None:
            self._stream = stream

        async def __aiter__(self) -> AsyncIterator[bytes]:
            size = 0
            async for chunk in self._stream:
                size += len(chunk)
                if size > limit:
                    raise UpstreamResponseTooLarge(f"{TOO_LARGE} {cap} bytes (max_upstream_response_bytes)")
                yield chunk

        async def aclose(self) -> None:
            await self._stream.aclose()

    class CappedTransport(httpx.AsyncHTTPTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            response = await super().handle_async_request(request)
            length = response.headers.get("content-length", "")
            if length.isdigit() and int(length) > limit:
                await response.aclose()
                raise UpstreamResponseTooLarge(f"{TOO_LARGE} {cap} bytes (max_upstream_response_bytes)")
            response.stream = CappedStream(response.stream)
            return response

    return CappedTransport()


class CappedOpenAIClients:
    """One capped OpenAI client per event loop and (base URL, key), closed with its loop.

    Args:
        cap: most bytes of one response (or whole stream); None: no cap (redirects are still not followed).
    """

    def __init__(self, cap: int | None) -> None:
        self.cap = cap
        self._clients: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop,
            dict[tuple[str | None, str], tuple[openai.AsyncOpenAI, AsyncGenerator[None, None]]],
        ] = weakref.WeakKeyDictionary()

    async def client(self, api_base: str | None, api_key: str) -> openai.AsyncOpenAI:
        loop = asyncio.get_running_loop()
        mine = self._clients.setdefault(loop, {})
        entry = mine.get((api_base, api_key))
        if entry is not None:
            return entry[0]
        import httpx
        import openai

        http = httpx.AsyncClient(transport=_capped_transport(self.cap), timeout=None, follow_redirects=False)
        # openai's newest releases type it as their httpx2 client and still take an httpx one (and older ones only that)
        client = openai.AsyncOpenAI(base_url=api_base, api_key=api_key, http_client=http, max_retries=0)  # type: ignore[arg-type,unused-ignore]
        guard = _closer(client)
        await guard.__anext__()  # closed by this loop's shutdown_asyncgens (asyncio.run, uvicorn)
        mine[(api_base, api_key)] = (client, guard)
        return client


async def _closer(client: openai.AsyncOpenAI) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        await client.close()
