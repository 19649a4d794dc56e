"""What the wrapped routes (chat completions, responses) share: the client-safe report,
the headline headers, the chosen answer, the fingerprint, and the honest event stream
(keep-alives while the pipeline runs, then the answer)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from fastapi.responses import Response, StreamingResponse

import selfpara
from selfpara.config import WrapConfig
from selfpara.errors import SelfparaError
from selfpara.result import Answer, WrappedAnswer
from selfpara.server.endpoint import Call
from selfpara.server.errors import ProxyError, public_reason
from selfpara.server.output import SSE_HEADERS, GuardedStream, iterate, scrub
from selfpara.server.streaming import KEEPALIVE
from selfpara.util.redaction import redact

log = logging.getLogger("selfpara.server")

LOGPROBS_NOTE = (
    "logprobs: the upstream returned no token log-probabilities for the chosen answer; "
    "send selfpara.enabled=false for the upstream's own"
)


def report(wa: WrappedAnswer, call: Call, *, ignored: list[str] = (), notes: list[str] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    """The `selfpara` field: the WrappedAnswer, with upstream error text replaced by generic
    reasons (the text goes to the log) and the proxy's secrets scrubbed."""
    out = wa.model_dump(mode="json")
    details: list[str] = []
    for item in out.get("answers", []):
        if item.get("error"):
            details.append(f"answer {item.get('variant')}: {item['error']}")
            item["error"] = public_reason(item["error"])
    for item in out.get("rejected", []):
        if item.get("reason") == "check_failed" and item.get("detail"):
            details.append(f"paraphrase check: {item['detail']}")
            item["detail"] = public_reason(item["detail"])
    if details:
        log.warning(
            "request_id=%s upstream failures: %s",
            call.rid,
            redact("; ".join(details), call.secrets)[:2000],
            extra={"request_id": call.rid},
        )
    out["usage"] = client_usage(wa)
    out["passthrough"] = False
    out["failed_variants"] = wa.failed_variants
    out["request_id"] = call.rid
    if ignored:
        out["ignored_params"] = list(ignored)
    if notes:
        out["notes"] = list(notes)
    return scrub(out, call.secrets)


CLIENT_USAGE = ("calls", "failed_calls", "prompt_tokens", "completion_tokens", "cost")
"""The usage fields a client sees: none says whether the call cache answered (the operator's logs and /metrics do)."""


def client_usage(wa: WrappedAnswer) -> dict[str, Any]:
    """The answer's usage as its client sees it: calls answered from the call cache counted as the calls
    they were, so that no client learns from a response that someone asked the same before
    (`Usage.as_if_uncached`)."""
    return wa.usage.as_if_uncached().model_dump(include=set(CLIENT_USAGE))


def headers(wa: WrappedAnswer) -> dict[str, str]:
    """The headline figures as response headers."""
    out = {
        "X-Selfpara-Vote-Share": f"{wa.vote_share:.4f}",
        "X-Selfpara-Confidence": f"{wa.confidence:.4f}",
        "X-Selfpara-K": str(wa.k_requested),
        "X-Selfpara-K-Kept": str(wa.k_kept),
        "X-Selfpara-K-Topped-Up": str(wa.k_topped_up),
        "X-Selfpara-Entropy": f"{wa.entropy:.4f}",
        "X-Selfpara-Original-Won": "true" if wa.original_won else "false",
        "X-Selfpara-Low-Vote-Share": "true" if "low_vote_share" in wa.flags else "false",
        "X-Selfpara-Low-Confidence": "true" if "low_confidence" in wa.flags else "false",
        "X-Selfpara-Calls": str(wa.usage.calls + wa.usage.cache_hits),
        "X-Selfpara-Calls-Saved": str(wa.calls_saved),  # by adaptive k
        "X-Selfpara-Voted": "true" if wa.doubt.voted else "false",  # doubt first: whether the vote ran
        "X-Selfpara-Doubt": wa.doubt.reason,
    }
    if wa.flags:
        out["X-Selfpara-Flags"] = ",".join(wa.flags)
    return out


def log_fields(wa: WrappedAnswer) -> dict[str, Any]:
    return {
        "mode": "wrapped",
        "k": wa.k_requested,
        "k_kept": wa.k_kept,
        "k_topped_up": wa.k_topped_up,
        "vote_share": f"{wa.vote_share:.2f}",
        "confidence": f"{wa.confidence:.2f}",
        "calls": wa.usage.calls,
        "cache_hits": wa.usage.cache_hits,
        "flags": ",".join(wa.flags) or "-",
        "voted": "yes" if wa.doubt.voted else "no",
    }


def done(call: Call, wa: WrappedAnswer, **fields: Any) -> None:
    """A wrapped answer is on its way: its log line and metrics."""
    if call.proxy.metrics is not None:
        call.proxy.metrics.observe_answer(wa)
    call.done(200, **fields, **log_fields(wa))


def chosen(wa: WrappedAnswer) -> Answer | None:
    """The answer whose text was returned: in the winning cluster, with the returned text."""
    return next((a for a in wa.answers if a.ok and a.cluster == wa.winner and a.text == wa.answer), None)


def finish_reason(wa: WrappedAnswer) -> str:
    """The chosen answer's own finish reason (`length` when it was cut at max_tokens)."""
    answer = chosen(wa)
    return (answer.finish_reason if answer else None) or "stop"


def chosen_logprobs(wa: WrappedAnswer) -> list[dict[str, Any]] | None:
    """The chosen answer's token log-probabilities (OpenAI form), where the upstream returned them."""
    answer = chosen(wa)
    return answer.token_logprobs if answer else None


def logprob_notes(wa: WrappedAnswer, asked: bool | None) -> list[str]:
    """A note when logprobs were asked for but the chosen answer has none."""
    return [LOGPROBS_NOTE] if asked and chosen_logprobs(wa) is None else []


def fingerprint(cfg: WrapConfig) -> str:
    """`system_fingerprint`: changes when selfpara's version or the wrapping settings that
    shape answers change (as OpenAI's changes with its backend configuration)."""
    # Where calls are cached does not shape answers: replicas with other cache settings share a fingerprint.
    unshaping = ("logprobs", "top_logprobs", "cache", "cache_size", "cache_ttl_s")
    public = {k: v for k, v in cfg.public_dict().items() if k not in unshaping}
    digest = hashlib.sha256(json.dumps([selfpara.__version__, public], sort_keys=True, default=str).encode())
    return "fp_selfpara_" + digest.hexdigest()[:12]


async def stream(
    call: Call,
    work: Awaitable[WrappedAnswer],
    render: Callable[[WrappedAnswer], list[bytes]],
    error_events: Callable[[ProxyError], list[bytes]],
) -> Response:
    """Stream a wrapped answer. A fast answer or failure (within the first keep-alive
    interval) gets its real status; a slow one gets a 200, keep-alives, then the answer's
    events from `render` or an error's from `error_events`. The pipeline is cancelled when
    the client hangs up or the whole-request deadline passes."""
    settings = call.proxy.settings
    task = asyncio.ensure_future(work)
    if await call.wait(task, settings.keepalive_s):  # raises ClientGone / the deadline error
        wa = task.result()  # raises SelfparaError -> the caller's error response
        items = render(wa)  # raises the 502 of an answer JSON cannot carry -> the caller's error response
        done(call, wa, stream=True)
        return StreamingResponse(iterate(items), media_type="text/event-stream", headers={**SSE_HEADERS, **headers(wa)})
    finished = False  # the stream's outcome is logged (else the client hung up first)

    async def body() -> AsyncIterator[bytes]:
        nonlocal finished
        yield KEEPALIVE
        while not task.done():
            if call.left() <= 0:
                task.cancel()
                err = call.deadline_error()
                finished = True
                call.done(err.status, stream=True, error=err.code)
                for item in error_events(err):
                    yield item
                return
            await asyncio.wait({task}, timeout=min(settings.keepalive_s, call.left()))
            if not task.done():
                yield KEEPALIVE
        finished = True
        try:
            wa = task.result()
            items = render(wa)
        except SelfparaError as exc:
            items = error_events(call.failed(exc, stream=True))
        except ProxyError as err:  # an answer JSON cannot carry
            call.done(err.status, stream=True, error=err.code)
            items = error_events(err)
        except Exception:
            log.exception("request_id=%s pipeline failed", call.rid, extra={"request_id": call.rid})
            call.done(500, stream=True, error="internal_error")
            items = error_events(
                ProxyError(500, f"internal error (request id {call.rid})", type="server_error", code="internal_error")
            )
        else:
            done(call, wa, stream=True)
        for item in items:
            yield item

    slot = call.slot
    assert slot is not None

    def on_close(cut: bool) -> None:
        if not task.done():  # the client went away, or the server is shutting down: stop spending upstream calls
            task.cancel()
        if not finished:
            if cut:
                call.cut_by_shutdown(stream=True)
            else:
                call.gone(stream=True)
        slot.release()

    slot.handed_off = True
    return GuardedStream(body(), on_close=on_close, headers=SSE_HEADERS)
