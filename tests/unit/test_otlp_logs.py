"""OTLP logs at the edge: log records → log spans, both encodings, and back to a trace
request for the write-ahead log."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict, ParseDict
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)

from factledger.collector import otlp
from factledger.collector.otlp_logs import encode_trace_request
from factledger.collector.otlp_proto import decode_protobuf
from factledger.processors.spans import LOG_RECORD_MARKER, SpanRecord, is_log_span

TRACE = "0af7651916cd43dd8448eb211c80319c"
SPAN = "b7ad6b7169203331"
T0 = 1_700_000_000_000_000_000


def record(**fields: Any) -> dict[str, Any]:
    """One OTLP/JSON log record (hex ids) naming span SPAN of trace TRACE."""
    out: dict[str, Any] = {"traceId": TRACE, "spanId": SPAN, "timeUnixNano": str(T0)}
    out.update(fields)
    return {k: v for k, v in out.items() if v is not None}


def logs_document(*records: dict[str, Any]) -> dict[str, Any]:
    return {
        "resourceLogs": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "sk-app"}}]
                },
                "scopeLogs": [
                    {
                        "scope": {"name": "semantic_kernel", "version": "1.0"},
                        "logRecords": list(records),
                    }
                ],
            }
        ]
    }


def as_protobuf(document: dict[str, Any]) -> bytes:
    """The same request as protobuf: hex ids become bytes (ParseDict reads base64)."""
    copy = json.loads(json.dumps(document))
    for resource in copy["resourceLogs"]:
        for scope in resource["scopeLogs"]:
            for rec in scope["logRecords"]:
                for key in ("traceId", "spanId"):
                    if key in rec:
                        try:
                            rec[key] = base64.b64encode(bytes.fromhex(rec[key])).decode()
                        except ValueError:
                            rec[key] = base64.b64encode(rec[key].encode()).decode()
    return ParseDict(copy, ExportLogsServiceRequest()).SerializeToString()


def decode(document: dict[str, Any], media: str) -> otlp.DecodeResult:
    if media == "json":
        return otlp.decode_request(
            json.dumps(document).encode(), otlp.JSON, tenant="t1", signal="logs"
        )
    return otlp.decode_request(as_protobuf(document), otlp.PROTOBUF, tenant="t1", signal="logs")


MEDIA = pytest.mark.parametrize("media", ["json", "protobuf"])

_STR = {"stringValue": '{"role": "user", "content": "push it"}'}

# (case, record fields, event name, attributes the event must carry)
CASES: list[tuple[str, dict[str, Any], str, dict[str, Any]]] = [
    (
        "semantic kernel: event.name attribute, JSON text body",
        {
            "body": _STR,
            "attributes": [
                {"key": "event.name", "value": {"stringValue": "gen_ai.user.message"}},
                {"key": "gen_ai.system", "value": {"stringValue": "openai"}},
            ],
        },
        "gen_ai.user.message",
        {"body": '{"role": "user", "content": "push it"}', "gen_ai.system": "openai"},
    ),
    (
        "event_name field and a map body: its keys become attributes",
        {
            "eventName": "gen_ai.choice",
            "body": {
                "kvlistValue": {
                    "values": [
                        {"key": "index", "value": {"intValue": "0"}},
                        {
                            "key": "message",
                            "value": {
                                "kvlistValue": {
                                    "values": [
                                        {"key": "content", "value": {"stringValue": "Done."}}
                                    ]
                                }
                            },
                        },
                    ]
                }
            },
        },
        "gen_ai.choice",
        {"index": 0, "message": {"content": "Done."}},
    ),
    (
        "gen_ai.event.name attribute",
        {
            "body": {"stringValue": "hello"},
            "attributes": [
                {"key": "gen_ai.event.name", "value": {"stringValue": "gen_ai.user.message"}}
            ],
        },
        "gen_ai.user.message",
        {"body": "hello"},
    ),
    (
        "a record attribute keeps its value over a body key",
        {
            "eventName": "x",
            "attributes": [{"key": "k", "value": {"stringValue": "attr"}}],
            "body": {"kvlistValue": {"values": [{"key": "k", "value": {"stringValue": "body"}}]}},
        },
        "x",
        {"k": "attr"},
    ),
    (
        "bytes body (UTF-8) kept as text",
        {"eventName": "x", "body": {"bytesValue": base64.b64encode(b"raw text").decode()}},
        "x",
        {"body": "raw text"},
    ),
    (
        "bytes body (not UTF-8) kept as base64",
        {"eventName": "x", "body": {"bytesValue": base64.b64encode(b"\xff\xfe").decode()}},
        "x",
        {"body": base64.b64encode(b"\xff\xfe").decode()},
    ),
    (
        "array body kept as JSON text",
        {
            "eventName": "x",
            "body": {"arrayValue": {"values": [{"stringValue": "a"}, {"intValue": "2"}]}},
        },
        "x",
        {"body": '["a", 2]'},
    ),
    (
        "nested kvlist body",
        {
            "eventName": "x",
            "body": {
                "kvlistValue": {
                    "values": [
                        {
                            "key": "outer",
                            "value": {
                                "kvlistValue": {
                                    "values": [
                                        {
                                            "key": "inner",
                                            "value": {
                                                "arrayValue": {"values": [{"boolValue": True}]}
                                            },
                                        }
                                    ]
                                }
                            },
                        }
                    ]
                }
            },
        },
        "x",
        {"outer": {"inner": [True]}},
    ),
    ("empty body", {"eventName": "x", "body": {}}, "x", {}),
    ("empty string body", {"eventName": "x", "body": {"stringValue": ""}}, "x", {}),
    ("no body, no name", {}, "log", {}),
]


@MEDIA
@pytest.mark.parametrize(("case", "fields", "name", "expected"), CASES, ids=[c[0] for c in CASES])
def test_a_record_becomes_a_log_span_child_of_the_span_it_names(
    media: str, case: str, fields: dict[str, Any], name: str, expected: dict[str, Any]
) -> None:
    result = decode(logs_document(record(**fields)), media)
    assert result.rejected == 0, result.reasons
    [span] = result.spans
    assert is_log_span(span)
    assert span.attributes[LOG_RECORD_MARKER] is True
    assert (span.trace_id, span.parent_span_id) == (TRACE, SPAN)
    assert len(span.span_id) == 16 and span.span_id != SPAN
    assert span.start_time_unix_nano == span.end_time_unix_nano == T0
    assert span.name == name
    assert span.tenant == "t1"
    assert span.service_name == "sk-app"
    assert (span.scope_name, span.scope_version) == ("semantic_kernel", "1.0")
    [event] = span.events
    assert event.name == name
    assert event.time_unix_nano == T0
    for key, value in expected.items():
        assert event.attributes[key] == value, key
    if not expected:
        assert "body" not in event.attributes


@MEDIA
def test_ids_are_hex_and_lower_case_whatever_the_encoding(media: str) -> None:
    doc = logs_document(record(traceId=TRACE.upper(), spanId=SPAN.upper(), eventName="x"))
    [span] = decode(doc, media).spans
    assert (span.trace_id, span.parent_span_id) == (TRACE, SPAN)


@MEDIA
def test_the_same_record_gets_the_same_span_id_so_a_resent_request_collapses(media: str) -> None:
    doc = logs_document(record(eventName="a", body={"stringValue": "one"}))
    first = decode(doc, media).spans[0]
    again = decode(doc, media).spans[0]
    other = decode(logs_document(record(eventName="a", body={"stringValue": "two"})), media)
    assert first.span_id == again.span_id
    assert other.spans[0].span_id != first.span_id


def test_json_and_protobuf_read_the_same_record_alike() -> None:
    doc = logs_document(record(eventName="gen_ai.user.message", body=_STR))
    assert decode(doc, "json").spans == decode(doc, "protobuf").spans


def test_observed_time_stands_in_for_a_missing_time() -> None:
    doc = logs_document(record(timeUnixNano=None, observedTimeUnixNano=str(T0 + 5), eventName="x"))
    for media in ("json", "protobuf"):
        assert decode(doc, media).spans[0].start_time_unix_nano == T0 + 5


BAD: list[tuple[str, dict[str, Any], str]] = [
    ("no trace id, no span id", {"traceId": None, "spanId": None}, "no_span"),
    ("a trace id but no span id", {"spanId": None}, "no_span"),
    ("all-zero trace id", {"traceId": "0" * 32}, "invalid_trace_id"),
    ("short span id", {"spanId": "abcd"}, "invalid_span_id"),
]


@MEDIA
@pytest.mark.parametrize(("case", "fields", "reason"), BAD, ids=[b[0] for b in BAD])
def test_a_record_that_names_no_usable_span_is_dropped_alone_with_its_reason(
    media: str, case: str, fields: dict[str, Any], reason: str
) -> None:
    doc = logs_document(record(**fields), record(eventName="kept"))
    result = decode(doc, media)
    assert [s.name for s in result.spans] == ["kept"]
    assert result.reasons == {reason: 1}
    assert result.rejected == 1
    assert "log records" in result.error_message


def test_json_faults_inside_a_record_cost_that_record_alone() -> None:
    doc = logs_document(
        record(eventName="bad", attributes="not an array"),
        record(eventName="bad time", timeUnixNano="soon"),
        "not an object",  # type: ignore[arg-type]
        record(eventName="kept"),
    )
    result = otlp.decode_request(json.dumps(doc).encode(), otlp.JSON, signal="logs")
    assert [s.name for s in result.spans] == ["kept"]
    assert result.reasons == {
        "invalid_attributes": 1,
        "invalid_time": 1,
        "malformed_log_record": 1,
    }


@pytest.mark.parametrize(
    ("body", "media"),
    [(b"\x0a\xff", otlp.PROTOBUF), (b"[]", otlp.JSON), (b"{not json", otlp.JSON)],
)
def test_a_body_that_is_no_logs_request_is_a_decode_error(body: bytes, media: str) -> None:
    with pytest.raises(otlp.OtlpDecodeError):
        otlp.decode_request(body, media, signal="logs")


def test_too_many_records_are_rejected_past_the_bound() -> None:
    doc = logs_document(*(record(eventName=f"e{i}") for i in range(5)))
    result = otlp.decode_request(json.dumps(doc).encode(), otlp.JSON, signal="logs", max_spans=3)
    assert len(result.spans) == 3
    assert result.reasons == {"too_many_log_records": 2}


def test_log_spans_round_trip_through_a_trace_request() -> None:
    """What the write-ahead log holds for a logs request decodes back to the same spans."""
    doc = logs_document(
        record(eventName="gen_ai.user.message", body=_STR),
        record(eventName="gen_ai.choice", body=CASES[1][1]["body"], severityNumber=9),
        record(eventName="x", body=CASES[4][1]["body"]),
        record(eventName="y", body=CASES[7][1]["body"]),
    )
    spans = decode(doc, "protobuf").spans
    body = encode_trace_request(spans)
    back, dropped = decode_protobuf(body, tenant="t1", max_spans=100)
    assert not dropped
    assert tuple(back) == spans


def test_a_trace_request_of_plain_spans_round_trips_too() -> None:
    span = SpanRecord(
        trace_id=TRACE,
        span_id=SPAN,
        name="chat",
        kind=3,
        start_time_unix_nano=T0,
        end_time_unix_nano=T0 + 1,
        status_code=2,
        status_message="boom",
        attributes={"a": 1.5, "b": [1, "x", None], "c": b"\x00", "d": False},
        resource_attributes={"service.name": "s"},
        scope_name="sc",
        tenant="t1",
    )
    back, _ = decode_protobuf(encode_trace_request([span]), tenant="t1", max_spans=10)
    assert back == [span]


@pytest.mark.parametrize("media", [otlp.PROTOBUF, otlp.JSON])
def test_the_logs_response_counts_rejected_log_records(media: str) -> None:
    body = otlp.encode_response(media, 2, "rejected 2 of 3 log records", "logs")
    if media == otlp.PROTOBUF:
        response = ExportLogsServiceResponse.FromString(body)
        assert response.partial_success.rejected_log_records == 2
        assert MessageToDict(response)["partialSuccess"]["errorMessage"].startswith("rejected 2")
    else:
        assert json.loads(body) == {
            "partialSuccess": {
                "rejectedLogRecords": "2",
                "errorMessage": "rejected 2 of 3 log records",
            }
        }
    assert otlp.encode_response(media, signal="logs") in (b"", b"{}")


def test_a_log_span_is_stored_and_read_back_as_a_log_span() -> None:
    """Spans read back from the store (recovery at a restart) are still log spans, with
    their event as it was."""
    from factledger.collector.rows import SPAN_COLUMNS, span_from_row, span_row

    doc = logs_document(record(eventName="gen_ai.choice", body=CASES[1][1]["body"]))
    [span] = decode(doc, "protobuf").spans
    back = span_from_row(dict(zip(SPAN_COLUMNS, span_row(span, 0), strict=True)))
    assert back == span
    assert is_log_span(back)
