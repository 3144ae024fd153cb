"""A raw OTLP/gRPC client for the tests: serialized requests in, every part of the
answer out (status, details, trailers, the serialized response), over grpcio's own
channel, as an exporter sends them."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import cast

import grpc
from google.protobuf import json_format
from google.rpc.error_details_pb2 import RetryInfo  # type: ignore[import-untyped]
from google.rpc.status_pb2 import Status  # type: ignore[import-untyped]
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

TRACES = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
LOGS = "/opentelemetry.proto.collector.logs.v1.LogsService/Export"
METRICS = "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export"
"""The methods as the OTLP specification names them (not read from the server's code)."""

Metadata = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Answer:
    """What one Export call ended with."""

    code: grpc.StatusCode
    details: str = ""
    trailers: dict[str, str | bytes] = field(default_factory=dict)
    response: bytes = b""

    @property
    def status(self) -> Status | None:
        """The `google.rpc.Status` of the rich-error trailer, if sent."""
        raw = self.trailers.get("grpc-status-details-bin")
        return Status.FromString(raw) if isinstance(raw, bytes) else None

    @property
    def retry_delay(self) -> float | None:
        """Seconds the RetryInfo in the status asks the sender to wait; None without."""
        status = self.status
        for detail in status.details if status is not None else ():
            info = RetryInfo()
            if detail.Unpack(info):
                return float(info.retry_delay.ToTimedelta().total_seconds())
        return None


def export(
    target: str,
    request: bytes,
    *,
    method: str = TRACES,
    metadata: Metadata = (),
    compression: grpc.Compression | None = None,
    timeout: float = 30,
) -> Answer:
    """Send one serialized export request to `target` (`host:port`) and wait for it."""
    # The client's own limit would stop an oversized message before the server saw it.
    options = [("grpc.max_send_message_length", -1)]
    with grpc.insecure_channel(target, options=options) as channel:
        call: grpc.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(method)
        try:
            response, done = call.with_call(
                request, metadata=metadata, compression=compression, timeout=timeout
            )
        except grpc.RpcError as error:
            failed = cast(grpc.Call, error)
            trailers = dict(failed.trailing_metadata() or ())
            return Answer(failed.code(), failed.details() or "", trailers)
        return Answer(grpc.StatusCode.OK, "", dict(done.trailing_metadata() or ()), response)


def protobuf_request(body: bytes) -> bytes:
    """An OTLP/JSON trace request as OTLP/protobuf, what a gRPC exporter sends: its hex
    ids turned into the base64 that protobuf's JSON mapping reads for bytes."""
    document = json.loads(body)
    for resource in document.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if span.get(key):
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    request = json_format.Parse(json.dumps(document), ExportTraceServiceRequest())
    return bytes(request.SerializeToString())
