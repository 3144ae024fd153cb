"""OTLP/protobuf `ExportTraceServiceRequest` bodies → `SpanRecord`s.

Only `collector.otlp` calls this; protobuf types never leave the module. upb parses the
whole body eagerly (and refuses values nested deeper than 100 levels), so once parsing
succeeds the only per-span faults left are the ones OTLP leaves to the receiver: ids of
the wrong length, an all-zero id, an empty name.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from factledger.collector.shared_texts import MIN_CHARS, shared_name, shared_text
from factledger.processors.spans import AttributeValue, SpanEvent, SpanRecord

_ZERO_TRACE_ID = bytes(16)
_ZERO_SPAN_ID = bytes(8)
_TIME_MAX = 2**63 - 1


def decode_protobuf(
    body: bytes, *, tenant: str, max_spans: int
) -> tuple[list[SpanRecord], Counter[str]]:
    """Decode one protobuf request: the spans kept and the drop reasons counted.

    Spans past `max_spans` are counted as "too_many_spans" without being converted.
    Raises ValueError when the body is not an `ExportTraceServiceRequest`.
    """
    try:
        request = ExportTraceServiceRequest.FromString(body)
    except DecodeError as exc:
        raise ValueError(f"body is not an OTLP protobuf ExportTraceServiceRequest: {exc}") from exc
    kept: list[SpanRecord] = []
    dropped: Counter[str] = Counter()
    seen = 0
    for resource_spans in request.resource_spans:
        resource = _attributes(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            # Read once: each read of a protobuf text field makes a new string.
            scope_name = shared_name(scope_spans.scope.name)
            scope_version = shared_name(scope_spans.scope.version)
            for span in scope_spans.spans:
                seen += 1
                if seen > max_spans:
                    dropped["too_many_spans"] += 1
                    continue
                reason = _fault(span)
                if reason:
                    dropped[reason] += 1
                    continue
                kept.append(_record(span, resource, scope_name, scope_version, tenant))
    return kept, dropped


def _fault(span: Span) -> str:
    """The drop reason for a span the rest of FactLedger cannot key, or "" when it is sound."""
    if len(span.trace_id) != 16 or span.trace_id == _ZERO_TRACE_ID:
        return "invalid_trace_id"
    if len(span.span_id) != 8 or span.span_id == _ZERO_SPAN_ID:
        return "invalid_span_id"
    if len(span.parent_span_id) not in (0, 8):
        return "invalid_parent_span_id"
    if not span.name:
        return "missing_name"
    # fixed64 times above what the store's DateTime64(9) holds (2262): refused here,
    # before the acknowledgement, rather than by the store after it.
    if span.start_time_unix_nano > _TIME_MAX or span.end_time_unix_nano > _TIME_MAX:
        return "invalid_time"
    if any(event.time_unix_nano > _TIME_MAX for event in span.events):
        return "invalid_event"
    return ""


def _record(
    span: Span,
    resource: dict[str, AttributeValue],
    scope_name: str,
    scope_version: str,
    tenant: str,
) -> SpanRecord:
    parent = span.parent_span_id
    return SpanRecord(
        trace_id=span.trace_id.hex(),
        span_id=span.span_id.hex(),
        # Some SDKs write eight zero bytes instead of leaving a root's parent empty.
        parent_span_id="" if not parent or parent == _ZERO_SPAN_ID else parent.hex(),
        name=shared_name(span.name),
        kind=span.kind,
        start_time_unix_nano=span.start_time_unix_nano,
        end_time_unix_nano=span.end_time_unix_nano,
        status_code=span.status.code,
        status_message=span.status.message,
        attributes=_attributes(span.attributes),
        events=tuple(
            SpanEvent(
                name=event.name,
                time_unix_nano=event.time_unix_nano,
                attributes=_attributes(event.attributes),
            )
            for event in span.events
        ),
        resource_attributes=resource,
        scope_name=scope_name,
        scope_version=scope_version,
        tenant=tenant,
    )


def _attributes(pairs: Iterable[KeyValue]) -> dict[str, AttributeValue]:
    # A repeated key keeps its last value, as the OTel Collector's pdata does on lookup.
    return {shared_name(pair.key): _value(pair.value) for pair in pairs}


def _value(value: AnyValue) -> AttributeValue:
    """One AnyValue as a Python value; an empty AnyValue (OTLP's null) becomes None."""
    which = value.WhichOneof("value")
    if which == "string_value":
        text = value.string_value
        # A long text is most often one that other spans carry too (`collector.shared_texts`).
        return shared_text(text) if len(text) >= MIN_CHARS else text
    if which == "int_value":
        return value.int_value
    if which == "bool_value":
        return value.bool_value
    if which == "double_value":
        return value.double_value
    if which == "bytes_value":
        return value.bytes_value
    if which == "array_value":
        return [_value(item) for item in value.array_value.values]
    if which == "kvlist_value":
        return _attributes(value.kvlist_value.values)
    # Unset, or `string_value_strindex`: an index into a profiles dictionary that trace
    # requests do not carry, so there is nothing to resolve it against.
    return None
