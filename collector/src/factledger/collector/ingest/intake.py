"""One OTLP export request taken in, whatever the transport: admit, decode, write ahead,
queue, answer with partial success.

Both receivers call this: the OTLP/HTTP routes (`collector.ingest.receiver`) once they
have read and inflated a body, the OTLP/gRPC service (`collector.ingest.grpc_receiver`)
with the message gRPC received. A transport keeps only its own concerns (reading a body,
media types and content encodings, the reply's framing, its status codes); everything
that decides what becomes of a request is here, once:

1. `admit`, before the body is read: the bearer token picks the tenant
   (`collector.access`), the media type is one OTLP defines, the pipeline is not closing,
   the store writes and the backlog has room.
2. `receive`, with the whole (inflated) body: decode it in a worker thread (a bad span
   is dropped and counted, not an error), refuse the spans the store would expire at once
   or cannot place in time, write the request ahead and queue its spans (in a worker
   thread: the write-ahead log syncs the disk), and return what the reply's partial
   success says. The request is durable before `receive` returns, so a transport answers
   only after it: acknowledged is never lost.

Every refusal on the way is a `collector.refusals.Refusal`, raised where it is decided;
a transport catches it, counts it with `record_refusal` and answers it by the outcome its
class declares (`collector.ingest.refusal_http`, `collector.ingest.refusal_grpc`).

Runs on the event loop; `receive` hands the CPU-bound and blocking parts to anyio's
worker threads (the limiter the HTTP routes share), so neither transport blocks the loop.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from anyio import to_thread

from factledger.collector import otlp, otlp_logs
from factledger.collector.ingest.base import Ingest
from factledger.collector.metric_catalogue import Transport
from factledger.collector.metrics import Metrics
from factledger.collector.refusals import (
    PipelineClosed,
    PipelineFull,
    Refusal,
    StoreUnavailable,
    Unauthenticated,
)
from factledger.collector.settings import ServiceSettings
from factledger.processors.spans import SpanRecord

log = logging.getLogger("factledger.receiver")

REQUESTS_REFUSED = "factledger_requests_refused_total"
SPANS_RECEIVED = "factledger_spans_received_total"

_DAY_NS = 86_400 * 1_000_000_000


@dataclass(frozen=True)
class Signal:
    """What one OTLP export service receives; traces and logs differ in nothing else."""

    name: otlp.Signal
    dropped_metric: str
    """The counter of items dropped, by reason."""
    items: str


TRACES = Signal("traces", "factledger_spans_dropped_total", "spans")
LOGS = Signal("logs", "factledger_log_records_dropped_total", "log records")


@dataclass(frozen=True)
class Accepted:
    """A request taken: what its reply's `partial_success` says (nothing when 0 and "")."""

    rejected: int = 0
    error_message: str = ""


@dataclass(frozen=True)
class Intake:
    """What taking a request needs of the service: its tokens, limits, pipeline, metrics."""

    settings: ServiceSettings
    ingest: Ingest
    metrics: Metrics

    def admit(self, authorization: str, content_type: str, declared_bytes: int) -> str:
        """The request's tenant, once the checks made before its body is read have passed
        (token, media type, a pipeline that is open, a store that writes, room in the
        backlog for `declared_bytes`, 0 when unknown); else a Refusal."""
        tenant = self.settings.access.ingest_tenant(authorization)
        if tenant is None:
            raise Unauthenticated
        otlp.media_of(content_type)
        if self.ingest.closed:
            raise PipelineClosed
        if not self.ingest.store_writable:
            raise StoreUnavailable
        if not self.ingest.has_capacity(declared_bytes):
            raise PipelineFull
        return tenant

    async def receive(
        self, body: bytes, content_type: str, tenant: str, signal: Signal, transport: Transport
    ) -> Accepted:
        """Decode `body` (decompressed; `content_type` is `otlp.PROTOBUF` or `otlp.JSON`),
        write it ahead and queue its spans; what the reply's partial success says. Raises
        a Refusal having kept nothing of the request."""
        result = await to_thread.run_sync(
            lambda: otlp.decode_request(body, content_type, tenant=tenant, signal=signal.name)
        )
        for reason, count in result.reasons.items():
            self.metrics.inc(signal.dropped_metric, count, reason=reason)
        spans, rejected, message = within_retention(
            result, self.settings.retention_days, self.metrics, signal
        )
        if spans:
            await to_thread.run_sync(self._submit, signal, content_type, tenant, body, spans)
            self.metrics.inc(SPANS_RECEIVED, len(spans), transport=transport)
        return Accepted(rejected, message)

    def _submit(
        self, signal: Signal, content_type: str, tenant: str, body: bytes, spans: list[SpanRecord]
    ) -> None:
        """Write the request ahead and queue its spans. A logs request is written as the
        trace request its log spans make: the write-ahead log replays trace requests."""
        if signal.name == "logs":
            self.ingest.submit(otlp.PROTOBUF, tenant, otlp_logs.encode_trace_request(spans), spans)
        else:
            self.ingest.submit(content_type, tenant, body, spans)


def record_refusal(refusal: Refusal, metrics: Metrics, transport: Transport) -> None:
    """Count `refusal` in `factledger_requests_refused_total` by its reason and the
    transport, and log it when the operator has to act."""
    outcome = refusal.outcome
    if outcome.logged:
        log.error("refusing a request: %s", refusal)
    metrics.inc(REQUESTS_REFUSED, reason=outcome.reason, transport=transport)


def within_retention(
    result: otlp.DecodeResult, retention_days: int, metrics: Metrics, signal: Signal = TRACES
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
