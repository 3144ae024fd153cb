"""OTLP `ExportLogsServiceRequest` bodies (protobuf or JSON) → *log spans*.

GenAI instrumentations (Semantic Kernel, the OpenTelemetry GenAI event API) write prompts
and completions as log records tied to the span they belong to (trace id + span id). Each
such record becomes one zero-length `SpanRecord`, a child of the span it names, carrying
the record as its one event:

- span id: derived from the record's content (sha256), so a resent request collapses
  into the same span and the store and the assembler see it once;
- name and event name: the record's `event_name`, else its `event.name` or
  `gen_ai.event.name` attribute, else "log";
- event attributes: the record's attributes plus its body: a map body's keys become
  attributes (an attribute of the record keeps its value), any other body is kept as
  `body` (a string as it is, bytes as UTF-8 text or base64, an array as JSON text);
- span attributes: `LOG_RECORD_MARKER` (true) and the severity.

The assembler (`processors.assembly.assembler`) folds the event into the span it names. Log spans
then travel as trace spans: the receiver encodes them as an `ExportTraceServiceRequest`
(`encode_trace_request`) and submits that, so the write-ahead log, its replay, the store
and recovery handle one kind of body.

A record that cannot be used is dropped with a reason and reported as partial success:
no_span (no trace id or span id: nothing to join it to), invalid_trace_id,
invalid_span_id, invalid_time, invalid_attributes, malformed_log_record,
too_many_log_records; from JSON also invalid_resource, invalid_scope.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from factledger.collector import otlp_json, otlp_proto
from factledger.processors.normalize.json_text import loads
from factledger.processors.spans import (
    LOG_RECORD_MARKER,
    AttributeValue,
    SpanEvent,
    SpanRecord,
    is_log_span,
)

__all__ = ["LOG_RECORD_MARKER", "decode_logs_json", "decode_logs_protobuf", "is_log_span"]
EVENT_NAME_ATTRIBUTES = ("event.name", "gen_ai.event.name")
"""Attributes that name a record's event when its `event_name` field is empty."""
_SPAN_KIND_INTERNAL = 1
_TIME_MAX = 2**63 - 1
_ZERO_TRACE_ID = bytes(16)
_ZERO_SPAN_ID = bytes(8)


# --- protobuf ----------------------------------------------------------------------------


def decode_logs_protobuf(
    body: bytes, *, tenant: str, max_spans: int
) -> tuple[list[SpanRecord], Counter[str]]:
    """Decode one protobuf logs request: the log spans kept and the drop reasons counted.
    Raises ValueError when the body is not an `ExportLogsServiceRequest`."""
    try:
        request = ExportLogsServiceRequest.FromString(body)
    except DecodeError as exc:
        raise ValueError(f"body is not an OTLP protobuf ExportLogsServiceRequest: {exc}") from exc
    kept: list[SpanRecord] = []
    dropped: Counter[str] = Counter()
    seen = 0
    received_ns = time.time_ns()
    for resource_logs in request.resource_logs:
        resource = otlp_proto._attributes(resource_logs.resource.attributes)
        for scope_logs in resource_logs.scope_logs:
            scope = scope_logs.scope
            for record in scope_logs.log_records:
                seen += 1
                if seen > max_spans:
                    dropped["too_many_log_records"] += 1
                    continue
                reason = _proto_fault(record)
                if reason:
                    dropped[reason] += 1
                    continue
                kept.append(
                    log_span(
                        trace_id=record.trace_id.hex(),
                        span_id=record.span_id.hex(),
                        time_unix_nano=record.time_unix_nano
                        or record.observed_time_unix_nano
                        or received_ns,
                        event_name=record.event_name,
                        severity_number=record.severity_number,
                        severity_text=record.severity_text,
                        attributes=otlp_proto._attributes(record.attributes),
                        body=_proto_body(record),
                        resource=resource,
                        scope=(scope.name, scope.version),
                        tenant=tenant,
                    )
                )
    return kept, dropped


def _proto_fault(record: LogRecord) -> str:
    if not record.trace_id and not record.span_id:
        return "no_span"
    if len(record.trace_id) != 16 or record.trace_id == _ZERO_TRACE_ID:
        return "invalid_trace_id" if record.trace_id else "no_span"
    if len(record.span_id) != 8 or record.span_id == _ZERO_SPAN_ID:
        return "invalid_span_id" if record.span_id else "no_span"
    if record.time_unix_nano > _TIME_MAX or record.observed_time_unix_nano > _TIME_MAX:
        return "invalid_time"
    return ""


def _proto_body(record: LogRecord) -> AttributeValue:
    if not record.HasField("body"):
        return None
    return otlp_proto._value(record.body)


# --- JSON --------------------------------------------------------------------------------


def decode_logs_json(
    body: bytes, *, tenant: str, max_spans: int
) -> tuple[list[SpanRecord], Counter[str]]:
    """Decode one OTLP/JSON logs request (hex ids, as OTLP/JSON writes them): the log
    spans kept and the drop reasons counted. Raises ValueError when the body is not an
    `ExportLogsServiceRequest`."""
    try:
        if otlp_json._SURROGATE_ESCAPE.search(body):  # a lone surrogate cannot be encoded
            document = json.loads(body, object_pairs_hook=otlp_json._repaired)
        else:
            document = loads(body)
    except RecursionError as exc:
        raise ValueError("JSON body is nested too deeply") from exc
    except ValueError as exc:
        raise ValueError(f"body is not JSON: {exc}") from exc
    kept: list[SpanRecord] = []
    dropped: Counter[str] = Counter()
    seen = 0
    received_ns = time.time_ns()
    for resource, scope, records in _json_groups(document):
        for raw in records:
            seen += 1
            if seen > max_spans:
                dropped["too_many_log_records"] += 1
                continue
            try:
                kept.append(_json_record(raw, resource, scope, tenant, received_ns))
            except otlp_json._Drop as drop:
                dropped[drop.reason] += 1
            except otlp_json._UNFORESEEN:
                dropped["malformed_log_record"] += 1
    return kept, dropped


def _json_groups(document: Any) -> Iterator[tuple[Any, Any, list[Any]]]:
    if not isinstance(document, dict):
        raise ValueError(f"JSON body is {type(document).__name__}, not an object")
    for r, resource_logs in enumerate(otlp_json._array(document, "resourceLogs", "resource_logs")):
        where = f"resourceLogs[{r}]"
        if not isinstance(resource_logs, dict):
            raise ValueError(f"{where} is not an object")
        resource = otlp_json._resource(resource_logs.get("resource"))
        scope_lists = otlp_json._field(resource_logs, "scopeLogs", "scope_logs")
        if scope_lists is None:
            continue
        if not isinstance(scope_lists, list):
            raise ValueError(f"{where}.scopeLogs is not an array")
        for s, scope_logs in enumerate(scope_lists):
            if not isinstance(scope_logs, dict):
                raise ValueError(f"{where}.scopeLogs[{s}] is not an object")
            records = otlp_json._field(scope_logs, "logRecords", "log_records")
            if records is None:
                continue
            if not isinstance(records, list):
                raise ValueError(f"{where}.scopeLogs[{s}].logRecords is not an array")
            yield resource, otlp_json._scope(scope_logs.get("scope")), records


def _json_record(raw: Any, resource: Any, scope: Any, tenant: str, received_ns: int) -> SpanRecord:
    if not isinstance(raw, dict):
        raise otlp_json._Drop("malformed_log_record")
    trace_raw = otlp_json._field(raw, "traceId", "trace_id")
    span_raw = otlp_json._field(raw, "spanId", "span_id")
    if trace_raw in (None, "") and span_raw in (None, ""):
        raise otlp_json._Drop("no_span")
    if trace_raw in (None, "") or span_raw in (None, ""):
        raise otlp_json._Drop("no_span")
    trace_id = otlp_json._hex_id(trace_raw, otlp_json._HEX_TRACE_ID, "invalid_trace_id")
    span_id = otlp_json._hex_id(span_raw, otlp_json._HEX_SPAN_ID, "invalid_span_id")
    if isinstance(resource, otlp_json._Drop):
        raise resource
    if isinstance(scope, otlp_json._Drop):
        raise scope
    when = otlp_json._time(otlp_json._field(raw, "timeUnixNano", "time_unix_nano"))
    observed = otlp_json._time(
        otlp_json._field(raw, "observedTimeUnixNano", "observed_time_unix_nano")
    )
    event_name = otlp_json._optional_string(raw, "eventName", "malformed_log_record") or (
        otlp_json._optional_string(raw, "event_name", "malformed_log_record")
    )
    severity_raw = otlp_json._field(raw, "severityNumber", "severity_number")
    severity = 0
    if severity_raw is not None:
        if isinstance(severity_raw, str) and severity_raw.startswith("SEVERITY_NUMBER_"):
            severity = 0  # an enum name: the text field says the same
        else:
            severity = otlp_json._integer(severity_raw, 0, 2**31 - 1, "malformed_log_record")
    severity_text = otlp_json._field(raw, "severityText", "severity_text")
    body = raw.get("body")
    return log_span(
        trace_id=trace_id,
        span_id=span_id,
        time_unix_nano=when or observed or received_ns,
        event_name=event_name,
        severity_number=severity,
        severity_text=severity_text if isinstance(severity_text, str) else "",
        attributes=otlp_json._attributes(raw.get("attributes"), 0),
        body=None if body is None else otlp_json._value(body, 0),
        resource=resource,
        scope=scope,
        tenant=tenant,
    )


# --- the log span ------------------------------------------------------------------------


def log_span(
    *,
    trace_id: str,
    span_id: str,
    time_unix_nano: int,
    event_name: str,
    severity_number: int,
    severity_text: str,
    attributes: Mapping[str, AttributeValue],
    body: AttributeValue,
    resource: Mapping[str, AttributeValue],
    scope: tuple[str, str],
    tenant: str,
) -> SpanRecord:
    """The log span of one record that names span `span_id` of trace `trace_id`."""
    name = event_name or _named_event(attributes) or "log"
    event_attributes = dict(attributes)
    event_attributes.update(_body_attributes(body, event_attributes))
    span_attributes: dict[str, AttributeValue] = {LOG_RECORD_MARKER: True}
    if severity_number:
        span_attributes["log.severity_number"] = severity_number
    if severity_text:
        span_attributes["log.severity_text"] = severity_text
    own_id = _derived_span_id(trace_id, span_id, time_unix_nano, name, event_attributes)
    return SpanRecord(
        trace_id=trace_id,
        span_id=own_id,
        parent_span_id=span_id,
        name=name,
        kind=_SPAN_KIND_INTERNAL,
        start_time_unix_nano=time_unix_nano,
        end_time_unix_nano=time_unix_nano,
        attributes=span_attributes,
        events=(SpanEvent(name=name, time_unix_nano=time_unix_nano, attributes=event_attributes),),
        resource_attributes=dict(resource),
        scope_name=scope[0],
        scope_version=scope[1],
        tenant=tenant,
    )


def _named_event(attributes: Mapping[str, AttributeValue]) -> str:
    for key in EVENT_NAME_ATTRIBUTES:
        value = attributes.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _body_attributes(
    body: AttributeValue, attributes: Mapping[str, AttributeValue]
) -> dict[str, AttributeValue]:
    """What the body adds to the event's attributes (see the module)."""
    if body is None or body == "" or body == b"":
        return {}
    if isinstance(body, Mapping):
        return {str(k): v for k, v in body.items() if k not in attributes}
    if isinstance(body, bytes):
        try:
            return {"body": body.decode("utf-8")}
        except UnicodeDecodeError:
            return {"body": base64.b64encode(body).decode("ascii")}
    if isinstance(body, str | bool | int | float):
        return {"body": body}
    return {"body": _json_text(body)}


def _json_text(value: AttributeValue) -> str:
    return json.dumps(value, ensure_ascii=False, default=_jsonable, sort_keys=True)


def _jsonable(value: object) -> object:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, Mapping):
        return dict(value)
    return repr(value)


def _derived_span_id(
    trace_id: str, parent: str, when: int, name: str, attributes: Mapping[str, AttributeValue]
) -> str:
    """A span id from the record's content: the same record sent twice gets the same id."""
    key = _json_text([trace_id, parent, when, name, attributes])
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()
    for start in range(0, len(digest) - 7):
        candidate = digest[start : start + 8]
        if candidate != _ZERO_SPAN_ID:
            return candidate.hex()
    return "0" * 15 + "1"  # pragma: no cover - a digest of zeros


# --- log spans as a trace request -----------------------------------------------------------


def encode_trace_request(spans: Iterable[SpanRecord]) -> bytes:
    """Spans as one protobuf `ExportTraceServiceRequest` that decodes back to the same
    records (`otlp_proto.decode_protobuf`): how log spans reach the write-ahead log."""
    request = ExportTraceServiceRequest()
    groups: dict[tuple[str, tuple[str, str]], Any] = {}
    for span in spans:
        resource_key = _json_text(span.resource_attributes)
        scope_key = (span.scope_name, span.scope_version)
        scope_spans = groups.get((resource_key, scope_key))
        if scope_spans is None:
            resource_spans = request.resource_spans.add()
            _set_attributes(resource_spans.resource.attributes, span.resource_attributes)
            scope_spans = resource_spans.scope_spans.add()
            scope_spans.scope.name = span.scope_name
            scope_spans.scope.version = span.scope_version
            groups[(resource_key, scope_key)] = scope_spans
        out = scope_spans.spans.add()
        out.trace_id = bytes.fromhex(span.trace_id)
        out.span_id = bytes.fromhex(span.span_id)
        if span.parent_span_id:
            out.parent_span_id = bytes.fromhex(span.parent_span_id)
        out.name = span.name
        out.kind = Span.SpanKind.ValueType(span.kind)
        out.start_time_unix_nano = span.start_time_unix_nano
        out.end_time_unix_nano = span.end_time_unix_nano
        out.status.code = Status.StatusCode.ValueType(span.status_code)
        out.status.message = span.status_message
        _set_attributes(out.attributes, span.attributes)
        for event in span.events:
            written = out.events.add()
            written.name = event.name
            written.time_unix_nano = event.time_unix_nano
            _set_attributes(written.attributes, event.attributes)
    return bytes(request.SerializeToString())


def _set_attributes(target: Any, attributes: Mapping[str, AttributeValue]) -> None:
    for key, value in attributes.items():
        pair: KeyValue = target.add()
        pair.key = key
        _set_value(pair.value, value)


def _set_value(target: AnyValue, value: AttributeValue) -> None:
    if value is None:
        return
    if isinstance(value, bool):
        target.bool_value = value
    elif isinstance(value, int):
        target.int_value = value
    elif isinstance(value, float):
        target.double_value = value
    elif isinstance(value, str):
        target.string_value = value
    elif isinstance(value, bytes):
        target.bytes_value = value
    elif isinstance(value, Mapping):
        target.kvlist_value.SetInParent()
        _set_attributes(target.kvlist_value.values, value)
    elif isinstance(value, list | tuple):
        target.array_value.SetInParent()
        for item in value:
            _set_value(target.array_value.values.add(), item)
    else:
        target.string_value = str(value)
