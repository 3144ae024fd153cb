"""The OTLP/HTTP edge: bodies from the real OTel SDK encoder and OTLP/JSON literals."""

from __future__ import annotations

import base64
import gzip
import json
import math
import time
import tracemalloc
import zlib
from collections.abc import Callable
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict, ParseDict
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import (
    AnyValue,
    ArrayValue,
    KeyValue,
    KeyValueList,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer

from factledger.collector.otlp import (
    JSON,
    PROTOBUF,
    DecodeResult,
    OtlpDecodeError,
    PayloadTooLarge,
    UnsupportedEncoding,
    UnsupportedMediaType,
    decode_request,
    decompress,
    encode_response,
    encode_status,
    response_content_type,
)
from factledger.collector.refusals import Refusal
from factledger.processors.errors import FactLedgerError
from factledger.processors.spans import SpanEvent, SpanRecord

MiB = 1 << 20
TRACE = "5b8efff798038103d269b633813fc60c"
SPAN = "eee19b7ec3c1b174"
PARENT = "aaa19b7ec3c1b174"


# --- building requests ---------------------------------------------------------------------


def sdk_request(build: Callable[[Tracer], None]) -> ExportTraceServiceRequest:
    """What the OTel SDK's OTLP exporter would send for the spans `build` creates."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource({"service.name": "agent", "deploy.env": "test"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    build(provider.get_tracer("factledger.tests", "1.2.3"))
    provider.shutdown()
    return encode_spans(exporter.get_finished_spans())


def as_otlp_json(request: ExportTraceServiceRequest) -> dict[str, Any]:
    """The protobuf JSON mapping with OTLP's hex ids, as an OTLP/JSON sender writes it."""
    document = MessageToDict(request)

    def hex_ids(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("traceId", "spanId", "parentSpanId"):
                    node[key] = base64.b64decode(value).hex()
                else:
                    hex_ids(value)
        elif isinstance(node, list):
            for item in node:
                hex_ids(item)

    hex_ids(document)
    return document


def json_span(name: Any = "chat", **fields: Any) -> dict[str, Any]:
    span: dict[str, Any] = {"traceId": TRACE, "spanId": SPAN, "name": name}
    span.update(fields)
    return span


def json_body(*spans: Any, resource: Any = None, scope: Any = None) -> bytes:
    scope_spans: dict[str, Any] = {"spans": list(spans)}
    if scope is not None:
        scope_spans["scope"] = scope
    resource_spans: dict[str, Any] = {"scopeSpans": [scope_spans]}
    if resource is not None:
        resource_spans["resource"] = resource
    return json.dumps({"resourceSpans": [resource_spans]}).encode()


def proto_body(*spans: Span) -> bytes:
    request = ExportTraceServiceRequest()
    request.resource_spans.add().scope_spans.add().spans.extend(spans)
    return request.SerializeToString()


def proto_span(name: str = "chat", **fields: Any) -> Span:
    values: dict[str, Any] = {
        "trace_id": bytes.fromhex(TRACE),
        "span_id": bytes.fromhex(SPAN),
        "name": name,
    }
    values.update(fields)
    return Span(**values)


def only_span(result: DecodeResult) -> SpanRecord:
    assert result.rejected == 0, result.reasons
    (span,) = result.spans
    return span


# --- protobuf from the SDK -------------------------------------------------------------------


def _agent_turn(tracer: Tracer) -> None:
    with (
        tracer.start_as_current_span("invoke_agent", kind=SpanKind.SERVER),
        tracer.start_as_current_span("chat", kind=SpanKind.CLIENT) as chat,
    ):
        chat.set_attribute("gen_ai.request.model", "gpt-x")
        chat.add_event("gen_ai.choice", {"index": 0, "finish_reason": "stop"})
        chat.set_status(Status(StatusCode.ERROR, "rate limited"))


def test_sdk_spans_decode_from_protobuf_with_ids_tree_and_metadata():
    request = sdk_request(_agent_turn)
    sent = [s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
    result = decode_request(request.SerializeToString(), PROTOBUF, tenant="acme")

    assert result.rejected == 0 and result.error_message == ""
    by_name = {span.name: span for span in result.spans}
    agent, chat = by_name["invoke_agent"], by_name["chat"]
    assert chat.trace_id == agent.trace_id == sent[0].trace_id.hex()
    assert len(chat.trace_id) == 32 and len(chat.span_id) == 16
    assert (agent.parent_span_id, chat.parent_span_id) == ("", agent.span_id)
    assert (agent.kind, chat.kind) == (2, 3)  # OTLP numbering: SERVER 2, CLIENT 3
    assert (chat.status_code, chat.status_message, chat.is_error) == (2, "rate limited", True)
    assert 0 < chat.start_time_unix_nano <= chat.end_time_unix_nano
    assert chat.attributes == {"gen_ai.request.model": "gpt-x"}
    assert chat.events == (
        SpanEvent(
            name="gen_ai.choice",
            time_unix_nano=chat.events[0].time_unix_nano,
            attributes={"index": 0, "finish_reason": "stop"},
        ),
    )
    assert chat.resource_attributes["deploy.env"] == "test"
    assert chat.service_name == "agent"
    assert (chat.scope_name, chat.scope_version, chat.tenant) == (
        "factledger.tests",
        "1.2.3",
        "acme",
    )


@pytest.mark.parametrize(
    ("value", "decoded"),
    [
        pytest.param("text", "text", id="string"),
        pytest.param("", "", id="empty-string"),
        pytest.param(True, True, id="bool"),
        pytest.param(-(2**63), -(2**63), id="int64-min"),
        pytest.param(2**63 - 1, 2**63 - 1, id="int64-max"),
        pytest.param(0.25, 0.25, id="double"),
        pytest.param(["a", "b"], ["a", "b"], id="string-array"),
        pytest.param([True, False], [True, False], id="bool-array"),
        pytest.param([1, 2], [1, 2], id="int-array"),
        pytest.param([1.5], [1.5], id="double-array"),
        pytest.param([], [], id="empty-array"),
    ],
)
def test_sdk_attribute_types_round_trip_through_protobuf(value, decoded):
    def build(tracer: Tracer) -> None:
        tracer.start_span("chat", attributes={"k": value}).end()

    result = decode_request(sdk_request(build).SerializeToString(), PROTOBUF)
    assert only_span(result).attributes == {"k": decoded}


def test_protobuf_and_its_otlp_json_form_decode_to_the_same_spans():
    def build(tracer: Tracer) -> None:
        _agent_turn(tracer)
        tracer.start_span("execute_tool", attributes={"n": 7, "x": 0.5, "l": ["a"]}).end()

    request = sdk_request(build)
    from_proto = decode_request(request.SerializeToString(), PROTOBUF)
    # MessageToDict writes enum names and int64 as strings: both forms must be read.
    from_json = decode_request(json.dumps(as_otlp_json(request)).encode(), JSON)
    assert from_json == from_proto
    assert len(from_json.spans) == 3


# --- every AnyValue type, both media types ------------------------------------------------------


def _kv(key: str, value: AnyValue) -> KeyValue:
    return KeyValue(key=key, value=value)


PROTO_KVLIST = AnyValue(
    kvlist_value=KeyValueList(
        values=[
            _kv("role", AnyValue(string_value="tool")),
            _kv("parts", AnyValue(array_value=ArrayValue(values=[AnyValue(bool_value=True)]))),
        ]
    )
)
JSON_KVLIST = {
    "kvlistValue": {
        "values": [
            {"key": "role", "value": {"stringValue": "tool"}},
            {"key": "parts", "value": {"arrayValue": {"values": [{"boolValue": True}]}}},
        ]
    }
}

ANY_VALUES = [
    pytest.param(AnyValue(string_value="x"), {"stringValue": "x"}, "x", id="string"),
    pytest.param(AnyValue(bool_value=False), {"boolValue": False}, False, id="bool"),
    pytest.param(AnyValue(int_value=-(2**63)), {"intValue": str(-(2**63))}, -(2**63), id="int64"),
    pytest.param(AnyValue(double_value=1.5), {"doubleValue": 1.5}, 1.5, id="double"),
    pytest.param(
        AnyValue(bytes_value=b"\x00\xff\xfe"), {"bytesValue": "AP/+"}, b"\x00\xff\xfe", id="bytes"
    ),
    pytest.param(
        AnyValue(
            array_value=ArrayValue(values=[AnyValue(string_value="a"), AnyValue(int_value=2)])
        ),
        {"arrayValue": {"values": [{"stringValue": "a"}, {"intValue": "2"}]}},
        ["a", 2],
        id="array",
    ),
    pytest.param(PROTO_KVLIST, JSON_KVLIST, {"role": "tool", "parts": [True]}, id="kvlist"),
    pytest.param(AnyValue(array_value=ArrayValue()), {"arrayValue": {}}, [], id="empty-array"),
    pytest.param(AnyValue(), {}, None, id="empty-value-is-null"),
]


@pytest.mark.parametrize(("proto", "_json", "decoded"), ANY_VALUES)
def test_protobuf_any_value_types_decode(proto, _json, decoded):
    body = proto_body(proto_span(attributes=[_kv("k", proto)]))
    assert only_span(decode_request(body, PROTOBUF)).attributes == {"k": decoded}


@pytest.mark.parametrize(("_proto", "json_value", "decoded"), ANY_VALUES)
def test_json_any_value_types_decode(_proto, json_value, decoded):
    body = json_body(json_span(attributes=[{"key": "k", "value": json_value}]))
    assert only_span(decode_request(body, JSON)).attributes == {"k": decoded}


@pytest.mark.parametrize(
    ("json_value", "decoded"),
    [
        pytest.param({"intValue": 12}, 12, id="int-as-number"),
        pytest.param({"intValue": "12"}, 12, id="int-as-string"),
        pytest.param({"intValue": "-12"}, -12, id="negative-int-as-string"),
        pytest.param({"intValue": 12.0}, 12, id="int-as-integral-float"),
        pytest.param({"doubleValue": 3}, 3.0, id="double-as-integer"),
        pytest.param({"doubleValue": "2.5"}, 2.5, id="double-as-string"),
        pytest.param({"doubleValue": "Infinity"}, math.inf, id="double-infinity"),
        pytest.param({"bytesValue": "AP_-"}, b"\x00\xff\xfe", id="bytes-url-safe"),
        pytest.param({"bytesValue": "AP8"}, b"\x00\xff", id="bytes-unpadded"),
        pytest.param({"string_value": "snake"}, "snake", id="snake-case-field"),
        pytest.param({"stringValue": None, "intValue": 3}, 3, id="null-field-is-absent"),
        pytest.param(None, None, id="missing-value-is-null"),
    ],
)
def test_json_value_spellings_other_senders_use(json_value, decoded):
    body = json_body(json_span(attributes=[{"key": "k", "value": json_value}]))
    assert only_span(decode_request(body, JSON)).attributes == {"k": decoded}


# --- OTLP/JSON specifics ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        pytest.param({}, {"trace_id": TRACE, "span_id": SPAN, "parent_span_id": ""}, id="root"),
        pytest.param(
            {"parentSpanId": PARENT}, {"parent_span_id": PARENT}, id="parent-kept-as-given"
        ),
        pytest.param({"parentSpanId": ""}, {"parent_span_id": ""}, id="empty-parent-is-root"),
        pytest.param({"parentSpanId": "0" * 16}, {"parent_span_id": ""}, id="zero-parent-is-root"),
        pytest.param(
            {"traceId": TRACE.upper(), "spanId": SPAN.upper()},
            {"trace_id": TRACE, "span_id": SPAN},
            id="upper-case-hex-lowered",
        ),
        pytest.param(
            {"startTimeUnixNano": "1700000000123456789", "endTimeUnixNano": 1700000000123456790},
            {
                "start_time_unix_nano": 1700000000123456789,
                "end_time_unix_nano": 1700000000123456790,
            },
            id="times-as-string-and-number",
        ),
        pytest.param(
            {"startTimeUnixNano": 1.7e18},
            {"start_time_unix_nano": 1700000000000000000},
            id="float-time",
        ),
        pytest.param({"kind": 2}, {"kind": 2}, id="kind-as-int"),
        pytest.param({"kind": "SPAN_KIND_CONSUMER"}, {"kind": 5}, id="kind-as-enum-name"),
        pytest.param(
            {"status": {"code": "STATUS_CODE_ERROR", "message": "boom"}},
            {"status_code": 2, "status_message": "boom"},
            id="status-as-enum-name",
        ),
        pytest.param({"status": {"code": 1}}, {"status_code": 1}, id="status-as-int"),
        pytest.param(
            {"events": [{"name": "e", "timeUnixNano": "5", "attributes": []}]},
            {"events": (SpanEvent(name="e", time_unix_nano=5),)},
            id="event",
        ),
    ],
)
def test_json_span_fields(fields, expected):
    span = only_span(decode_request(json_body(json_span(**fields)), JSON))
    assert {key: getattr(span, key) for key in expected} == expected


def test_json_snake_case_field_names_are_accepted():
    body = {
        "resource_spans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"string_value": "a"}}]
                },
                "scope_spans": [
                    {
                        "scope": {"name": "lib", "version": "1"},
                        "spans": [
                            {
                                "trace_id": TRACE,
                                "span_id": SPAN,
                                "parent_span_id": PARENT,
                                "name": "chat",
                                "start_time_unix_nano": "10",
                                "end_time_unix_nano": "20",
                            }
                        ],
                    }
                ],
            }
        ]
    }
    span = only_span(decode_request(json.dumps(body).encode(), JSON))
    assert (span.trace_id, span.span_id, span.parent_span_id) == (TRACE, SPAN, PARENT)
    assert (span.start_time_unix_nano, span.end_time_unix_nano) == (10, 20)
    assert (span.service_name, span.scope_name, span.scope_version) == ("a", "lib", "1")


def test_json_deprecated_instrumentation_library_spans_are_read():
    body = {
        "resourceSpans": [
            {
                "instrumentationLibrarySpans": [
                    {
                        "instrumentationLibrary": {"name": "old", "version": "0.1"},
                        "spans": [json_span()],
                    }
                ]
            }
        ]
    }
    span = only_span(decode_request(json.dumps(body).encode(), JSON))
    assert (span.scope_name, span.scope_version) == ("old", "0.1")


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"{}", id="empty-object"),
        pytest.param(b'{"resourceSpans": []}', id="no-resources"),
        pytest.param(b'{"resourceSpans": null}', id="null-resources"),
        pytest.param(b'{"resourceSpans": [{}]}', id="resource-without-scopes"),
        pytest.param(b'{"resourceSpans": [{"scopeSpans": [{}]}]}', id="scope-without-spans"),
    ],
)
def test_json_request_without_spans_is_empty_not_an_error(body):
    assert decode_request(body, JSON) == DecodeResult(spans=())


def test_protobuf_empty_body_is_an_empty_request():
    assert decode_request(b"", PROTOBUF) == DecodeResult(spans=())


# --- one bad span never drops its neighbours ---------------------------------------------------

BAD_JSON_SPANS = [
    pytest.param(json_span(traceId=TRACE[:-1]), "invalid_trace_id", id="trace-id-31-hex"),
    pytest.param(json_span(traceId="z" * 32), "invalid_trace_id", id="trace-id-not-hex"),
    pytest.param(
        json_span(traceId=base64.b64encode(bytes.fromhex(TRACE)).decode()),
        "invalid_trace_id",
        id="trace-id-base64-as-json-format-writes-it",
    ),
    pytest.param(json_span(traceId="0" * 32), "invalid_trace_id", id="trace-id-all-zero"),
    pytest.param(json_span(traceId=None), "invalid_trace_id", id="trace-id-missing"),
    pytest.param(json_span(traceId=12), "invalid_trace_id", id="trace-id-number"),
    pytest.param(json_span(spanId=TRACE), "invalid_span_id", id="span-id-32-hex"),
    pytest.param(json_span(spanId=" " + SPAN[1:]), "invalid_span_id", id="span-id-with-space"),
    pytest.param(json_span(parentSpanId=TRACE), "invalid_parent_span_id", id="parent-id-32-hex"),
    pytest.param(json_span(name=None), "missing_name", id="name-missing"),
    pytest.param(json_span(name=""), "missing_name", id="name-empty"),
    pytest.param(json_span(name=["chat"]), "missing_name", id="name-not-a-string"),
    pytest.param(json_span(kind="SERVER"), "invalid_kind", id="kind-unknown-name"),
    pytest.param(json_span(kind=True), "invalid_kind", id="kind-bool"),
    pytest.param(json_span(startTimeUnixNano="-1"), "invalid_time", id="time-negative"),
    pytest.param(json_span(startTimeUnixNano="1e18"), "invalid_time", id="time-exponent-string"),
    pytest.param(json_span(endTimeUnixNano=2**64), "invalid_time", id="time-past-uint64"),
    pytest.param(json_span(endTimeUnixNano="١٢"), "invalid_time", id="time-non-ascii-digits"),
    pytest.param(
        json_span(startTimeUnixNano=str(2**63)), "invalid_time", id="time-past-datetime64"
    ),
    pytest.param(json_span(status="error"), "invalid_status", id="status-not-an-object"),
    pytest.param(json_span(status={"message": 3}), "invalid_status", id="status-message-number"),
    pytest.param(json_span(attributes={"k": "v"}), "invalid_attributes", id="attributes-object"),
    pytest.param(
        json_span(attributes=[{"key": "k", "value": {"intValue": "12.5"}}]),
        "invalid_attributes",
        id="int-value-fraction",
    ),
    pytest.param(
        json_span(attributes=[{"key": "k", "value": {"intValue": str(2**63)}}]),
        "invalid_attributes",
        id="int-value-past-int64",
    ),
    pytest.param(
        json_span(attributes=[{"key": "k", "value": {"stringValue": 5}}]),
        "invalid_attributes",
        id="string-value-number",
    ),
    pytest.param(
        json_span(attributes=[{"key": "k", "value": {"bytesValue": "not base64!"}}]),
        "invalid_attributes",
        id="bytes-value-not-base64",
    ),
    pytest.param(
        json_span(attributes=[{"key": 1, "value": {"stringValue": "v"}}]),
        "invalid_attributes",
        id="attribute-key-number",
    ),
    pytest.param(
        json_span(attributes=[{"key": "k", "value": {"arrayValue": {"values": {}}}}]),
        "invalid_attributes",
        id="array-values-object",
    ),
    pytest.param(
        json_span(
            attributes=[
                {"key": "k", "value": json.loads('{"arrayValue":{"values":[' * 40 + "]}}" * 40)}
            ]
        ),
        "invalid_attributes",
        id="values-nested-40-deep",
    ),
    pytest.param(json_span(events="x"), "invalid_event", id="events-not-an-array"),
    pytest.param(json_span(events=[{"name": 1}]), "invalid_event", id="event-name-number"),
    pytest.param(
        json_span(events=[{"name": "e", "timeUnixNano": str(2**63)}]),
        "invalid_event",
        id="event-time-past-datetime64",
    ),
    pytest.param("span", "malformed_span", id="span-not-an-object"),
]


@pytest.mark.parametrize(("bad", "reason"), BAD_JSON_SPANS)
def test_bad_json_span_is_dropped_and_counted_while_neighbours_survive(bad, reason):
    body = json_body(json_span("before"), bad, json_span("after"))
    result = decode_request(body, JSON)
    assert [span.name for span in result.spans] == ["before", "after"]
    assert (result.rejected, dict(result.reasons)) == (1, {reason: 1})
    assert "rejected 1 of 3 spans" in result.error_message
    assert reason in result.error_message


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        pytest.param(proto_span(trace_id=bytes(15)), "invalid_trace_id", id="trace-id-15-bytes"),
        pytest.param(proto_span(trace_id=bytes(16)), "invalid_trace_id", id="trace-id-all-zero"),
        pytest.param(proto_span(trace_id=b""), "invalid_trace_id", id="trace-id-missing"),
        pytest.param(proto_span(span_id=bytes(9)), "invalid_span_id", id="span-id-9-bytes"),
        pytest.param(proto_span(span_id=bytes(8)), "invalid_span_id", id="span-id-all-zero"),
        pytest.param(
            proto_span(parent_span_id=b"abc"), "invalid_parent_span_id", id="parent-id-3-bytes"
        ),
        pytest.param(proto_span(name=""), "missing_name", id="name-empty"),
        pytest.param(
            proto_span(start_time_unix_nano=2**63), "invalid_time", id="time-past-datetime64"
        ),
        pytest.param(
            proto_span(end_time_unix_nano=2**64 - 1), "invalid_time", id="end-time-uint64-max"
        ),
        pytest.param(
            proto_span(events=[Span.Event(name="e", time_unix_nano=2**63)]),
            "invalid_event",
            id="event-time-past-datetime64",
        ),
    ],
)
def test_bad_protobuf_span_is_dropped_and_counted_while_neighbours_survive(bad, reason):
    result = decode_request(proto_body(proto_span("before"), bad, proto_span("after")), PROTOBUF)
    assert [span.name for span in result.spans] == ["before", "after"]
    assert (result.rejected, dict(result.reasons)) == (1, {reason: 1})
    assert reason in result.error_message
    if reason.endswith("_id"):
        assert "32/16 hex characters" in result.error_message


@pytest.mark.parametrize(
    ("escaped", "repaired"),
    [
        pytest.param("a\ud800b", "a\ufffdb", id="lone-high-surrogate"),
        pytest.param("\udfff", "\ufffd", id="lone-low-surrogate"),
        pytest.param("\udc00\ud800", "\ufffd\ufffd", id="pair-in-the-wrong-order"),
        pytest.param("\ud83d\ude00", "\U0001f600", id="a-pair-is-one-character"),
    ],
)
def test_json_lone_surrogate_escapes_become_replacement_characters(escaped, repaired):
    value = {"key": "k" + escaped, "value": {"stringValue": escaped}}
    array = {"key": "list", "value": {"arrayValue": {"values": [{"stringValue": escaped}]}}}
    body = json_body(
        json_span("chat" + escaped, attributes=[value, array], status={"message": escaped})
    )
    assert b"\\u" in body  # json.dumps sent them as escapes
    span = only_span(decode_request(body, JSON))
    assert span.name == "chat" + repaired
    assert span.attributes == {"k" + repaired: repaired, "list": [repaired]}
    assert span.status_message == repaired
    span.name.encode()  # storable as UTF-8


def test_protobuf_zero_parent_is_a_root():
    body = proto_body(proto_span(parent_span_id=bytes(8)))
    assert only_span(decode_request(body, PROTOBUF)).parent_span_id == ""


@pytest.mark.parametrize(
    ("resource", "scope", "reason"),
    [
        pytest.param({"attributes": {"k": "v"}}, None, "invalid_resource", id="resource-attrs"),
        pytest.param("host", None, "invalid_resource", id="resource-not-an-object"),
        pytest.param(None, {"name": 5}, "invalid_scope", id="scope-name-number"),
        pytest.param(None, ["lib"], "invalid_scope", id="scope-not-an-object"),
    ],
)
def test_bad_resource_or_scope_drops_only_its_own_spans(resource, scope, reason):
    bad = json.loads(json_body(json_span("a"), json_span("b"), resource=resource, scope=scope))
    good = json.loads(json_body(json_span("c")))
    body = {"resourceSpans": bad["resourceSpans"] + good["resourceSpans"]}
    result = decode_request(json.dumps(body).encode(), JSON)
    assert [span.name for span in result.spans] == ["c"]
    assert dict(result.reasons) == {reason: 2}


@pytest.mark.parametrize(
    ("media", "body"),
    [
        pytest.param(PROTOBUF, proto_body(*(proto_span(f"s{i}") for i in range(5))), id="protobuf"),
        pytest.param(JSON, json_body(*(json_span(f"s{i}") for i in range(5))), id="json"),
    ],
)
def test_spans_past_the_request_limit_are_rejected_as_too_many(media, body):
    result = decode_request(body, media, max_spans=3)
    assert [span.name for span in result.spans] == ["s0", "s1", "s2"]
    assert dict(result.reasons) == {"too_many_spans": 2}
    assert "at most 3 spans" in result.error_message


# --- bodies that are not requests ----------------------------------------------------------------

VALID_PROTO = proto_body(proto_span("a"), proto_span("b", attributes=[_kv("k", PROTO_KVLIST)]))
VALID_JSON = json_body(
    json_span("a"), json_span("b", attributes=[{"key": "k", "value": JSON_KVLIST}])
)


@pytest.mark.parametrize(
    ("media", "body"),
    [
        pytest.param(PROTOBUF, VALID_PROTO[:-1], id="protobuf-truncated"),
        pytest.param(PROTOBUF, b"\xff\xff\xff\xff", id="protobuf-garbage"),
        pytest.param(PROTOBUF, VALID_JSON, id="json-sent-as-protobuf"),
        pytest.param(JSON, VALID_PROTO, id="protobuf-sent-as-json"),
        pytest.param(JSON, VALID_JSON[:-1], id="json-truncated"),
        pytest.param(JSON, b"", id="json-empty"),
        pytest.param(JSON, b"\xff\xfe\xfd", id="json-not-utf8"),
        pytest.param(JSON, b"[]", id="json-array"),
        pytest.param(JSON, b"null", id="json-null"),
        pytest.param(JSON, b'"resourceSpans"', id="json-string"),
        pytest.param(JSON, b"[" * 100_000 + b"]" * 100_000, id="json-nested-too-deep"),
        pytest.param(JSON, b'{"resourceSpans": {}}', id="resource-spans-object"),
        pytest.param(JSON, b'{"resourceSpans": [1]}', id="resource-spans-item-number"),
        pytest.param(JSON, b'{"resourceSpans": [{"scopeSpans": {}}]}', id="scope-spans-object"),
        pytest.param(JSON, b'{"resourceSpans": [{"scopeSpans": ["x"]}]}', id="scope-item-string"),
        pytest.param(
            JSON, b'{"resourceSpans": [{"scopeSpans": [{"spans": {}}]}]}', id="spans-object"
        ),
    ],
)
def test_undecodable_body_is_a_decode_error(media, body):
    with pytest.raises(OtlpDecodeError):
        decode_request(body, media)


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        pytest.param("application/json; charset=utf-8", VALID_JSON, id="json-with-charset"),
        pytest.param("Application/JSON", VALID_JSON, id="json-any-case"),
        pytest.param("application/x-protobuf", VALID_PROTO, id="protobuf"),
        pytest.param("application/protobuf", VALID_PROTO, id="protobuf-without-x"),
    ],
)
def test_supported_content_types(content_type, body):
    assert len(decode_request(body, content_type).spans) == 2


@pytest.mark.parametrize(
    "content_type", ["text/plain", "", "application/grpc", "application/jsonl", "json"]
)
def test_other_content_types_are_unsupported(content_type):
    with pytest.raises(UnsupportedMediaType):
        decode_request(VALID_JSON, content_type)


# --- decompression ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [
        pytest.param(None, lambda b: b, id="none"),
        pytest.param("", lambda b: b, id="empty"),
        pytest.param("identity", lambda b: b, id="identity"),
        pytest.param("gzip", gzip.compress, id="gzip"),
        pytest.param("x-gzip", gzip.compress, id="x-gzip"),
        pytest.param(" GZIP ", gzip.compress, id="gzip-any-case"),
        pytest.param(
            "gzip", lambda b: gzip.compress(b[:9]) + gzip.compress(b[9:]), id="multi-member"
        ),
    ],
)
def test_decompress_undoes_the_encoding(encoding, encode):
    assert decompress(encode(VALID_PROTO), encoding, limit=MiB) == VALID_PROTO


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(gzip.compress(VALID_PROTO)[:-5], id="truncated"),
        pytest.param(b"\x1f\x8b" + b"\x00" * 20, id="corrupt-header"),
        pytest.param(VALID_PROTO, id="not-gzip"),
        pytest.param(gzip.compress(VALID_PROTO) + b"trailing", id="trailing-garbage"),
    ],
)
def test_corrupt_gzip_is_a_decode_error(body):
    with pytest.raises(OtlpDecodeError):
        decompress(body, "gzip", limit=MiB)


@pytest.mark.parametrize("encoding", ["br", "deflate", "zstd", "gzip, br", "snappy"])
def test_other_encodings_are_unsupported(encoding):
    with pytest.raises(UnsupportedEncoding):
        decompress(VALID_PROTO, encoding, limit=MiB)


@pytest.mark.parametrize(
    ("encoding", "encode"),
    [
        pytest.param(None, lambda b: b, id="identity"),
        pytest.param("gzip", gzip.compress, id="gzip"),
    ],
)
def test_body_size_limit_is_inclusive(encoding, encode):
    body = b"x" * 1000
    assert decompress(encode(body), encoding, limit=1000) == body
    with pytest.raises(PayloadTooLarge):
        decompress(encode(body), encoding, limit=999)


@pytest.fixture(scope="module")
def gzip_bomb() -> bytes:
    """200 MiB of zeros, gzipped (about 200 KB), built without holding the 200 MiB."""
    deflater = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = bytes(MiB)
    return b"".join([*(deflater.compress(zeros) for _ in range(200)), deflater.flush()])


def test_gzip_bomb_stops_at_the_limit_without_inflating_it_all(gzip_bomb):
    limit = 64 * MiB
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(PayloadTooLarge):
            decompress(gzip_bomb, "gzip", limit=limit)
        elapsed = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(gzip_bomb) < MiB
    assert peak < 2 * limit + 2 * MiB  # the output so far, never the 200 MiB
    assert elapsed < 5


# --- responses ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rejected", "message", "expected"),
    [
        pytest.param(0, "", {}, id="clean-export-is-empty"),
        pytest.param(
            2,
            "rejected 2 of 5 spans",
            {"partialSuccess": {"rejectedSpans": "2", "errorMessage": "rejected 2 of 5 spans"}},
            id="partial-success",
        ),
        pytest.param(
            0, "warning", {"partialSuccess": {"errorMessage": "warning"}}, id="warning-only"
        ),
    ],
)
def test_encode_response_parses_back_in_both_media_types(rejected, message, expected):
    as_json = encode_response("application/json; charset=utf-8", rejected, message)
    assert json.loads(as_json) == expected
    parsed = ParseDict(json.loads(as_json), ExportTraceServiceResponse())
    as_proto = ExportTraceServiceResponse.FromString(encode_response(PROTOBUF, rejected, message))
    assert as_proto == parsed
    assert as_proto.partial_success.rejected_spans == rejected
    assert as_proto.partial_success.error_message == message
    assert as_proto.HasField("partial_success") == bool(expected)


def test_encode_status_parses_back_in_both_media_types():
    from google.rpc.status_pb2 import Status as RpcStatus  # type: ignore[import-untyped]

    assert json.loads(encode_status(JSON, 3, "bad body")) == {"code": 3, "message": "bad body"}
    status = RpcStatus.FromString(encode_status(PROTOBUF, 3, "bad body"))
    assert (status.code, status.message) == (3, "bad body")


@pytest.mark.parametrize(
    ("content_type", "expected"),
    [
        ("application/x-protobuf", PROTOBUF),
        ("application/protobuf", PROTOBUF),
        ("application/json; charset=utf-8", JSON),
        ("text/plain", JSON),
    ],
)
def test_response_content_type_follows_the_request(content_type, expected):
    assert response_content_type(content_type) == expected


@pytest.mark.parametrize(
    ("exc", "status"),
    [
        pytest.param(OtlpDecodeError("x"), 400, id="bad-body-400"),
        pytest.param(PayloadTooLarge("x"), 413, id="too-large-413"),
        pytest.param(UnsupportedMediaType("x"), 415, id="media-type-415"),
        pytest.param(UnsupportedEncoding("x"), 415, id="encoding-415"),
        pytest.param(RuntimeError("x"), None, id="anything-else-is-not-the-senders-fault"),
        pytest.param(ValueError("x"), None, id="plain-value-error-too"),
    ],
)
def test_http_status_for_each_edge_error(exc, status):
    if status is None:  # propagates as a server error, not answered as a refusal
        assert not isinstance(exc, Refusal)
    else:
        assert isinstance(exc, Refusal) and isinstance(exc, FactLedgerError)
        assert exc.outcome.http_status == status


# --- properties -------------------------------------------------------------------------------

_PROPERTY = settings(
    max_examples=200,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
_MEDIA = st.sampled_from([PROTOBUF, JSON])


def _decodes_or_refuses(body: bytes, media: str) -> DecodeResult | None:
    try:
        return decode_request(body, media)
    except OtlpDecodeError:
        return None


@_PROPERTY
@given(st.binary(max_size=512), _MEDIA)
def test_random_bytes_decode_or_raise_a_decode_error(body, media):
    _decodes_or_refuses(body, media)


@_PROPERTY
@given(st.integers(min_value=0), _MEDIA)
def test_truncated_bodies_decode_or_raise_a_decode_error(cut, media):
    valid = VALID_PROTO if media == PROTOBUF else VALID_JSON
    result = _decodes_or_refuses(valid[: cut % len(valid)], media)
    assert result is None or len(result.spans) + result.rejected <= 2


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)
_any_value_keys = st.sampled_from(
    [
        "stringValue",
        "boolValue",
        "intValue",
        "doubleValue",
        "bytesValue",
        "arrayValue",
        "kvlistValue",
        "values",
        "key",
        "value",
    ]
)
_otlpish = st.recursive(
    _json_values,
    lambda inner: st.dictionaries(_any_value_keys, inner, max_size=3) | st.lists(inner, max_size=3),
    max_leaves=12,
)
_span_fields = st.sampled_from(
    [
        "traceId",
        "spanId",
        "parentSpanId",
        "name",
        "kind",
        "startTimeUnixNano",
        "endTimeUnixNano",
        "status",
        "attributes",
        "events",
        "trace_id",
    ]
)


@_PROPERTY
@given(st.dictionaries(_span_fields, _otlpish, max_size=4), _otlpish, _otlpish)
def test_json_span_with_any_field_values_is_kept_or_dropped_never_raised(fields, resource, scope):
    span = json_span(**fields)
    document = json.loads(json_body(span, json_span("neighbour")))
    document["resourceSpans"][0]["resource"] = {"attributes": [{"key": "k", "value": resource}]}
    document["resourceSpans"][0]["scopeSpans"][0]["scope"] = scope
    result = decode_request(json.dumps(document).encode(), JSON)
    assert len(result.spans) + result.rejected == 2
    assert result.rejected == sum(result.reasons.values())


@_PROPERTY
@given(st.binary(max_size=256), st.sampled_from(["gzip", None]))
def test_random_bytes_decompress_or_raise_an_edge_error(body, encoding):
    try:
        out = decompress(body, encoding, limit=4096)
    except (OtlpDecodeError, PayloadTooLarge):
        return
    assert len(out) <= 4096
