"""OTLP/JSON `ExportTraceServiceRequest` bodies → `SpanRecord`s.

OTLP/JSON is the protobuf JSON mapping with OTLP's own changes: trace and span ids are
hex strings (not base64), enums are integers, int64 fields are decimal strings or
numbers, field names are lowerCamelCase. Senders differ, so this walker also accepts
snake_case names, enum names ("SPAN_KIND_SERVER"), the deprecated
`instrumentationLibrarySpans`, and null for any absent field. It reads `json.loads`
output (through `json_text.loads`, the same answers from msgspec) directly:
`google.protobuf.json_format.Parse` would read the hex ids as base64.

A fault above the span (the body is not an object, `resourceSpans`, `scopeSpans` or
`spans` is not an array, a resource or scope is not an object) makes the whole body
unreadable. A fault inside a span drops that span alone, with a reason; so does an
unreadable resource or scope for the spans under it.

Everything kept can be stored, so nothing acknowledged is refused later: a time must fit
the store's DateTime64(9) (at most 2^63 - 1 ns, in 2262), or the span is dropped
("invalid_time", "invalid_event"); a lone surrogate escape (`\\ud800` with no pair),
which JSON allows and UTF-8 cannot encode, becomes U+FFFD in keys and strings.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from factledger.collector.shared_texts import MIN_CHARS, shared_name, shared_text
from factledger.processors.normalize.json_text import loads
from factledger.processors.spans import AttributeValue, SpanEvent, SpanRecord

MAX_VALUE_DEPTH = 32
"""Arrays and kvlists nested deeper than this drop the span ("invalid_attributes")."""

_HEX_TRACE_ID = re.compile(r"[0-9a-fA-F]{32}")
_HEX_SPAN_ID = re.compile(r"[0-9a-fA-F]{16}")
# ASCII digits only: int() would also accept "1_000", " 12" and non-ASCII digits.
_DECIMAL = re.compile(r"-?[0-9]{1,20}")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_TIME_MAX = _INT64_MAX
"""The last nanosecond a DateTime64(9) column holds (2262-04-11); a uint64 time above it
would be acknowledged and then refused by the store."""
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1

_SPAN_KINDS = {
    "SPAN_KIND_UNSPECIFIED": 0,
    "SPAN_KIND_INTERNAL": 1,
    "SPAN_KIND_SERVER": 2,
    "SPAN_KIND_CLIENT": 3,
    "SPAN_KIND_PRODUCER": 4,
    "SPAN_KIND_CONSUMER": 5,
}
_STATUS_CODES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}

JsonObject = dict[str, Any]


class _Drop(Exception):
    """Raised inside one span's conversion; `reason` is the counter it lands in."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_Resource = JsonObject | _Drop
"""A resource's attributes, or the drop every span under an unreadable resource gets."""
_Scope = tuple[str, str] | _Drop
"""A scope's (name, version), or the drop every span under an unreadable scope gets."""
_UNFORESEEN = (TypeError, ValueError, AttributeError, OverflowError, RecursionError)


def decode_json(
    body: bytes, *, tenant: str, max_spans: int
) -> tuple[list[SpanRecord], Counter[str]]:
    """Decode one OTLP/JSON request: the spans kept and the drop reasons counted.

    Spans past `max_spans` are counted as "too_many_spans" without being converted.
    Raises ValueError (saying where) when the body is not an ExportTraceServiceRequest.
    """
    # Only a body with a surrogate escape can decode to a lone surrogate (pairs decode to
    # one character); the others skip the per-object repair.
    try:
        if _SURROGATE_ESCAPE.search(body):
            document = json.loads(body, object_pairs_hook=_repaired)
        else:
            document = loads(body)
    except RecursionError as exc:
        raise ValueError("JSON body is nested too deeply") from exc
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        raise ValueError(f"body is not JSON: {exc}") from exc
    kept: list[SpanRecord] = []
    dropped: Counter[str] = Counter()
    seen = 0
    for resource, scope, spans in _groups(document):
        for raw in spans:
            seen += 1
            if seen > max_spans:
                dropped["too_many_spans"] += 1
                continue
            try:
                kept.append(_span(raw, resource, scope, tenant))
            except _Drop as drop:
                dropped[drop.reason] += 1
            except _UNFORESEEN:
                # The explicit checks should leave nothing to land here; if one is missed,
                # a shape nobody foresaw still costs one span, not the request.
                dropped["malformed_span"] += 1
    return kept, dropped


def _repaired(pairs: list[tuple[str, Any]]) -> JsonObject:
    """One JSON object with every lone surrogate in its keys and string values replaced
    by U+FFFD (a repeated key keeps its last value, as `json.loads` does)."""
    return {
        _SURROGATE.sub("\ufffd", key): (
            _SURROGATE.sub("\ufffd", value) if isinstance(value, str) else value
        )
        for key, value in pairs
    }


def _groups(document: Any) -> Iterator[tuple[_Resource, _Scope, list[Any]]]:
    """Yield (resource attributes, (scope name, version), raw spans) per scope."""
    if not isinstance(document, dict):
        raise ValueError(f"JSON body is {type(document).__name__}, not an object")
    for r, resource_spans in enumerate(_array(document, "resourceSpans", "resource_spans")):
        where = f"resourceSpans[{r}]"
        if not isinstance(resource_spans, dict):
            raise ValueError(f"{where} is not an object")
        resource = _resource(resource_spans.get("resource"))
        scope_lists = _field(resource_spans, "scopeSpans", "scope_spans")
        if scope_lists is None:
            scope_lists = _field(
                resource_spans, "instrumentationLibrarySpans", "instrumentation_library_spans"
            )
        if scope_lists is None:
            continue
        if not isinstance(scope_lists, list):
            raise ValueError(f"{where}.scopeSpans is not an array")
        for s, scope_spans in enumerate(scope_lists):
            if not isinstance(scope_spans, dict):
                raise ValueError(f"{where}.scopeSpans[{s}] is not an object")
            scope_field = scope_spans.get("scope")
            if scope_field is None:
                scope_field = _field(
                    scope_spans, "instrumentationLibrary", "instrumentation_library"
                )
            spans = scope_spans.get("spans")
            if spans is None:
                continue
            if not isinstance(spans, list):
                raise ValueError(f"{where}.scopeSpans[{s}].spans is not an array")
            yield resource, _scope(scope_field), spans


def _array(obj: JsonObject, camel: str, snake: str) -> list[Any]:
    value = _field(obj, camel, snake)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValueError(f"{camel} is not an array")
    return value


def _field(obj: JsonObject, camel: str, snake: str) -> Any:
    value = obj.get(camel)
    return obj.get(snake) if value is None else value


def _resource(raw: Any) -> _Resource:
    if raw is None:
        return {}
    try:
        if not isinstance(raw, dict):
            raise _Drop("invalid_resource")
        return _attributes(raw.get("attributes"), 0)
    except (_Drop, *_UNFORESEEN):
        return _Drop("invalid_resource")


def _scope(raw: Any) -> _Scope:
    if raw is None:
        return "", ""
    if not isinstance(raw, dict):
        return _Drop("invalid_scope")
    try:
        return (
            shared_name(_optional_string(raw, "name", "invalid_scope")),
            shared_name(_optional_string(raw, "version", "invalid_scope")),
        )
    except _Drop as drop:
        return drop


def _span(raw: Any, resource: _Resource, scope: _Scope, tenant: str) -> SpanRecord:
    if not isinstance(raw, dict):
        raise _Drop("malformed_span")
    trace_id = _hex_id(_field(raw, "traceId", "trace_id"), _HEX_TRACE_ID, "invalid_trace_id")
    span_id = _hex_id(_field(raw, "spanId", "span_id"), _HEX_SPAN_ID, "invalid_span_id")
    parent = _field(raw, "parentSpanId", "parent_span_id")
    # Empty (or, from some SDKs, all zeros) means a root span.
    parent_id = (
        ""
        if parent in (None, "", "0" * 16)
        else _hex_id(parent, _HEX_SPAN_ID, "invalid_parent_span_id")
    )
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise _Drop("missing_name")
    if isinstance(resource, _Drop):
        raise resource
    if isinstance(scope, _Drop):
        raise scope
    status_code, status_message = _status(raw.get("status"))
    return SpanRecord(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=parent_id,
        name=shared_name(name),
        kind=_enum(raw.get("kind"), _SPAN_KINDS, "invalid_kind"),
        start_time_unix_nano=_time(_field(raw, "startTimeUnixNano", "start_time_unix_nano")),
        end_time_unix_nano=_time(_field(raw, "endTimeUnixNano", "end_time_unix_nano")),
        status_code=status_code,
        status_message=status_message,
        attributes=_attributes(raw.get("attributes"), 0),
        events=tuple(_event(event) for event in _events(raw.get("events"))),
        resource_attributes=resource,
        scope_name=scope[0],
        scope_version=scope[1],
        tenant=tenant,
    )


def _optional_string(obj: JsonObject, key: str, reason: str) -> str:
    """A string field that may be absent (proto3 default ""); any other type drops."""
    value = obj.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Drop(reason)
    return value


def _hex_id(raw: Any, pattern: re.Pattern[str], reason: str) -> str:
    if not isinstance(raw, str) or not pattern.fullmatch(raw) or not raw.strip("0"):
        raise _Drop(reason)
    return raw.lower()


def _integer(raw: Any, low: int, high: int, reason: str) -> int:
    """An int64-style JSON field: a number or a decimal string, within [low, high]."""
    if isinstance(raw, bool):
        raise _Drop(reason)
    if isinstance(raw, int):
        value = raw
    elif (isinstance(raw, float) and raw.is_integer()) or (
        isinstance(raw, str) and _DECIMAL.fullmatch(raw)
    ):
        value = int(raw)
    else:
        raise _Drop(reason)
    if not low <= value <= high:
        raise _Drop(reason)
    return value


def _time(raw: Any) -> int:
    return 0 if raw is None else _integer(raw, 0, _TIME_MAX, "invalid_time")


def _enum(raw: Any, names: dict[str, int], reason: str) -> int:
    if raw is None:
        return 0
    if isinstance(raw, str) and raw in names:
        return names[raw]
    return _integer(raw, _INT32_MIN, _INT32_MAX, reason)


def _status(raw: Any) -> tuple[int, str]:
    if raw is None:
        return 0, ""
    if not isinstance(raw, dict):
        raise _Drop("invalid_status")
    message = _optional_string(raw, "message", "invalid_status")
    return _enum(raw.get("code"), _STATUS_CODES, "invalid_status"), message


def _events(raw: Any) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise _Drop("invalid_event")
    return raw


def _event(raw: Any) -> SpanEvent:
    if not isinstance(raw, dict):
        raise _Drop("invalid_event")
    name = _optional_string(raw, "name", "invalid_event")
    time = _field(raw, "timeUnixNano", "time_unix_nano")
    return SpanEvent(
        name=name,
        time_unix_nano=0 if time is None else _integer(time, 0, _TIME_MAX, "invalid_event"),
        attributes=_attributes(raw.get("attributes"), 0),
    )


def _attributes(raw: Any, depth: int) -> JsonObject:
    """A KeyValue array as a dict; a repeated key keeps its last value."""
    if raw is None:
        return {}
    if not isinstance(raw, list):
        raise _Drop("invalid_attributes")
    attributes: JsonObject = {}
    for pair in raw:
        if not isinstance(pair, dict):
            raise _Drop("invalid_attributes")
        key = _optional_string(pair, "key", "invalid_attributes")
        attributes[shared_name(key)] = _value(pair.get("value"), depth)
    return attributes


def _value(raw: Any, depth: int) -> AttributeValue:
    """One OTLP/JSON AnyValue; `{}` or null (OTLP's empty value) becomes None."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or depth > MAX_VALUE_DEPTH:
        raise _Drop("invalid_attributes")
    for camel, snake, convert in _VALUE_FORMS:
        field = _field(raw, camel, snake)
        if field is not None:
            return convert(field, depth)
    return None


def _string(raw: Any, depth: int) -> str:
    if not isinstance(raw, str):
        raise _Drop("invalid_attributes")
    # A long text is most often one that other spans carry too (`collector.shared_texts`).
    return shared_text(raw) if len(raw) >= MIN_CHARS else raw


def _bool(raw: Any, depth: int) -> bool:
    if not isinstance(raw, bool):
        raise _Drop("invalid_attributes")
    return raw


def _int64(raw: Any, depth: int) -> int:
    return _integer(raw, _INT64_MIN, _INT64_MAX, "invalid_attributes")


def _array_value(raw: Any, depth: int) -> list[AttributeValue]:
    return [_value(item, depth + 1) for item in _values(raw)]


def _kvlist_value(raw: Any, depth: int) -> JsonObject:
    return _attributes(_values(raw), depth + 1)


def _values(wrapper: Any) -> list[Any]:
    """The `values` array of an arrayValue or kvlistValue object."""
    if not isinstance(wrapper, dict):
        raise _Drop("invalid_attributes")
    items = wrapper.get("values")
    if items is None:
        return []
    if not isinstance(items, list):
        raise _Drop("invalid_attributes")
    return items


def _double(raw: Any, depth: int) -> float:
    # The protobuf JSON mapping also allows "NaN", "Infinity", "-Infinity" and numeric
    # strings; float() reads all of those, plus a few spellings ("inf") it is fine to take.
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        raise _Drop("invalid_attributes")
    try:
        return float(raw)
    except (ValueError, OverflowError):
        raise _Drop("invalid_attributes") from None


def _bytes(raw: Any, depth: int) -> bytes:
    """Standard or URL-safe base64, padded or not, as the protobuf JSON mapping allows."""
    if not isinstance(raw, str):
        raise _Drop("invalid_attributes")
    text = raw.translate(_URLSAFE).rstrip("=")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        raise _Drop("invalid_attributes") from None


_URLSAFE = str.maketrans("-_", "+/")

# Checked in this order; the first field present decides the value's type.
_VALUE_FORMS: tuple[tuple[str, str, Callable[[Any, int], AttributeValue]], ...] = (
    ("stringValue", "string_value", _string),
    ("boolValue", "bool_value", _bool),
    ("intValue", "int_value", _int64),
    ("doubleValue", "double_value", _double),
    ("bytesValue", "bytes_value", _bytes),
    ("arrayValue", "array_value", _array_value),
    ("kvlistValue", "kvlist_value", _kvlist_value),
)
