"""Every way an export request is refused whole, each class declaring its outcome once.

A `Refusal` is raised where the refusal is decided (the receivers' checks in
`collector.ingest.intake`, the OTLP edge, the pipeline, the write-ahead log) and answered
in one place per transport (`collector.ingest.refusal_http`,
`collector.ingest.refusal_grpc`), both reading the same `Outcome`. It says whether the
sender should send the request again, the HTTP status, the gRPC status (also the
`google.rpc.Status` code of the HTTP error body), and the `reason` label of
`factledger_requests_refused_total`:

| class | retryable | HTTP | gRPC | reason |
|---|---|---|---|---|
| Unauthenticated | no | 401 | UNAUTHENTICATED | 401 |
| OtlpDecodeError | no | 400 | INVALID_ARGUMENT | 400 |
| UnsupportedMediaType | no | 415 | INVALID_ARGUMENT | 415 |
| UnsupportedEncoding | no | 415 | INVALID_ARGUMENT | 415 |
| PayloadTooLarge | no | 413 | RESOURCE_EXHAUSTED | 413 |
| RequestTooLarge | no | 413 | RESOURCE_EXHAUSTED | too_many_spans |
| BodyTimeout | yes | 408 | DEADLINE_EXCEEDED | body_timeout |
| BodiesInFlight | yes | 503 | UNAVAILABLE | bodies_in_flight |
| PipelineFull | yes | 503 | UNAVAILABLE | queue_full |
| PipelineClosed | yes | 503 | UNAVAILABLE | shutting_down |
| StoreUnavailable | yes | 503 | UNAVAILABLE | store_unavailable |
| WalUnavailable | yes | 503 | UNAVAILABLE | wal_unavailable |

RESOURCE_EXHAUSTED is permanent here: OTLP clients retry it only when the status carries
`RetryInfo`, which is sent with retryable refusals alone (asking for
`RETRY_DELAY_SECONDS`, as HTTP's `Retry-After` does). Nothing in this module does I/O
or imports the rest of the collector, so the OTLP edge, the write-ahead log and the
metric catalogue can all import it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import IntEnum
from typing import ClassVar

from factledger.processors.errors import FactLedgerError


class GrpcStatus(IntEnum):
    """gRPC status codes, named as `grpc.StatusCode` names them; the value is the
    `google.rpc.Code` number written into error bodies."""

    OK = 0
    CANCELLED = 1
    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    DEADLINE_EXCEEDED = 4
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    PERMISSION_DENIED = 7
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    ABORTED = 10
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13
    UNAVAILABLE = 14
    DATA_LOSS = 15
    UNAUTHENTICATED = 16


RETRYABLE_GRPC = frozenset(
    {
        GrpcStatus.CANCELLED,
        GrpcStatus.DEADLINE_EXCEEDED,
        GrpcStatus.ABORTED,
        GrpcStatus.OUT_OF_RANGE,
        GrpcStatus.UNAVAILABLE,
        GrpcStatus.DATA_LOSS,
    }
)
"""The codes an OTLP/gRPC client retries (OTLP specification, "Failures"); it retries
RESOURCE_EXHAUSTED as well when the status carries RetryInfo."""

RETRY_DELAY_SECONDS = 2
"""How long a retryable refusal asks the sender to wait: HTTP's `Retry-After`, gRPC's
`RetryInfo.retry_delay`."""

RETRYABLE_HTTP = frozenset({429, 502, 503, 504})
"""The statuses an OTLP/HTTP client retries; every other 4xx and 5xx is permanent."""


@dataclass(frozen=True)
class Outcome:
    """How a refusal is answered, whatever the transport."""

    retryable: bool
    """The same request sent again later may be taken."""
    http_status: int
    grpc_status: GrpcStatus
    reason: str
    """The `reason` label of `factledger_requests_refused_total`."""
    message: str | None = None
    """The text sent to the client; None sends the exception's own message. A fixed text
    keeps details meant for the log (paths, byte counts) out of the reply."""
    closes_connection: bool = False
    """The request's body may not have been read, so the connection cannot be reused."""
    logged: bool = False
    """The operator has to act (a disk): the refusal is logged as an error."""


class Refusal(FactLedgerError):
    """Base of the errors that refuse a whole export request; nothing of it is
    acknowledged. A concrete class declares its `outcome`."""

    outcome: ClassVar[Outcome]

    @property
    def client_message(self) -> str:
        """What the reply says: the outcome's fixed text, or this error's message."""
        return self.outcome.message or str(self) or type(self).__name__


def declared_outcome(cls: type[Refusal]) -> Outcome | None:
    """The outcome `cls` declares in its own body; None when it only inherits one (a
    base such as OtlpError declares none)."""
    outcome = vars(cls).get("outcome")
    return outcome if isinstance(outcome, Outcome) else None


def refusal_classes() -> Iterator[type[Refusal]]:
    """Every subclass of `Refusal` defined so far, depth first."""
    pending = list(Refusal.__subclasses__())
    while pending:
        cls = pending.pop(0)
        yield cls
        pending[:0] = cls.__subclasses__()


# --- the request -----------------------------------------------------------------------


class Unauthenticated(Refusal):
    """Ingest tokens are configured and the bearer token is missing or unknown."""

    outcome = Outcome(
        retryable=False,
        http_status=401,
        grpc_status=GrpcStatus.UNAUTHENTICATED,
        reason="401",
        message="missing or invalid bearer token",
    )


class BodyTimeout(Refusal):
    """The client did not send its body within `body_timeout_seconds`."""

    outcome = Outcome(
        retryable=True,
        http_status=408,
        grpc_status=GrpcStatus.DEADLINE_EXCEEDED,
        reason="body_timeout",
        closes_connection=True,
    )


class BodiesInFlight(Refusal):
    """Taking this request's body would pass `max_bodies_in_flight_bytes`."""

    outcome = Outcome(
        retryable=True,
        http_status=503,
        grpc_status=GrpcStatus.UNAVAILABLE,
        reason="bodies_in_flight",
        message="too many request bytes in flight, retry later",
        closes_connection=True,
    )


# --- the OTLP edge ---------------------------------------------------------------------


class OtlpError(Refusal):
    """Base of the errors the OTLP edge (`collector.otlp`) raises."""


class OtlpDecodeError(OtlpError, ValueError):
    """The body (or its gzip stream) cannot be read as an ExportTraceServiceRequest."""

    outcome = Outcome(
        retryable=False,
        http_status=400,
        grpc_status=GrpcStatus.INVALID_ARGUMENT,
        reason="400",
    )


class PayloadTooLarge(OtlpError):
    """The body, before or after decompression, exceeds the configured limit."""

    outcome = Outcome(
        retryable=False,
        http_status=413,
        grpc_status=GrpcStatus.RESOURCE_EXHAUSTED,
        reason="413",
    )


class UnsupportedMediaType(OtlpError):
    """The Content-Type is neither application/x-protobuf nor application/json."""

    outcome = Outcome(
        retryable=False,
        http_status=415,
        grpc_status=GrpcStatus.INVALID_ARGUMENT,
        reason="415",
    )


class UnsupportedEncoding(OtlpError):
    """The Content-Encoding is neither identity nor gzip."""

    outcome = Outcome(
        retryable=False,
        http_status=415,
        grpc_status=GrpcStatus.INVALID_ARGUMENT,
        reason="415",
    )


# --- the pipeline ----------------------------------------------------------------------


class PipelineFull(Refusal):
    """The pipeline holds as many unstored spans as it may; retry later."""

    outcome = Outcome(
        retryable=True,
        http_status=503,
        grpc_status=GrpcStatus.UNAVAILABLE,
        reason="queue_full",
        message="pipeline is full, retry later",
    )


class RequestTooLarge(Refusal):
    """One request holds more spans than the backlog may ever hold: no retry can succeed,
    so it is refused for good rather than answered 503 again and again."""

    outcome = Outcome(
        retryable=False,
        http_status=413,
        grpc_status=GrpcStatus.RESOURCE_EXHAUSTED,
        reason="too_many_spans",
    )

    def __init__(self, spans: int, bound: int) -> None:
        super().__init__(
            f"the request holds {spans} spans, more than the backlog bound of {bound}"
            " (FACTLEDGER_QUEUE_SPANS); split it into smaller requests or raise the bound"
        )
        self.spans = spans
        self.bound = bound


class PipelineClosed(Refusal):
    """The pipeline is shutting down and takes no more requests."""

    outcome = Outcome(
        retryable=True,
        http_status=503,
        grpc_status=GrpcStatus.UNAVAILABLE,
        reason="shutting_down",
        message="the service is shutting down, retry later",
    )


class StoreUnavailable(Refusal):
    """The store cannot write now (a full disk, no memory, unreachable): what was accepted
    is held until it can, and new requests are refused meanwhile; retry later."""

    outcome = Outcome(
        retryable=True,
        http_status=503,
        grpc_status=GrpcStatus.UNAVAILABLE,
        reason="store_unavailable",
        message="the store cannot write now (full disk or out of resources), retry later",
    )


class WalUnavailable(Refusal, OSError):
    """An append could not be made durable (e.g. ENOSPC, EIO); nothing of it is kept and
    the caller must not acknowledge it. Retryable: space may come back."""

    outcome = Outcome(
        retryable=True,
        http_status=503,
        grpc_status=GrpcStatus.UNAVAILABLE,
        reason="wal_unavailable",
        message="the write-ahead log cannot be written (disk full or failing), retry later",
        logged=True,
    )
