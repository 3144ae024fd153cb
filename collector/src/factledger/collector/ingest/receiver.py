"""POST /v1/traces and POST /v1/logs: the OTLP/HTTP receiver.

Both routes are one implementation (`_export`), parametrized by the signal: the same
tokens, limits, capacity checks, write-ahead log and status codes. A log record is
received as a log span (`collector.otlp_logs`), and its partial success counts
`rejected_log_records`.

The route only checks, decodes and hands over; it never waits for storage or validation.
Status codes follow the OTLP/HTTP specification:

| situation | status |
|---|---|
| accepted (some spans may be rejected: `partial_success` says how many and why) | 200 |
| body that does not decode | 400 |
| ingest tokens configured and the bearer token missing or unknown | 401 |
| body not sent within `body_timeout_seconds` (the connection is then closed) | 408 |
| body above the limit, or more spans than the backlog bound (`FACTLEDGER_QUEUE_SPANS`) | 413 |
| media type or content encoding not supported | 415 |
| pipeline full, shutting down, or the store cannot write (retryable; `Retry-After` set) | 503 |

A write-ahead log that cannot take the request (a full disk, an I/O error) is a 503 as
well: nothing of the request was kept, so nothing was acknowledged. A request refused
whole (a 503 the client will send again, or a 413) is counted in
`factledger_requests_refused_total` and `factledger_spans_refused_total`, never as
dropped spans.

Bodies being read or decoded at one time may hold at most `max_bodies_in_flight_bytes`
(decoding costs several times a body's size), counted as their bytes arrive and shared
fairly between tenants and their requests (`collector.ingest.in_flight`): a request past
its share when the bound is reached is a 503 as well. A request alone in flight is
always taken, so a body within `max_body_bytes` is never refused for good.

Capacity and authorization are checked before the body is read; a refused body is read
to its end before the reply goes out (`collector.request_bodies`), so the client reads
the status rather than a reset connection. Every refusal is a
`collector.refusals.Refusal` raised where it is decided, whose declared outcome gives its
status, body code and metric reason; `collector.ingest.refusal_http` answers all of them. Replies
use the request's media type (protobuf or JSON); error bodies are `google.rpc.Status`. The
bearer token picks the tenant written into every row of the request's spans
(`collector.access`).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from fastapi import APIRouter, FastAPI, Request, Response
from starlette.concurrency import run_in_threadpool

from factledger.collector import otlp, otlp_logs
from factledger.collector.api.models import LOGS_RESPONSES
from factledger.collector.ingest.base import Ingest
from factledger.collector.ingest.in_flight import EVICTED, InFlightBytes, Share
from factledger.collector.ingest.refusal_http import RETRY_AFTER_SECONDS as RETRY_AFTER_SECONDS
from factledger.collector.ingest.refusal_http import refused
from factledger.collector.metrics import Metrics
from factledger.collector.refusals import BodiesInFlight as BodiesInFlight
from factledger.collector.refusals import BodyTimeout as BodyTimeout
from factledger.collector.refusals import (
    PipelineFull,
    Refusal,
    StoreUnavailable,
    Unauthenticated,
)
from factledger.collector.service import CurrentIngest, CurrentService, Service
from factledger.processors.spans import SpanRecord

router = APIRouter(tags=["ingest"])

_DAY_NS = 86_400 * 1_000_000_000


@dataclass(frozen=True)
class _Signal:
    """What one OTLP route receives; the traces and logs routes differ in nothing else."""

    name: otlp.Signal
    dropped_metric: str
    """The counter of items dropped, by reason."""
    items: str


_TRACES = _Signal("traces", "factledger_spans_dropped_total", "spans")
_LOGS = _Signal("logs", "factledger_log_records_dropped_total", "log records")


@router.post("/v1/traces")
async def export_traces(
    request: Request, service: CurrentService, ingest: CurrentIngest
) -> Response:
    """Receive an OTLP `ExportTraceServiceRequest` (protobuf or JSON, optionally gzip)."""
    return await _export(request, service, ingest, _TRACES)


@router.post("/v1/logs", responses=LOGS_RESPONSES)
async def export_logs(request: Request, service: CurrentService, ingest: CurrentIngest) -> Response:
    """Receive an OTLP `ExportLogsServiceRequest` (protobuf or JSON, optionally gzip).

    Each log record that names its span becomes a log span (`collector.otlp_logs`); the
    log spans are written ahead as one protobuf `ExportTraceServiceRequest`, so they are
    replayed, stored and recovered as trace spans are."""
    return await _export(request, service, ingest, _LOGS)


async def _export(request: Request, service: Service, ingest: Ingest, signal: _Signal) -> Response:
    content_type = request.headers.get("content-type", "")
    reply_type = otlp.response_content_type(content_type)
    held: Share | None = None
    try:
        tenant = _admit(request, service, ingest, content_type)
        held = _budget(request, service.settings.max_bodies_in_flight_bytes).share(tenant)
        return await _receive(request, service, ingest, reply_type, tenant, held, signal)
    except Refusal as refusal:
        return refused(refusal, reply_type, service.metrics)
    finally:
        if held is not None:
            held.release()


def _admit(request: Request, service: Service, ingest: Ingest, content_type: str) -> str:
    """The request's tenant, once the checks made before its body is read have passed
    (token, media type, a store that writes, room in the pipeline); else a Refusal."""
    tenant: str | None = service.settings.access.ingest_tenant(
        request.headers.get("authorization", "")
    )
    if tenant is None:
        raise Unauthenticated
    otlp.media_of(content_type)
    if not ingest.store_writable:
        raise StoreUnavailable
    if not ingest.has_capacity(_declared_bytes(request)):
        raise PipelineFull
    return tenant


async def _receive(
    request: Request,
    service: Service,
    ingest: Ingest,
    reply_type: str,
    tenant: str,
    held: Share,
    signal: _Signal,
) -> Response:
    """Read, decode and hand over one request; a refusal on the way is raised."""
    limit = service.settings.max_body_bytes
    raw = await _read_limited(request, limit, service.settings.body_timeout_seconds, held)
    held.reading = False
    body = otlp.decompress(raw, request.headers.get("content-encoding"), limit=limit)
    if body is not raw:
        held.take(len(body))
    del raw  # a compressed body is not needed once inflated
    result = await run_in_threadpool(
        otlp.decode_request, body, reply_type, tenant=tenant, signal=signal.name
    )
    for reason, count in result.reasons.items():
        service.metrics.inc(signal.dropped_metric, count, reason=reason)
    spans, rejected, message = _within_retention(
        result, service.settings.retention_days, service.metrics, signal
    )
    if spans:
        await run_in_threadpool(_submit, ingest, signal, reply_type, tenant, body, spans)
    payload = otlp.encode_response(reply_type, rejected, message, signal.name)
    return Response(payload, status_code=200, media_type=reply_type)


def _submit(
    ingest: Ingest,
    signal: _Signal,
    reply_type: str,
    tenant: str,
    body: bytes,
    spans: list[SpanRecord],
) -> None:
    """Write the request ahead and queue its spans. A logs request is written as the
    trace request its log spans make: the write-ahead log replays trace requests."""
    if signal.name == "logs":
        ingest.submit(otlp.PROTOBUF, tenant, otlp_logs.encode_trace_request(spans), spans)
    else:
        ingest.submit(reply_type, tenant, body, spans)


def _within_retention(
    result: otlp.DecodeResult, retention_days: int, metrics: Metrics, signal: _Signal = _TRACES
) -> tuple[list[SpanRecord], int, str]:
    """Spans the store would expire at once (older than the retention) or cannot place in
    time (more than a day ahead) are refused here, counted and reported, rather than
    acknowledged and then dropped by the TTL or refused by the store."""
    now = time.time_ns()
    cutoff = now - retention_days * _DAY_NS
    horizon = now + _DAY_NS
    kept = [s for s in result.spans if cutoff <= s.start_time_unix_nano <= horizon]
    refused = len(result.spans) - len(kept)
    if not refused:
        return kept, result.rejected, result.error_message
    old = sum(1 for s in result.spans if s.start_time_unix_nano < cutoff)
    notes = []
    if old:
        metrics.inc(signal.dropped_metric, old, reason="older_than_retention")
        notes.append(f"{old} {signal.items} started before the {retention_days}-day retention")
    if refused - old:
        metrics.inc(signal.dropped_metric, refused - old, reason="start_in_the_future")
        notes.append(f"{refused - old} {signal.items} start more than a day in the future")
    note = "; ".join(notes) + "; they were not stored"
    message = f"{result.error_message}; {note}" if result.error_message else note
    return kept, result.rejected + refused, message


def _budget(request: Request, limit: int) -> InFlightBytes:
    """The app's one `InFlightBytes`, made on first use."""
    state = request.app.state
    budget: InFlightBytes | None = getattr(state, "bodies_in_flight", None)
    if budget is None or budget.limit != limit:
        budget = state.bodies_in_flight = InFlightBytes(limit)
    return budget


def bodies_in_flight(app: FastAPI) -> int:
    """Bytes of request bodies `app` holds now (its `factledger_bodies_in_flight_bytes`)."""
    budget: InFlightBytes | None = getattr(app.state, "bodies_in_flight", None)
    return budget.held if budget is not None else 0


async def _read_limited(request: Request, limit: int, timeout: float, held: Share) -> bytes:
    """The raw body, refusing more than `limit` bytes even before decompression, and a
    body that takes longer than `timeout` seconds to arrive. Its bytes are counted in
    `held` as they arrive; a request whose share another needs is refused here."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise otlp.PayloadTooLarge(f"body of {declared} bytes exceeds the limit of {limit}")
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(timeout):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise otlp.PayloadTooLarge(f"body exceeds the limit of {limit} bytes")
                held.take(len(chunk))
                chunks.append(chunk)
    except TimeoutError:
        raise BodyTimeout(f"the body did not arrive within {timeout:g} seconds") from None
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if not held.evicted or task is None:
            raise
        task.uncancel()
        raise BodiesInFlight(EVICTED) from None
    body = b"".join(chunks)
    chunks.clear()
    return body


def _declared_bytes(request: Request) -> int:
    """The body's size as its Content-Length declares it (0 when it does not): a lower
    bound of what it holds once inflated."""
    declared = request.headers.get("content-length", "")
    return int(declared) if declared.isdigit() else 0
