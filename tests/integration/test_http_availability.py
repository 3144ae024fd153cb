"""No single client and no idle crowd can take the service from everyone else, against a
real `factledger serve` on loopback: idle sockets do not use up the connection cap,
a body trickled slowly holds only the bytes it has sent, one request cannot hold more
than its fair share of the bodies in flight while another waits, every route bounds
its body, and a request refused before its body was read is answered, not reset."""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import requests

from factledger.service_process import ServiceProcess

ALPHA, BETA = "alpha-token-0123456789abcdef", "beta-token-0123456789abcdef"
MiB = 1024 * 1024
MAX_BODY = 16 * MiB
IN_FLIGHT = 4 * MiB
NOW_NS = time.time_ns()


def otlp_json(span_id: str, size: int = 0) -> bytes:
    """One valid span, padded with an attribute to about `size` bytes."""
    span = {
        "traceId": "6c8efff798038103d269b633813fc60c",
        "spanId": span_id,
        "name": "chat",
        "startTimeUnixNano": str(NOW_NS),
        "endTimeUnixNano": str(NOW_NS + 1),
        "attributes": [{"key": "pad", "value": {"stringValue": "x" * size}}],
    }
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).encode()


def headers(token: str, media: str = "application/json") -> dict[str, str]:
    return {"Content-Type": media, "Authorization": f"Bearer {token}"}


def head(token: str, length: int, path: str = "/v1/traces") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {token}\r\nContent-Length: {length}\r\n\r\n"
    ).encode()


def connect(svc: ServiceProcess) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", svc.port))
    sock.settimeout(20)
    return sock


def read_reply(sock: socket.socket) -> bytes:
    """What the server sends until its first reply's headers are in, or it closes."""
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = sock.recv(65536)
        if not chunk:
            break
        received += chunk
    return received


def gauge(svc: ServiceProcess, name: str) -> float:
    text = httpx.get(f"{svc.url}/metrics").text
    match = re.search(rf"^{name} (\S+)$", text, re.MULTILINE)
    return float(match.group(1)) if match else 0.0


def wait_for_gauge(svc: ServiceProcess, name: str, at_least: float) -> None:
    deadline = time.monotonic() + 20
    while gauge(svc, name) < at_least:
        assert time.monotonic() < deadline, f"{name} never reached {at_least}"
        time.sleep(0.02)


def peak_rss_bytes(pid: int) -> int:
    """The process's peak resident set (VmHWM)."""
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"^VmHWM:\s+(\d+) kB$", status, re.MULTILINE)
    assert match, status
    return int(match.group(1)) * 1024


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    env = {
        "FACTLEDGER_INGEST_TOKENS": f"alpha:{ALPHA},beta:{BETA}",
        "FACTLEDGER_API_OPEN": "1",
        # Longer than any test here: an idle socket is only closed to make room.
        "FACTLEDGER_HEADER_TIMEOUT_SECONDS": "60",
        "FACTLEDGER_IDLE_TIMEOUT_SECONDS": "60",
        "FACTLEDGER_BODY_TIMEOUT_SECONDS": "60",
        "FACTLEDGER_MAX_BODY_BYTES": str(MAX_BODY),
        "FACTLEDGER_MAX_BODIES_IN_FLIGHT_BYTES": str(IN_FLIGHT),
    }
    with ServiceProcess(tmp_path_factory.mktemp("availability"), env) as svc:
        yield svc


def test_a_thousand_idle_connections_leave_ingest_and_readiness_served(
    service: ServiceProcess,
) -> None:
    idle = [socket.create_connection(("127.0.0.1", service.port)) for _ in range(1000)]
    try:
        time.sleep(0.5)  # every one accepted by the server
        body = otlp_json("a1a19b7ec3c1b171")
        response = httpx.post(f"{service.url}/v1/traces", headers=headers(ALPHA), content=body)
        assert response.status_code == 200, response.text
        assert httpx.get(f"{service.url}/readyz").status_code == 200
        assert httpx.get(f"{service.url}/healthz").status_code == 200
    finally:
        for sock in idle:
            sock.close()


def test_a_trickled_body_holds_only_the_bytes_it_has_sent(service: ServiceProcess) -> None:
    """A body declared just under the limit and sent a few bytes at a time does not keep
    another tenant's export out."""
    with connect(service) as trickler:
        trickler.sendall(head(ALPHA, MAX_BODY - 1) + b'{"resourceSpans"')
        time.sleep(0.3)
        for index in range(3):
            body = otlp_json(f"b1b19b7ec3c1b17{index}", 10_000)
            response = httpx.post(f"{service.url}/v1/traces", headers=headers(BETA), content=body)
            assert response.status_code == 200, response.text
        assert gauge(service, "factledger_bodies_in_flight_bytes") < 1000


def test_one_request_past_its_fair_share_gives_way_to_another_tenant(
    service: ServiceProcess,
) -> None:
    """A stalled request holding most of the bodies in flight is refused (503, retry)
    when another tenant's export needs the room, rather than the other way round."""
    held = 3 * MiB
    with connect(service) as hog:
        hog.sendall(head(ALPHA, MAX_BODY - 1) + b"x" * held)
        wait_for_gauge(service, "factledger_bodies_in_flight_bytes", held)
        body = otlp_json("c1c19b7ec3c1b171", 2 * MiB)
        response = httpx.post(f"{service.url}/v1/traces", headers=headers(BETA), content=body)
        assert response.status_code == 200, response.text
        reply = read_reply(hog)
    assert reply.startswith(b"HTTP/1.1 503"), reply[:300]
    assert b"retry-after: 2" in reply.lower()
    assert gauge(service, "factledger_bodies_in_flight_bytes") == 0


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
def test_a_large_review_post_is_refused_413_without_being_held(
    service: ServiceProcess, declared: bool
) -> None:
    assert service.proc is not None
    before = peak_rss_bytes(service.proc.pid)
    size, chunk = 50 * MiB, b"[" * MiB
    content: bytes | Iterator[bytes] = (
        chunk * (size // MiB) if declared else iter([chunk] * (size // MiB))
    )
    response = httpx.post(
        f"{service.url}/api/v1/reviews",
        headers={"Content-Type": "application/json"},
        content=content,
        timeout=30,
    )
    assert response.status_code == 413, response.text[:300]
    assert peak_rss_bytes(service.proc.pid) - before < 20 * MiB
    assert httpx.get(f"{service.url}/readyz").status_code == 200


def test_an_exporter_refused_for_bodies_in_flight_reads_the_503(service: ServiceProcess) -> None:
    """A request that finds the bodies in flight full is refused as its bytes pass its
    share: the rest of its body is read, so the exporter reads the 503 and retries it
    as the busy answer it is, not as a reset."""
    with connect(service) as holder:
        holder.sendall(head(ALPHA, MAX_BODY - 1) + b"x" * 1000)
        wait_for_gauge(service, "factledger_bodies_in_flight_bytes", 1000)
        with connect(service) as exporter:
            exporter.sendall(head(BETA, 12 * MiB) + b"\x00" * (12 * MiB))
            reply = read_reply(exporter)
    assert reply.startswith(b"HTTP/1.1 503"), reply[:300]
    assert b"retry-after: 2" in reply.lower()


@pytest.mark.parametrize(
    ("token", "size", "status"),
    [
        pytest.param(ALPHA, 3 * MAX_BODY, 413, id="too-large"),
        pytest.param("not-a-token-of-anyone", MAX_BODY // 2, 401, id="unauthenticated"),
    ],
)
def test_an_exporter_reads_the_status_of_a_request_refused_before_its_body(
    service: ServiceProcess, token: str, size: int, status: int
) -> None:
    """An exporter writes its whole body before reading: the refusal reaches it as a
    status, not as a connection reset it would retry."""
    body = b"\x00" * size
    response = requests.post(
        f"{service.url}/v1/traces",
        data=body,
        headers=headers(token, "application/x-protobuf"),
        timeout=30,
    )
    assert response.status_code == status, response.text[:300]
