"""The OTLP/gRPC answer to a refused request, read off the refusal's declared `Outcome`.

A pure mapping (no server, no I/O): the gRPC receiver counts the refusal
(`collector.ingest.intake.record_refusal`) and aborts the call with what `answer` gives.

- The status code is the outcome's `grpc_status`, its details the refusal's client
  message (the same text an HTTP error body carries).
- A retryable refusal carries `google.rpc.RetryInfo` asking for `RETRY_DELAY_SECONDS`
  (OTLP/gRPC "Throttling"), twice, since clients read it from two places: inside the
  `google.rpc.Status` of the `grpc-status-details-bin` trailer, as gRPC's rich error
  model puts it (the Collector, Go and Java exporters), and on its own under
  `google.rpc.retryinfo-bin`, where the OpenTelemetry Python exporter looks.
- A permanent refusal carries the `google.rpc.Status` without RetryInfo. That matters for
  RESOURCE_EXHAUSTED (a message above the limit, more spans than the backlog may ever
  hold): OTLP clients retry it only when RetryInfo says the server can recover.
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc

# googleapis-common-protos ships .pyi files but no py.typed marker.
from google.protobuf.duration_pb2 import Duration
from google.rpc.error_details_pb2 import RetryInfo  # type: ignore[import-untyped]
from google.rpc.status_pb2 import Status  # type: ignore[import-untyped]

from factledger.collector.refusals import RETRY_DELAY_SECONDS, GrpcStatus, Refusal

STATUS_DETAILS_KEY = "grpc-status-details-bin"
"""The trailer gRPC's rich error model carries a serialized `google.rpc.Status` in."""
RETRY_INFO_KEY = "google.rpc.retryinfo-bin"
"""The trailer the OpenTelemetry Python exporter reads a serialized `RetryInfo` from."""

Trailers = tuple[tuple[str, bytes], ...]


@dataclass(frozen=True)
class GrpcAnswer:
    """What a refused call ends with: `context.abort(code, details, trailing_metadata)`."""

    code: grpc.StatusCode
    details: str
    trailing_metadata: Trailers


INTERNAL = GrpcAnswer(grpc.StatusCode.INTERNAL, "internal error; the service log has the cause", ())
"""Anything unforeseen: a fixed text, as the HTTP app's 500 (the log has the traceback)."""


def status_code(status: GrpcStatus) -> grpc.StatusCode:
    """grpc's own enum member for one of `collector.refusals`' codes (same names)."""
    return grpc.StatusCode[status.name]


def answer(refusal: Refusal) -> GrpcAnswer:
    """How the gRPC receiver answers `refusal` (module docstring)."""
    outcome = refusal.outcome
    message = refusal.client_message
    status = Status(code=outcome.grpc_status.value, message=message)
    retry_info: Trailers = ()
    if outcome.retryable:
        retry = RetryInfo(retry_delay=Duration(seconds=RETRY_DELAY_SECONDS))
        status.details.add().Pack(retry)
        retry_info = ((RETRY_INFO_KEY, bytes(retry.SerializeToString())),)
    details = (STATUS_DETAILS_KEY, bytes(status.SerializeToString()))
    return GrpcAnswer(status_code(outcome.grpc_status), message, (details, *retry_info))
