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
(decoding costs several times a body's size): a request past it is a 503 as well,
answered before its body is read when its Content-Length says how big it is, or as soon
as the bytes it sends pass the bound. A request alone in flight is always taken, so a
body within `max_body_bytes` is never refused for good.

Capacity and authorization are checked before the body is read. Replies use the
request's media type (protobuf or JSON); error bodies are `google.rpc.Status`. The
bearer token picks the tenant written into every row of the request's spans
(`collector.access`).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import dataclass

from fastapi import APIRouter, Request, Response
from starlette.concurrency import run_in_threadpool

from factledger.collector import otlp, otlp_logs
from factledger.collector.api_models import LOGS_RESPONSES
from factledger.collector.ingest.base import (
    Ingest,
    PipelineClosed,
    PipelineFull,
    RequestTooLarge,
    StoreUnavailable,
)
from factledger.collector.metrics import Metrics
from factledger.collector.service import CurrentIngest, CurrentService, Service
from factledger.collector.wal import WalUnavailable
from factledger.processors.spans import SpanRecord

log = logging.getLogger("factledger.receiver")
router = APIRouter(tags=["ingest"])

RETRY_AFTER_SECONDS = 2
_DAY_NS = 86_400 * 1_000_000_000
# google.rpc.Code for the Status body of each HTTP error status.
_RPC_CODE = {400: 3, 401: 16, 408: 4, 413: 8, 415: 3, 503: 14}
_WAL_UNAVAILABLE = "the write-ahead log cannot be written (disk full or failing), retry later"
_STORE_UNAVAILABLE = "the store cannot write now (full disk or out of resources), retry later"


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
    tenant = service.settings.access.ingest_tenant(request.headers.get("authorization", ""))
    if tenant is None:
        service.metrics.inc("factledger_requests_refused_total", reason="401")
        return _error(reply_type, 401, "missing or invalid bearer token")
    try:
        otlp.media_of(content_type)
    except otlp.UnsupportedMediaType as exc:
        return _error(reply_type, 415, str(exc))
    if not ingest.store_writable:
        service.metrics.inc("factledger_requests_refused_total", reason="store_unavailable")
        return _error(reply_type, 503, _STORE_UNAVAILABLE, retry=True)
    if not ingest.has_capacity(_declared_bytes(request)):
        service.metrics.inc("factledger_requests_refused_total", reason="queue_full")
        return _error(reply_type, 503, "pipeline is full, retry later", retry=True)
    settings = service.settings
    limit = settings.max_body_bytes
    budget = _budget(request, settings.max_bodies_in_flight_bytes, service.metrics)
    held = _Held(budget)
    try:
        return await _receive(request, service, ingest, reply_type, tenant, limit, held, signal)
    except BodiesInFlight:
        service.metrics.inc("factledger_requests_refused_total", reason="bodies_in_flight")
        response = _error(
            reply_type, 503, "too many request bytes in flight, retry later", retry=True
        )
        response.headers["Connection"] = "close"  # its body may not have been read
        return response
    except BodyTimeout as exc:
        service.metrics.inc("factledger_requests_refused_total", reason="body_timeout")
        response = _error(reply_type, 408, str(exc))
        response.headers["Connection"] = "close"
        return response
    finally:
        held.release()


async def _receive(
    request: Request,
    service: Service,
    ingest: Ingest,
    reply_type: str,
    tenant: str,
    limit: int,
    held: _Held,
    signal: _Signal,
) -> Response:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) <= limit:
        held.take(int(declared))  # refuse before reading a byte of the body
    try:
        raw = await _read_limited(request, limit, service.settings.body_timeout_seconds, held)
        body = otlp.decompress(raw, request.headers.get("content-encoding"), limit=limit)
        if body is not raw:
            held.take(len(body))
        del raw  # a compressed body is not needed once inflated
        result = await run_in_threadpool(
            otlp.decode_request, body, reply_type, tenant=tenant, signal=signal.name
        )
    except (BodiesInFlight, BodyTimeout):
        raise
    except Exception as exc:
        status = otlp.http_status_for(exc)
        if status is None:
            raise
        service.metrics.inc("factledger_requests_refused_total", reason=str(status))
        return _error(reply_type, status, str(exc) or type(exc).__name__)
    for reason, count in result.reasons.items():
        service.metrics.inc(signal.dropped_metric, count, reason=reason)
    spans, rejected, message = _within_retention(
        result, service.settings.retention_days, service.metrics, signal
    )
    try:
        if spans:
            await run_in_threadpool(_submit, ingest, signal, reply_type, tenant, body, spans)
    except RequestTooLarge as exc:  # no retry could pass: refused for good
        service.metrics.inc("factledger_requests_refused_total", reason="too_many_spans")
        return _error(reply_type, 413, str(exc))
    except PipelineFull:
        service.metrics.inc("factledger_requests_refused_total", reason="queue_full")
        return _error(reply_type, 503, "pipeline is full, retry later", retry=True)
    except PipelineClosed:
        service.metrics.inc("factledger_requests_refused_total", reason="shutting_down")
        return _error(reply_type, 503, "the service is shutting down, retry later", retry=True)
    except WalUnavailable as exc:
        log.error("refusing a request: %s", exc)
        service.metrics.inc("factledger_requests_refused_total", reason="wal_unavailable")
        return _error(reply_type, 503, _WAL_UNAVAILABLE, retry=True)
    except StoreUnavailable:
        service.metrics.inc("factledger_requests_refused_total", reason="store_unavailable")
        return _error(reply_type, 503, _STORE_UNAVAILABLE, retry=True)
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


class BodiesInFlight(Exception):
    """Taking this request's body would pass `max_bodies_in_flight_bytes` (503)."""


class BodyTimeout(Exception):
    """The client did not send its body within `body_timeout_seconds` (408)."""


class InFlightBytes:
    """The bytes of request bodies held by the receiver right now, against a bound.

    `take(n)` counts `n` more bytes or raises BodiesInFlight when that would pass the
    bound, unless nothing else is held (one body alone always passes, or a body larger
    than the bound could never be taken). Thread-safe."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._held = 0
        self._lock = threading.Lock()

    @property
    def held(self) -> int:
        return self._held

    def take(self, amount: int, already: int) -> None:
        with self._lock:
            others = self._held - already
            if others > 0 and self._held + amount > self.limit:
                raise BodiesInFlight(f"{self._held} bytes in flight, bound {self.limit}")
            self._held += amount

    def give_back(self, amount: int) -> None:
        with self._lock:
            self._held -= amount


class _Held:
    """One request's share of an `InFlightBytes`, given back all at once."""

    def __init__(self, budget: InFlightBytes) -> None:
        self._budget = budget
        self.amount = 0

    def take(self, amount: int) -> None:
        self._budget.take(amount, self.amount)
        self.amount += amount

    def release(self) -> None:
        self._budget.give_back(self.amount)
        self.amount = 0


def _budget(request: Request, limit: int, metrics: Metrics) -> InFlightBytes:
    """The app's one `InFlightBytes`, made on first use."""
    state = request.app.state
    budget: InFlightBytes | None = getattr(state, "bodies_in_flight", None)
    if budget is None or budget.limit != limit:
        budget = state.bodies_in_flight = InFlightBytes(limit)
        metrics.gauge(
            "factledger_bodies_in_flight_bytes",
            "Bytes of request bodies being read or decoded now.",
            lambda: budget.held,
        )
    return budget


async def _read_limited(request: Request, limit: int, timeout: float, held: _Held) -> bytes:
    """The raw body, refusing more than `limit` bytes even before decompression, and a
    body that takes longer than `timeout` seconds to arrive. Bytes past what `held`
    already counts (a body without a Content-Length, or one longer than it said) are
    counted as they arrive."""
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
                if size > held.amount:
                    held.take(size - held.amount)
                chunks.append(chunk)
    except TimeoutError:
        raise BodyTimeout(f"the body did not arrive within {timeout:g} seconds") from None
    body = b"".join(chunks)
    chunks.clear()
    return body


def _error(media: str, status: int, message: str, *, retry: bool = False) -> Response:
    headers = {"Retry-After": str(RETRY_AFTER_SECONDS)} if retry else {}
    if status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    return Response(
        otlp.encode_status(media, _RPC_CODE.get(status, 2), message),
        status_code=status,
        media_type=media,
        headers=headers,
    )


def _declared_bytes(request: Request) -> int:
    """The body's size as its Content-Length declares it (0 when it does not): a lower
    bound of what it holds once inflated."""
    declared = request.headers.get("content-length", "")
    return int(declared) if declared.isdigit() else 0
