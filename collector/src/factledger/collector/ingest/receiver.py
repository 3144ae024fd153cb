"""POST /v1/traces and POST /v1/logs: the OTLP/HTTP receiver.

Both routes are one implementation (`_export`), parametrized by the signal. What becomes
of a request (its token and tenant, the pipeline's room, decoding, the write-ahead log,
partial success) is decided in `collector.ingest.intake`, which the OTLP/gRPC receiver
calls too; this module keeps what is HTTP's own: reading the body within its limits and
time, its media type and content encoding, the status codes and headers. A log record is
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
| OTLP/HTTP switched off (`FACTLEDGER_OTLP_HTTP_ENABLED=false`: the routes are not there) | 404 |

A write-ahead log that cannot take the request (a full disk, an I/O error) is a 503 as
well: nothing of the request was kept, so nothing was acknowledged. A request refused
whole (a 503 the client will send again, or a 413) is counted in
`factledger_requests_refused_total{transport="http"}` and `factledger_spans_refused_total`,
never as dropped spans.

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

from fastapi import APIRouter, Request, Response

from factledger.collector import otlp
from factledger.collector.api.models import LOGS_RESPONSES
from factledger.collector.ingest.base import Ingest
from factledger.collector.ingest.in_flight import EVICTED, Share
from factledger.collector.ingest.intake import LOGS, TRACES, Intake, Signal
from factledger.collector.ingest.refusal_http import refused
from factledger.collector.refusals import BodiesInFlight, BodyTimeout, Refusal
from factledger.collector.service import CurrentIngest, CurrentService, Service

router = APIRouter(tags=["ingest"])


@router.post("/v1/traces")
async def export_traces(
    request: Request, service: CurrentService, ingest: CurrentIngest
) -> Response:
    """Receive an OTLP `ExportTraceServiceRequest` (protobuf or JSON, optionally gzip)."""
    return await _export(request, service, ingest, TRACES)


@router.post("/v1/logs", responses=LOGS_RESPONSES)
async def export_logs(request: Request, service: CurrentService, ingest: CurrentIngest) -> Response:
    """Receive an OTLP `ExportLogsServiceRequest` (protobuf or JSON, optionally gzip).

    Each log record that names its span becomes a log span (`collector.otlp_logs`); the
    log spans are written ahead as one protobuf `ExportTraceServiceRequest`, so they are
    replayed, stored and recovered as trace spans are."""
    return await _export(request, service, ingest, LOGS)


async def _export(request: Request, service: Service, ingest: Ingest, signal: Signal) -> Response:
    content_type = request.headers.get("content-type", "")
    reply_type = otlp.response_content_type(content_type)
    intake = Intake(service.settings, ingest, service.metrics)
    held: Share | None = None
    try:
        tenant = intake.admit(
            request.headers.get("authorization", ""), content_type, _declared_bytes(request)
        )
        held = service.bodies.share(tenant)
        body = await _read_body(request, service, held)
        accepted = await intake.receive(body, reply_type, tenant, signal, "http")
        payload = otlp.encode_response(
            reply_type, accepted.rejected, accepted.error_message, signal.name
        )
        return Response(payload, status_code=200, media_type=reply_type)
    except Refusal as refusal:
        return refused(refusal, reply_type, service.metrics)
    finally:
        if held is not None:
            held.release()


async def _read_body(request: Request, service: Service, held: Share) -> bytes:
    """The body, read within the limits and inflated; its bytes are counted in `held`."""
    limit = service.settings.max_body_bytes
    raw = await _read_limited(request, limit, service.settings.body_timeout_seconds, held)
    held.reading = False
    body = otlp.decompress(raw, request.headers.get("content-encoding"), limit=limit)
    if body is not raw:
        held.take(len(body))
    return body


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
