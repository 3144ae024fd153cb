"""The OTLP/HTTP edge as pure functions: bodies in, `SpanRecord`s and response bodies out.

The receiver route calls, in order: `decompress`, `decode_request`, `encode_response`
(or, on a refusal, `encode_status` through `collector.ingest.refusal_http`). Nothing here does
I/O or knows about FastAPI, so every OTLP rule is tested by calling a function with bytes.

Errors, defined with every other refusal in `collector.refusals` (where each declares its
outcome: HTTP status, gRPC status, retryable, metric reason):

Refusal
 └── OtlpError
      ├── OtlpDecodeError       400  the body is not an ExportTraceServiceRequest
      │                              (or, on /v1/logs, an ExportLogsServiceRequest)
      ├── PayloadTooLarge       413  the body, or what it inflates to, exceeds the limit
      ├── UnsupportedMediaType  415  Content-Type is neither protobuf nor JSON
      └── UnsupportedEncoding   415  Content-Encoding is neither identity nor gzip

A bad span is not an error: it is dropped, counted by reason in `DecodeResult`, and
reported to the sender as OTLP partial success (200). Drop reasons: invalid_trace_id,
invalid_span_id, invalid_parent_span_id, missing_name, too_many_spans; from JSON also
invalid_kind, invalid_time, invalid_status, invalid_attributes, invalid_event,
invalid_resource, invalid_scope, malformed_span.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

# googleapis-common-protos ships .pyi files but no py.typed marker.
from google.rpc.status_pb2 import Status  # type: ignore[import-untyped]
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceResponse,
)

from factledger.collector.otlp_json import decode_json
from factledger.collector.otlp_logs import decode_logs_json, decode_logs_protobuf
from factledger.collector.otlp_proto import decode_protobuf
from factledger.collector.refusals import OtlpDecodeError as OtlpDecodeError
from factledger.collector.refusals import OtlpError as OtlpError
from factledger.collector.refusals import PayloadTooLarge as PayloadTooLarge
from factledger.collector.refusals import UnsupportedEncoding as UnsupportedEncoding
from factledger.collector.refusals import UnsupportedMediaType as UnsupportedMediaType
from factledger.processors.spans import SpanRecord

PROTOBUF = "application/x-protobuf"
JSON = "application/json"

MAX_SPANS_PER_REQUEST = 100_000
"""Spans one request may carry; the rest are rejected as "too_many_spans"."""

_GZIP_CHUNK = 1 << 20
"""Bytes inflated per step, so a gzip bomb is stopped within one chunk of the limit."""


@dataclass(frozen=True)
class DecodeResult:
    """The spans of one request that can be used, and an account of the ones that cannot.

    `rejected` is the sum of `reasons`; `error_message` summarises them for the sender's
    partial_success ("" when nothing was rejected).
    """

    spans: tuple[SpanRecord, ...]
    rejected: int = 0
    reasons: Mapping[str, int] = field(default_factory=dict)
    error_message: str = ""


Media = Literal["protobuf", "json"]
Signal = Literal["traces", "logs"]
"""What a request exports: spans (`/v1/traces`) or log records (`/v1/logs`, read as log
spans: `collector.otlp_logs`)."""

ITEMS: Mapping[Signal, str] = {"traces": "spans", "logs": "log records"}
"""What one item of each signal is called in messages to the sender."""


def media_of(content_type: str) -> Media:
    """The media a Content-Type names ("protobuf" or "json"), ignoring case and parameters.

    Raises UnsupportedMediaType for anything else. "application/protobuf" is taken as
    protobuf too: some senders use it, and it cannot mean anything else.
    """
    essence = content_type.split(";", 1)[0].strip().lower()
    if essence in (PROTOBUF, "application/protobuf"):
        return "protobuf"
    if essence == JSON:
        return "json"
    raise UnsupportedMediaType(f"unsupported Content-Type {content_type[:100]!r}")


def response_content_type(content_type: str) -> str:
    """The Content-Type to answer a request with: its own media type, JSON if unsupported."""
    try:
        return PROTOBUF if media_of(content_type) == "protobuf" else JSON
    except UnsupportedMediaType:
        return JSON


def decode_request(
    body: bytes,
    content_type: str,
    *,
    tenant: str = "default",
    max_spans: int = MAX_SPANS_PER_REQUEST,
    signal: Signal = "traces",
) -> DecodeResult:
    """Decode an (already decompressed) OTLP/HTTP trace export body, or for `signal`
    "logs" a logs export body into log spans (`collector.otlp_logs`).

    Never lets one span's fault reach another span: a span that cannot be keyed or read
    is dropped and counted in the result. Raises UnsupportedMediaType for a Content-Type
    other than protobuf or JSON, OtlpDecodeError when the body as a whole is unreadable,
    and nothing else.
    """
    protobuf = media_of(content_type) == "protobuf"
    if signal == "logs":
        decode = decode_logs_protobuf if protobuf else decode_logs_json
    else:
        decode = decode_protobuf if protobuf else decode_json
    try:
        spans, reasons = decode(body, tenant=tenant, max_spans=max_spans)
    except ValueError as exc:
        raise OtlpDecodeError(str(exc)) from exc
    rejected = sum(reasons.values())
    return DecodeResult(
        spans=tuple(spans),
        rejected=rejected,
        reasons=dict(sorted(reasons.items())),
        error_message=_summary(reasons, len(spans), max_spans, signal) if rejected else "",
    )


def _summary(reasons: Mapping[str, int], kept: int, max_spans: int, signal: Signal) -> str:
    rejected = sum(reasons.values())
    counts = ", ".join(f"{reason} {count}" for reason, count in sorted(reasons.items()))
    items = ITEMS[signal]
    text = f"rejected {rejected} of {kept + rejected} {items} ({counts})"
    if reasons.keys() & {"too_many_spans", "too_many_log_records"}:
        text += f"; at most {max_spans} {items} are read per request"
    if "no_span" in reasons:
        text += "; a log record is kept only when it names its span (trace id and span id)"
    if reasons.keys() & {"invalid_trace_id", "invalid_span_id", "invalid_parent_span_id"}:
        text += "; ids must be 16/8 bytes, in OTLP/JSON as 32/16 hex characters"
    return text


def encode_response(
    content_type: str, rejected: int = 0, error_message: str = "", signal: Signal = "traces"
) -> bytes:
    """An ExportTraceServiceResponse (for `signal` "logs" an ExportLogsServiceResponse)
    body in the request's media type (see `response_content_type`). `partial_success` is
    present only when something was rejected or there is a message, so a clean export
    answers an empty message (`{}`)."""
    if response_content_type(content_type) == PROTOBUF:
        if signal == "logs":
            logs = ExportLogsServiceResponse()
            if rejected or error_message:
                logs.partial_success.rejected_log_records = rejected
                logs.partial_success.error_message = error_message
            return bytes(logs.SerializeToString())
        response = ExportTraceServiceResponse()
        if rejected or error_message:
            response.partial_success.rejected_spans = rejected
            response.partial_success.error_message = error_message
        return response.SerializeToString()
    partial: dict[str, str] = {}
    if rejected:
        # int64: a decimal string in OTLP/JSON
        partial["rejectedLogRecords" if signal == "logs" else "rejectedSpans"] = str(rejected)
    if error_message:
        partial["errorMessage"] = error_message
    return _json({"partialSuccess": partial} if partial else {})


def encode_status(content_type: str, code: int, message: str) -> bytes:
    """A google.rpc.Status error body in the request's media type (see
    `response_content_type`). `code` is a google.rpc.Code (3 INVALID_ARGUMENT, 8
    RESOURCE_EXHAUSTED, 14 UNAVAILABLE, ...), not the HTTP status."""
    if response_content_type(content_type) == PROTOBUF:
        return bytes(Status(code=code, message=message).SerializeToString())
    return _json({"code": code, "message": message})


def _json(document: object) -> bytes:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()


def decompress(body: bytes, content_encoding: str | None, *, limit: int) -> bytes:
    """The body with its Content-Encoding (none, identity, gzip or x-gzip) undone.

    Inflates in steps and raises PayloadTooLarge as soon as the output passes `limit`
    bytes, so a gzip bomb costs at most `limit` plus one step of memory. Also raises
    PayloadTooLarge for an unencoded body over `limit`, OtlpDecodeError for a corrupt or
    truncated gzip stream, UnsupportedEncoding for any other encoding.
    """
    encoding = (content_encoding or "").strip().lower()
    if encoding in ("", "identity"):
        if len(body) > limit:
            raise PayloadTooLarge(f"body of {len(body)} bytes exceeds the {limit}-byte limit")
        return body
    if encoding not in ("gzip", "x-gzip"):
        raise UnsupportedEncoding(f"unsupported Content-Encoding {encoding[:100]!r}")
    try:
        return _gunzip(body, limit)
    except zlib.error as exc:
        raise OtlpDecodeError(f"corrupt gzip body: {exc}") from exc


def _gunzip(body: bytes, limit: int) -> bytes:
    out = bytearray()
    pending = body
    # A gzip file may hold several members back to back (RFC 1952 §2.2); inflate each.
    while pending:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        while not inflater.eof:
            chunk = inflater.decompress(pending, min(_GZIP_CHUNK, limit + 1 - len(out)))
            pending = inflater.unconsumed_tail
            out += chunk
            if len(out) > limit:
                raise PayloadTooLarge(f"gzip body inflates past the {limit}-byte limit")
            if not chunk and not pending:
                raise OtlpDecodeError("gzip body is truncated")
        pending = inflater.unused_data
    return bytes(out)
