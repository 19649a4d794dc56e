"""What every POST route shares: auth, content type, body, the concurrency slot, the
whole-request deadline, cancelling on client disconnect, error mapping and the one log
line per request (`Call`, `handle`)."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from fastapi import Request
from fastapi.responses import Response
from starlette.requests import ClientDisconnect

from selfpara.errors import SelfparaError
from selfpara.server.errors import ProxyError, error_response, from_selfpara
from selfpara.server.logs import printable
from selfpara.server.plan import check_auth, check_content_type, parse_json, read_body
from selfpara.server.state import Proxy, Slot
from selfpara.util.redaction import redact

log = logging.getLogger("selfpara.server")

T = TypeVar("T")


class ClientGone(Exception):
    """The client disconnected before its answer was ready; its work was cancelled."""


@dataclass
class Call:
    """One request being handled: its id, its clock, its slot, and the model name for the log."""

    proxy: Proxy
    request: Request
    rid: str
    started: float = field(default_factory=time.monotonic)
    model: str = "-"
    slot: Slot | None = None
    logged: bool = False  # its one log line is written

    @property
    def secrets(self) -> list[str | None]:
        return self.proxy.secrets

    def enter(self) -> Slot:
        """Take a place under the proxy's concurrency limit (429 when all are taken)."""
        slot = self.proxy.gate.try_enter()
        if slot is None:
            limit = self.proxy.settings.max_concurrent_requests
            raise ProxyError(
                429,
                f"the proxy is handling its limit of {limit} requests; retry shortly",
                type="rate_limit_error",
                code="proxy_overloaded",
                headers={"Retry-After": "1"},
            )
        self.slot = slot
        return slot

    def left(self) -> float:
        """Seconds left until the whole-request deadline."""
        return self.proxy.settings.request_timeout_s - (time.monotonic() - self.started)

    def deadline_error(self) -> ProxyError:
        limit = self.proxy.settings.request_timeout_s
        return ProxyError(
            504,
            f"the request did not finish within the proxy's deadline of {limit:g}s (request_timeout_s)",
            type="server_error",
            code="request_timeout",
        )

    def done(self, status: int, **fields: Any) -> None:
        """The request's one log line (and, for an error, its count in the metrics)."""
        self.logged = True
        metrics = self.proxy.metrics
        if metrics is not None and status >= 400:
            metrics.observe_error(str(fields.get("error") or status))
        extra = " ".join(f"{k}={printable(v, 300)}" for k, v in fields.items())
        model, latency_ms = printable(self.model, 200), round(1000 * (time.monotonic() - self.started))
        keyed: dict[str, Any] = {"status": status, "model": model, "latency_ms": latency_ms}  # --log-format json
        keyed.update({k: v if isinstance(v, (bool, int, float)) else printable(v, 300) for k, v in fields.items()})
        log.info(
            "request_id=%s status=%d model=%s latency_ms=%d %s",
            self.rid,
            status,
            model,
            latency_ms,
            extra,
            extra={"request_id": self.rid, "fields": keyed},
        )

    def gone(self, *, stream: bool = False) -> None:
        """The client hung up before its answer was complete: its log line (499) and count."""
        self.done(499, **({"stream": True} if stream else {}), error="client_disconnected")
        log.info("request_id=%s client disconnected; its work was cancelled", self.rid, extra={"request_id": self.rid})

    def cut_by_shutdown(self, *, stream: bool = False) -> None:
        """The server's shutdown cancelled the request past its grace period: its log line (503) and count."""
        self.done(503, **({"stream": True} if stream else {}), error="shutting_down")

    def failed(self, exc: SelfparaError, *, stream: bool = False) -> ProxyError:
        """The client's error for `exc` (generic for upstream failures); the details go to the log."""
        err = from_selfpara(exc, self.secrets, self.rid)
        detail = redact(str(exc), self.secrets)
        self.done(err.status, **({"stream": True} if stream else {}), error=err.code, detail=repr(detail[:300]))
        return err

    async def wait(self, task: asyncio.Future[Any], timeout: float | None = None) -> bool:
        """Wait up to `timeout` seconds (default: the deadline) for `task`; True when it is done.

        Cancels `task` and raises ClientGone when the client disconnects meanwhile, or the
        deadline error (504) when the whole-request deadline passes.
        """
        limit = self.left() if timeout is None else min(timeout, self.left())
        gone = asyncio.ensure_future(_disconnected(self.request))
        try:
            await asyncio.wait({task, gone}, timeout=max(limit, 0.0), return_when=asyncio.FIRST_COMPLETED)
            client_left = gone.done()
        except BaseException:  # our own task was cancelled (server shutdown): stop the work too
            task.cancel()
            raise
        finally:
            gone.cancel()
        if task.done():
            return True
        if client_left:
            task.cancel()
            raise ClientGone()
        if self.left() <= 0:
            task.cancel()
            raise self.deadline_error()
        return False

    async def guarded(self, work: Awaitable[T]) -> T:
        """`work`'s result, cancelled when the client disconnects or the deadline passes."""
        task = asyncio.ensure_future(work)
        await self.wait(task)
        return task.result()


async def _disconnected(request: Request) -> None:
    """Returns when the client hangs up (the body is read already, so the next ASGI message is that)."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


Route = Callable[[Call, dict[str, Any]], Awaitable[Response]]


async def handle(request: Request, route: Route) -> Response:
    """Run `route` on the request's JSON body with the shared checks, limits, errors and log line."""
    proxy: Proxy = request.app.state.proxy
    settings = proxy.settings
    call = Call(proxy, request, getattr(request.state, "request_id", None) or uuid.uuid4().hex)
    request.state.call = call  # the request-id layer logs a request cut by shutdown that logged nothing
    try:
        check_auth(request, settings)
        check_content_type(request)
        body = parse_json(await read_body(request, settings.max_body_bytes, settings.body_timeout_s))
        return await route(call, body)
    except ProxyError as err:
        err.message = redact(err.message, proxy.secrets)
        call.done(err.status, error=err.code or err.type)
        if err.status >= 500 and "request id" not in err.message:
            err.message += f" (request id {call.rid})"
        return error_response(err)
    except SelfparaError as exc:
        return error_response(call.failed(exc))
    except (ClientGone, ClientDisconnect):  # gone while its answer was made, or while it sent the body
        call.gone()
        return Response(status_code=499)  # nobody reads it
    finally:
        # A streaming response takes the slot over and releases it when the stream closes.
        if call.slot is not None and not call.slot.handed_off:
            call.slot.release()
