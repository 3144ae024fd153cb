"""Resource limits of the HTTP edge against a real service process: clients that stall
lose their connection within the timeouts while others are served, and request bodies in
flight are bounded by bytes, counted as they arrive (503 + Retry-After for the request
past its share of the bound, its body read to the end so the client reads the status)."""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from factledger.service_process import ServiceProcess

TOKEN = "limits-test-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
JSON = {"Content-Type": "application/json", **AUTH}
NOW_NS = time.time_ns()
IN_FLIGHT = 300_000
"""The bound on body bytes in flight: two 200 kB bodies do not fit, one does."""
BODY = 200_000
HALF = IN_FLIGHT // 2
"""A request's fair share of the bound beside one other request."""


def otlp_json(span_id: str, size: int = 0) -> bytes:
    """One valid span, padded with an attribute to `size` bytes (about)."""
    body = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": "5b8efff798038103d269b633813fc60c",
                                "spanId": span_id,
                                "name": "chat",
                                "startTimeUnixNano": str(NOW_NS),
                                "endTimeUnixNano": str(NOW_NS + 1),
                                "attributes": [
                                    {"key": "pad", "value": {"stringValue": "x" * size}}
                                ],
                            }
                        ]
                    }
                ]
            }
        ]
    }
    return json.dumps(body).encode()


def head(length: int, path: str = "/v1/traces") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {TOKEN}\r\nContent-Length: {length}\r\n\r\n"
    ).encode()


def connect(svc: ServiceProcess) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", svc.port))
    sock.settimeout(20)  # far past every timeout of the service under test
    return sock


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes; socket.timeout if it never does."""
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


def gauge(svc: ServiceProcess, name: str) -> float:
    text = httpx.get(f"{svc.url}/metrics").text
    match = re.search(rf"^{name} (\S+)$", text, re.MULTILINE)
    return float(match.group(1)) if match else 0.0


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    env = {
        "FACTLEDGER_INGEST_TOKEN": TOKEN,
        "FACTLEDGER_API_OPEN": "1",
        "FACTLEDGER_HEADER_TIMEOUT_SECONDS": "1",
        "FACTLEDGER_BODY_TIMEOUT_SECONDS": "2",
        "FACTLEDGER_IDLE_TIMEOUT_SECONDS": "1",
        "FACTLEDGER_MAX_BODIES_IN_FLIGHT_BYTES": str(IN_FLIGHT),
    }
    with ServiceProcess(tmp_path_factory.mktemp("limits"), env) as svc:
        yield svc


def test_a_client_that_stalls_in_its_body_gets_408_and_loses_the_connection(
    service: ServiceProcess,
) -> None:
    body = otlp_json("eee19b7ec3c1b174")
    with connect(service) as stalled:
        stalled.sendall(head(len(body)) + body[:10])
        # Others are served while it stalls.
        response = httpx.post(f"{service.url}/v1/traces", headers=JSON, content=body)
        assert response.status_code == 200
        started = time.monotonic()
        reply = read_until_closed(stalled)
    assert reply.startswith(b"HTTP/1.1 408"), reply[:200]
    assert time.monotonic() - started < 10
    assert httpx.get(f"{service.url}/healthz").status_code == 200


@pytest.mark.parametrize(
    "sent",
    [
        pytest.param(b"", id="nothing-sent"),
        pytest.param(b"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\n", id="half-the-headers"),
    ],
)
def test_a_client_that_stalls_in_its_headers_loses_the_connection(
    service: ServiceProcess, sent: bytes
) -> None:
    with connect(service) as stalled:
        stalled.sendall(sent)
        assert httpx.get(f"{service.url}/healthz").status_code == 200
        assert read_until_closed(stalled) == b""


def test_a_second_request_on_a_kept_alive_connection_that_stalls_is_closed(
    service: ServiceProcess,
) -> None:
    body = otlp_json("eee19b7ec3c1b175")
    with connect(service) as sock:
        sock.sendall(head(len(body)) + body + b"POST /v1/traces HTTP/1.1\r\n")
        reply = read_until_closed(sock)
    assert reply.startswith(b"HTTP/1.1 200"), reply[:200]
    assert reply.count(b"HTTP/1.1") == 1


def test_bodies_in_flight_are_bounded_and_the_request_past_its_share_is_refused(
    service: ServiceProcess,
) -> None:
    first = otlp_json("aaa19b7ec3c1b171", BODY)
    second = otlp_json("aaa19b7ec3c1b172", BODY)
    with connect(service) as holder:
        holder.sendall(head(len(first)) + first[:HALF])
        deadline = time.monotonic() + 20
        while gauge(service, "factledger_bodies_in_flight_bytes") < HALF:
            assert time.monotonic() < deadline, "the first body was never counted in flight"
        # Its share is half the bound: past it, with no room left, it is refused, and
        # the holder, within its own share, keeps its bytes.
        with connect(service) as refused:
            refused.sendall(head(len(second)) + second)
            reply = read_until_closed(refused)
        assert reply.startswith(b"HTTP/1.1 503"), reply[:300]
        assert b"retry-after: 2" in reply.lower()
        # A small body fits beside the first.
        small = otlp_json("aaa19b7ec3c1b173")
        assert httpx.post(f"{service.url}/v1/traces", headers=JSON, content=small).is_success
        holder.sendall(first[HALF:])
        assert read_until_closed_or_reply(holder).startswith(b"HTTP/1.1 200")
    response = httpx.post(f"{service.url}/v1/traces", headers=JSON, content=second)
    assert response.status_code == 200, response.text
    text = httpx.get(f"{service.url}/metrics").text
    assert 'factledger_requests_refused_total{reason="bodies_in_flight",transport="http"} 1' in text
    assert gauge(service, "factledger_bodies_in_flight_bytes") == 0


def read_until_closed_or_reply(sock: socket.socket) -> bytes:
    """The first reply on a kept-alive connection (the server need not close it)."""
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = sock.recv(65536)
        if not chunk:
            break
        received += chunk
    return received


def test_logs_share_the_limits_of_traces(service: ServiceProcess) -> None:
    """/v1/logs is the same receiver: a stalled body is a 408, and a logs body that does
    not fit beside a traces body in flight is refused (503, Retry-After)."""
    body = otlp_json("bbb19b7ec3c1b171")
    with connect(service) as stalled:
        stalled.sendall(head(len(body), "/v1/logs") + body[:10])
        assert read_until_closed(stalled).startswith(b"HTTP/1.1 408")
    first = otlp_json("bbb19b7ec3c1b172", BODY)
    with connect(service) as holder:
        holder.sendall(head(len(first)) + first[:HALF])
        deadline = time.monotonic() + 20
        while gauge(service, "factledger_bodies_in_flight_bytes") < HALF:
            assert time.monotonic() < deadline, "the first body was never counted in flight"
        with connect(service) as refused:
            refused.sendall(head(BODY, "/v1/logs") + b"x" * BODY)
            reply = read_until_closed(refused)
        assert reply.startswith(b"HTTP/1.1 503"), reply[:300]
        assert b"retry-after: 2" in reply.lower()
        holder.sendall(first[HALF:])
        assert read_until_closed_or_reply(holder).startswith(b"HTTP/1.1 200")
    assert gauge(service, "factledger_bodies_in_flight_bytes") == 0
