"""POST /v1/traces against a real service process: the OTLP status-code table, and a
property test that random and truncated bodies never get a 500 or kill the service."""

from __future__ import annotations

import gzip
import json
import re
import time
from collections.abc import Iterator
from typing import cast

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from factledger.collector.metric_catalogue import CATALOGUE
from factledger.service_process import ServiceProcess

TOKEN = "receiver-test-token-0123456789"
LIMIT = 1024 * 1024
TRACE = "5b8efff798038103d269b633813fc60c"
NOW_NS = time.time_ns()


def otlp_json(spans: list[dict[str, object]]) -> bytes:
    return json.dumps(
        {
            "resourceSpans": [
                {
                    "resource": {
                        "attributes": [{"key": "service.name", "value": {"stringValue": "svc"}}]
                    },
                    "scopeSpans": [{"scope": {"name": "test"}, "spans": spans}],
                }
            ]
        }
    ).encode()


def span(span_id: str, trace_id: str = TRACE, name: str = "chat gpt-4o") -> dict[str, object]:
    return {
        "traceId": trace_id,
        "spanId": span_id,
        "name": name,
        "kind": 3,
        "startTimeUnixNano": str(NOW_NS),
        "endTimeUnixNano": str(NOW_NS + 1_000_000_000),
        "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}],
    }


GOOD_JSON = otlp_json([span("eee19b7ec3c1b174")])
GOOD_PROTO = ExportTraceServiceRequest().SerializeToString()
AUTH = {"Authorization": f"Bearer {TOKEN}"}
JSON = {"Content-Type": "application/json", **AUTH}
PROTO = {"Content-Type": "application/x-protobuf", **AUTH}


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    env = {
        "FACTLEDGER_INGEST_TOKEN": TOKEN,
        "FACTLEDGER_MAX_BODY_BYTES": str(LIMIT),
        "FACTLEDGER_API_OPEN": "1",  # /metrics is read without a token
    }
    with ServiceProcess(tmp_path_factory.mktemp("receiver"), env) as svc:
        yield svc


CASES = [
    pytest.param(JSON, GOOD_JSON, 200, id="json-accepted"),
    pytest.param(PROTO, GOOD_PROTO, 200, id="protobuf-accepted"),
    pytest.param(
        {**JSON, "Content-Encoding": "gzip"}, gzip.compress(GOOD_JSON), 200, id="gzip-json"
    ),
    pytest.param(
        JSON,
        otlp_json([span("eee19b7ec3c1b175"), span("not-hex"), span("eee19b7ec3c1b176")]),
        200,
        id="partial-success-bad-span-dropped",
    ),
    pytest.param(JSON, b"{not json", 400, id="undecodable-json"),
    pytest.param(PROTO, b"\xff\xff\xff\xff", 400, id="undecodable-protobuf"),
    pytest.param({**JSON, "Content-Encoding": "gzip"}, b"not gzip at all", 400, id="corrupt-gzip"),
    pytest.param({"Content-Type": "application/json"}, GOOD_JSON, 401, id="missing-token"),
    pytest.param(
        {"Content-Type": "application/json", "Authorization": "Bearer wrong"},
        GOOD_JSON,
        401,
        id="wrong-token",
    ),
    pytest.param(JSON, b" " * (LIMIT + 1), 413, id="body-over-limit"),
    pytest.param(
        {**JSON, "Content-Encoding": "gzip"},
        gzip.compress(b" " * (8 * LIMIT)),
        413,
        id="gzip-bomb",
    ),
    pytest.param({"Content-Type": "text/plain", **AUTH}, GOOD_JSON, 415, id="media-type"),
    pytest.param({**JSON, "Content-Encoding": "br"}, GOOD_JSON, 415, id="content-encoding"),
]


@pytest.mark.parametrize(("headers", "body", "status"), CASES)
def test_status_codes(
    service: ServiceProcess, headers: dict[str, str], body: bytes, status: int
) -> None:
    response = httpx.post(f"{service.url}/v1/traces", headers=headers, content=body, timeout=30)
    assert response.status_code == status, response.text
    media = headers["Content-Type"]
    if media in ("application/json", "application/x-protobuf"):
        assert response.headers["content-type"].startswith(media)


def test_partial_success_says_how_many_and_why(service: ServiceProcess) -> None:
    body = otlp_json([span("aaa19b7ec3c1b175"), span("xyz"), span("bbb19b7ec3c1b176")])
    response = httpx.post(f"{service.url}/v1/traces", headers=JSON, content=body)
    partial = response.json()["partialSuccess"]
    assert int(partial["rejectedSpans"]) == 1
    assert partial["errorMessage"]


def test_protobuf_reply_parses(service: ServiceProcess) -> None:
    response = httpx.post(f"{service.url}/v1/traces", headers=PROTO, content=GOOD_PROTO)
    ExportTraceServiceResponse.FromString(response.content)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    media=st.sampled_from(["application/json", "application/x-protobuf"]),
    body=st.one_of(
        st.binary(max_size=2048),
        st.integers(0, len(GOOD_JSON)).map(lambda n: GOOD_JSON[:n]),
        st.builds(
            lambda spans: otlp_json(spans),
            st.lists(
                st.fixed_dictionaries(
                    {"traceId": st.text(max_size=40), "spanId": st.text(max_size=20)},
                    optional={"name": st.text(max_size=10), "kind": st.integers(-5, 10)},
                ),
                max_size=4,
            ),
        ),
    ),
)
def test_random_bodies_never_500(service: ServiceProcess, media: str, body: bytes) -> None:
    response = httpx.post(
        f"{service.url}/v1/traces", headers={**AUTH, "Content-Type": media}, content=body
    )
    assert response.status_code in (200, 400), response.text
    assert httpx.get(f"{service.url}/healthz").status_code == 200


def test_metrics_count_drops_by_reason(service: ServiceProcess) -> None:
    text = httpx.get(f"{service.url}/metrics").text
    assert "factledger_spans_received_total" in text
    assert 'factledger_spans_dropped_total{reason="' in text


def test_spans_older_than_retention_are_refused_and_reported(service: ServiceProcess) -> None:
    old = span("ccc19b7ec3c1b177")
    old["startTimeUnixNano"] = "1577836800000000000"  # 2020-01-01, far past the retention
    response = httpx.post(f"{service.url}/v1/traces", headers=JSON, content=otlp_json([old]))
    assert response.status_code == 200
    partial = response.json()["partialSuccess"]
    assert int(partial["rejectedSpans"]) == 1
    assert "retention" in partial["errorMessage"]


def test_a_request_over_the_backlog_bound_is_refused_for_good_not_counted_as_dropped(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """More spans than FACTLEDGER_QUEUE_SPANS could never be taken, however long the client
    retries: a 413 naming the bound and its setting, counted as refused, not dropped."""
    env = {
        "FACTLEDGER_INGEST_TOKEN": TOKEN,
        "FACTLEDGER_QUEUE_SPANS": "3",
        "FACTLEDGER_API_OPEN": "1",
    }
    with ServiceProcess(tmp_path_factory.mktemp("bound"), env) as svc:
        ids = [f"ddd19b7ec3c1b1{i:02x}" for i in range(5)]
        response = httpx.post(
            f"{svc.url}/v1/traces", headers=JSON, content=otlp_json([span(i) for i in ids])
        )
        assert response.status_code == 413, response.text
        assert "Retry-After" not in response.headers
        message = response.json()["message"]
        assert "5 spans" in message and "3" in message and "FACTLEDGER_QUEUE_SPANS" in message
        fits = otlp_json([span(i) for i in ids[:2]])
        assert httpx.post(f"{svc.url}/v1/traces", headers=JSON, content=fits).status_code == 200
        text = httpx.get(f"{svc.url}/metrics").text
        refused = 'factledger_requests_refused_total{reason="too_many_spans",transport="http"} 1'
        assert refused in text
        assert 'factledger_spans_refused_total{reason="too_many_spans"} 5' in text
        assert 'factledger_spans_dropped_total{reason="too_many_spans"}' not in text


def otlp_logs_json(records: list[dict[str, object]]) -> bytes:
    return json.dumps(
        {"resourceLogs": [{"scopeLogs": [{"scope": {"name": "test"}, "logRecords": records}]}]}
    ).encode()


def log_record(span_id: str, trace_id: str = TRACE) -> dict[str, object]:
    return {
        "traceId": trace_id,
        "spanId": span_id,
        "timeUnixNano": str(NOW_NS),
        "body": {"stringValue": '{"role": "user", "content": "hi"}'},
        "attributes": [{"key": "event.name", "value": {"stringValue": "gen_ai.user.message"}}],
    }


GOOD_LOGS = otlp_logs_json([log_record("eee19b7ec3c1b174")])
LOG_CASES = [
    pytest.param(JSON, GOOD_LOGS, 200, id="json-accepted"),
    pytest.param(PROTO, ExportLogsServiceRequest().SerializeToString(), 200, id="protobuf"),
    pytest.param(
        {**JSON, "Content-Encoding": "gzip"}, gzip.compress(GOOD_LOGS), 200, id="gzip-json"
    ),
    pytest.param(JSON, b"{not json", 400, id="undecodable-json"),
    pytest.param(PROTO, b"\xff\xff\xff\xff", 400, id="undecodable-protobuf"),
    pytest.param({"Content-Type": "application/json"}, GOOD_LOGS, 401, id="missing-token"),
    pytest.param(JSON, b" " * (LIMIT + 1), 413, id="body-over-limit"),
    pytest.param(
        {**JSON, "Content-Encoding": "gzip"},
        gzip.compress(b" " * (8 * LIMIT)),
        413,
        id="gzip-bomb",
    ),
    pytest.param({"Content-Type": "text/plain", **AUTH}, GOOD_LOGS, 415, id="media-type"),
    pytest.param({**JSON, "Content-Encoding": "br"}, GOOD_LOGS, 415, id="content-encoding"),
]


@pytest.mark.parametrize(("headers", "body", "status"), LOG_CASES)
def test_logs_status_codes(
    service: ServiceProcess, headers: dict[str, str], body: bytes, status: int
) -> None:
    response = httpx.post(f"{service.url}/v1/logs", headers=headers, content=body, timeout=30)
    assert response.status_code == status, response.text
    media = headers["Content-Type"]
    if media in ("application/json", "application/x-protobuf"):
        assert response.headers["content-type"].startswith(media)
    if status == 200 and media == "application/x-protobuf":
        ExportLogsServiceResponse.FromString(response.content)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    media=st.sampled_from(["application/json", "application/x-protobuf"]),
    body=st.one_of(
        st.binary(max_size=2048),
        st.integers(0, len(GOOD_LOGS)).map(lambda n: GOOD_LOGS[:n]),
        st.builds(
            lambda records: otlp_logs_json(records),
            st.lists(
                st.fixed_dictionaries(
                    {"traceId": st.text(max_size=40), "spanId": st.text(max_size=20)},
                    optional={
                        "body": st.one_of(
                            st.none(),
                            st.dictionaries(st.sampled_from(["stringValue", "x"]), st.text()),
                        ),
                        "eventName": st.one_of(st.text(max_size=10), st.integers()),
                    },
                ),
                max_size=4,
            ),
        ),
    ),
)
def test_random_log_bodies_never_500(service: ServiceProcess, media: str, body: bytes) -> None:
    response = httpx.post(
        f"{service.url}/v1/logs", headers={**AUTH, "Content-Type": media}, content=body
    )
    assert response.status_code in (200, 400), response.text


def _families(scrape: str) -> dict[str, str]:
    """Each family's TYPE, and every sample name, as the scrape gives them."""
    found = dict(re.findall(r"^# TYPE (\S+) (\S+)$", scrape, re.M))
    for name in re.findall(r"^([a-z_]+)(?:\{| )", scrape, re.M):
        family = re.sub(r"_(bucket|sum|count)$", "", name) if name not in found else name
        assert family in found, f"{name} has samples but no TYPE line"
    return found


def test_every_family_is_declared_and_on_the_scrape_from_start_up(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """A fresh service shows every declared family (refusal reasons at 0); after refusals
    of every kind the receiver decides, every name and reason it shows is still declared."""
    env = {
        "FACTLEDGER_INGEST_TOKEN": TOKEN,
        "FACTLEDGER_MAX_BODY_BYTES": str(LIMIT),
        "FACTLEDGER_API_OPEN": "1",
    }
    with ServiceProcess(tmp_path_factory.mktemp("catalogue"), env) as svc:
        first = httpx.get(f"{svc.url}/metrics").text
        assert _families(first) == {family.name: family.type for family in CATALOGUE}
        for family in CATALOGUE:  # the reject-rate gauges name the alert window in theirs
            assert re.search(rf"^# HELP {family.name} \S.*$", first, re.M), family.name
        for reason in CATALOGUE["factledger_requests_refused_total"].known["reason"]:
            for transport in ("grpc", "http"):
                labels = f'reason="{reason}",transport="{transport}"'
                assert f"factledger_requests_refused_total{{{labels}}} 0\n" in first
        assert "factledger_bodies_in_flight_bytes 0\n" in first
        for case in CASES:
            headers, body, _ = cast(tuple[dict[str, str], bytes, int], case.values)
            httpx.post(f"{svc.url}/v1/traces", headers=headers, content=body, timeout=30)
        after = httpx.get(f"{svc.url}/metrics").text
        assert set(_families(after)) == set(_families(first))
        refused = dict(
            re.findall(
                r'^factledger_requests_refused_total\{reason="(\w+)",transport="http"\} (\d+)$',
                after,
                re.M,
            )
        )
        assert set(refused) == set(CATALOGUE["factledger_requests_refused_total"].known["reason"])
        assert {r for r, n in refused.items() if int(n)} == {"400", "401", "413", "415"}
        assert refused["401"] == "2" and refused["415"] == "2"
