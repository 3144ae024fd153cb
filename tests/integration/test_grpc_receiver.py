"""OTLP/gRPC (port 4317's protocol) against a real service: the OTel SDK's gRPC exporters
(traces, and logs joining their span) and the zero-code distro's defaults, each turn
judged and read back through the query API; every status of the outcome table provoked
with a raw gRPC client, RetryInfo exactly where a retry can succeed; gzip."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

import grpc
import httpx
import pytest
from clickhouse_connect.driver.client import Client
from fastapi import FastAPI
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.logs.v1.logs_service_pb2_grpc import LogsServiceStub
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2_grpc import TraceServiceStub
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord
from opentelemetry.proto.trace.v1.trace_pb2 import Span
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from factledger.collector.app import create_app
from factledger.collector.ingest.grpc_receiver import GrpcReceiver
from factledger.collector.ingest.in_flight import InFlightBytes
from factledger.collector.ingest.refusal_grpc import RETRY_INFO_KEY
from factledger.collector.ingest.wal import WriteAheadLog
from factledger.collector.metrics import Metrics
from factledger.collector.pipeline import Pipeline
from factledger.collector.refusals import RETRY_DELAY_SECONDS
from factledger.collector.service import Service
from factledger.collector.settings import ServiceSettings
from factledger.collector.store import Store
from factledger.ports import check_port_free
from factledger.service_process import ServiceProcess, free_port
from tests.integration.app_server import served
from tests.integration.grpc_exports import LOGS, METRICS, TRACES, Answer, Metadata, export
from tests.integration.otlp_turns import judged_turn, sdk_log_turn
from tests.integration.store_clients import DiskFullClient, SlowSpansClient
from tests.integration.test_http_limits import connect, gauge, read_until_closed_or_reply
from tests.integration.worker_process import wait_until
from tests.unit.sdk_turns import REPLY, emit_agent_turn
from tests.unit.test_wal import FullDisk

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "grpc-test-token-0123456789"
AUTH: Metadata = (("authorization", f"Bearer {TOKEN}"),)
LIMIT = 1024 * 1024
IN_FLIGHT = 300_000
"""The bound on bytes of bodies in flight: a 200 kB message does not fit beside 150 kB."""
BODY = 200_000
HALF = IN_FLIGHT // 2
TRACE = bytes.fromhex("5b8efff798038103d269b633813fc60c")
NOW_NS = time.time_ns()


def spans_request(*span_ids: bytes, pad: int = 0) -> bytes:
    """An ExportTraceServiceRequest of one chat span per id (8 bytes is a valid id), the
    first padded with an attribute of `pad` bytes."""
    request = ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    for index, span_id in enumerate(span_ids):
        span = scope.spans.add()
        span.CopyFrom(
            Span(
                trace_id=TRACE,
                span_id=span_id,
                name="chat gpt-4o",
                kind=Span.SPAN_KIND_CLIENT,
                start_time_unix_nano=NOW_NS,
                end_time_unix_nano=NOW_NS + 1_000_000,
            )
        )
        span.attributes.append(KeyValue(key="gen_ai.operation.name", value=_text("chat")))
        if pad and index == 0:
            span.attributes.append(KeyValue(key="pad", value=_text("x" * pad)))
    return bytes(request.SerializeToString())


def logs_request(*span_ids: bytes) -> bytes:
    """An ExportLogsServiceRequest of one GenAI user message per id (b"": names no span)."""
    request = ExportLogsServiceRequest()
    scope = request.resource_logs.add().scope_logs.add()
    for span_id in span_ids:
        record = LogRecord(
            time_unix_nano=NOW_NS,
            trace_id=TRACE if span_id else b"",
            span_id=span_id,
            body=_text('{"role": "user", "content": "hi"}'),
        )
        record.attributes.append(KeyValue(key="event.name", value=_text("gen_ai.user.message")))
        scope.log_records.append(record)
    return bytes(request.SerializeToString())


def _text(value: str) -> AnyValue:
    return AnyValue(string_value=value)


def _id(n: int) -> bytes:
    return n.to_bytes(8, "big")


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    """`factledger serve` with an ingest token and small limits."""
    env = {
        "FACTLEDGER_INGEST_TOKEN": TOKEN,
        "FACTLEDGER_MAX_BODY_BYTES": str(LIMIT),
        "FACTLEDGER_MAX_BODIES_IN_FLIGHT_BYTES": str(IN_FLIGHT),
        "FACTLEDGER_API_OPEN": "1",  # /metrics is read without a token
    }
    with ServiceProcess(tmp_path_factory.mktemp("grpc"), env) as svc:
        yield svc


@pytest.fixture(scope="module")
def open_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    """`factledger serve` as it starts with nothing configured (no tokens)."""
    with ServiceProcess(tmp_path_factory.mktemp("grpc-open")) as svc:
        yield svc


# --- every outcome over gRPC ---------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """Where a case sends its call, and the service's HTTP base for its metrics."""

    grpc: str
    url: str


Situation = Callable[[pytest.FixtureRequest], AbstractContextManager[Target]]


@contextmanager
def _running(request: pytest.FixtureRequest) -> Iterator[Target]:
    """The module's service, as it runs."""
    svc: ServiceProcess = request.getfixturevalue("service")
    yield Target(svc.grpc_target, svc.url)


@contextmanager
def _bodies_in_flight(request: pytest.FixtureRequest) -> Iterator[Target]:
    """The module's service while an HTTP body holds half the bytes in flight: the bound
    is shared by both transports."""
    svc: ServiceProcess = request.getfixturevalue("service")
    body = b'{"resourceSpans": []}'.ljust(BODY)
    head = (
        "POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {TOKEN}\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    with connect(svc) as holder:
        holder.sendall(head + body[:HALF])
        wait_until(
            lambda: gauge(svc, "factledger_bodies_in_flight_bytes") >= HALF,
            20,
            "the held HTTP body to be counted in flight",
        )
        yield Target(svc.grpc_target, svc.url)
        holder.sendall(body[HALF:])
        assert read_until_closed_or_reply(holder).startswith(b"HTTP/1.1 200")
    wait_until(lambda: gauge(svc, "factledger_bodies_in_flight_bytes") == 0, 20, "no bytes held")


def _settings(tmp_path: Path, **changes: Any) -> ServiceSettings:
    settings = ServiceSettings(
        data_dir=tmp_path, grace_seconds=0.2, max_wait_seconds=5, grpc_port=free_port()
    )
    return replace(settings, **changes)


@contextmanager
def _in_process(
    request: pytest.FixtureRequest,
    store: Store | None = None,
    wal: WriteAheadLog | None = None,
    **changes: Any,
) -> Iterator[tuple[FastAPI, Target]]:
    """An app of this process (so the test holds its store, log and pipeline)."""
    tmp_path: Path = request.getfixturevalue("tmp_path")
    settings = _settings(tmp_path, **changes)
    app = create_app(settings, store=store or request.getfixturevalue("store"), wal=wal)
    with served(app) as url:
        yield app, Target(f"127.0.0.1:{settings.grpc_port}", url)


@contextmanager
def _too_many_spans(request: pytest.FixtureRequest) -> Iterator[Target]:
    """A backlog bound (FACTLEDGER_QUEUE_SPANS) of 2 spans."""
    with _in_process(request, queue_spans=2) as (_, target):
        yield target


@contextmanager
def _queue_full(request: pytest.FixtureRequest) -> Iterator[Target]:
    """A store that has fallen behind: the one accepted span it has not stored fills a
    backlog bound of one span."""
    live: Store = request.getfixturevalue("store")
    slow = SlowSpansClient(live._live())
    try:
        with _in_process(request, Store(cast(Client, slow), live.config), queue_spans=1) as (
            _,
            target,
        ):
            assert export(target.grpc, spans_request(_id(90))).code is grpc.StatusCode.OK
            assert slow.waiting.wait(30)
            yield target
            slow.go.set()
    finally:
        slow.go.set()


@contextmanager
def _store_unavailable(request: pytest.FixtureRequest) -> Iterator[Target]:
    """A store on a full disk: the accepted request is held, new ones are refused."""
    live: Store = request.getfixturevalue("store")
    full = DiskFullClient(live._live())
    full.full.set()
    with _in_process(request, Store(cast(Client, full), live.config)) as (app, target):
        assert export(target.grpc, spans_request(_id(91))).code is grpc.StatusCode.OK
        assert full.refused.wait(30)
        pipeline = app.state.service.pipeline
        wait_until(lambda: not pipeline.store_writable, 30, "the store to count as not writing")
        yield target
        full.full.clear()


@contextmanager
def _shutting_down(request: pytest.FixtureRequest) -> Iterator[Target]:
    """A service whose pipeline has begun to shut down."""
    with _in_process(request) as (app, target):
        app.state.service.pipeline.shutdown()
        yield target


@contextmanager
def _log_disk_full(request: pytest.FixtureRequest) -> Iterator[Target]:
    """A write-ahead log on a disk with 9 bytes left: a torn record header, then ENOSPC."""
    tmp_path: Path = request.getfixturevalue("tmp_path")
    disk = FullDisk()
    wal = WriteAheadLog(tmp_path / "wal", write=disk)
    try:
        with _in_process(request, wal=wal) as (_, target):
            disk.room = 9
            yield target
            disk.room = None
    finally:
        wal.close()


SITUATIONS: dict[str, Situation] = {
    "running": _running,
    "bodies_in_flight": _bodies_in_flight,
    "too_many_spans": _too_many_spans,
    "queue_full": _queue_full,
    "store_unavailable": _store_unavailable,
    "shutting_down": _shutting_down,
    "log_disk_full": _log_disk_full,
}


@dataclass(frozen=True)
class Case:
    request: bytes
    code: grpc.StatusCode
    reason: str | None = None
    """The `reason` of factledger_requests_refused_total{transport="grpc"} counted once."""
    situation: str = "running"
    method: str = TRACES
    metadata: Metadata = AUTH
    compression: grpc.Compression | None = None
    rejected: int = 0
    """For OK: what partial_success counts."""
    status_trailer: bool = True
    """Whether FactLedger answered (a google.rpc.Status trailer) or gRPC itself did."""


OK, BAD, DENIED = (
    grpc.StatusCode.OK,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.UNAUTHENTICATED,
)
EXHAUSTED, UNAVAILABLE = grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNAVAILABLE
RETRYABLE = {UNAVAILABLE}
"""The outcomes a sender may retry: exactly those whose status carries RetryInfo."""

CASES = [
    pytest.param(Case(spans_request(_id(1)), OK), id="accepted"),
    pytest.param(
        Case(spans_request(_id(2), b"\x01\x02", _id(3)), OK, rejected=1), id="partial-success"
    ),
    pytest.param(
        Case(spans_request(_id(4)), OK, compression=grpc.Compression.Gzip), id="gzip-accepted"
    ),
    pytest.param(Case(logs_request(_id(5)), OK, method=LOGS), id="logs-accepted"),
    pytest.param(
        Case(logs_request(_id(6), b""), OK, method=LOGS, rejected=1), id="logs-partial-success"
    ),
    pytest.param(Case(b"\xff\xff\xff\xff", BAD, "400"), id="undecodable"),
    pytest.param(Case(b"\xff\xff\xff\xff", BAD, "400", method=LOGS), id="logs-undecodable"),
    pytest.param(Case(spans_request(_id(7)), DENIED, "401", metadata=()), id="missing-token"),
    pytest.param(
        Case(spans_request(_id(7)), DENIED, "401", metadata=(("authorization", "Bearer no"),)),
        id="wrong-token",
    ),
    pytest.param(
        Case(spans_request(_id(8), pad=LIMIT), EXHAUSTED, status_trailer=False),
        id="message-over-the-limit",
    ),
    pytest.param(
        Case(
            spans_request(_id(8), pad=8 * LIMIT),
            EXHAUSTED,
            compression=grpc.Compression.Gzip,
            status_trailer=False,
        ),
        id="gzip-inflating-over-the-limit",
    ),
    pytest.param(
        Case(
            spans_request(_id(8)),
            grpc.StatusCode.UNIMPLEMENTED,
            method=METRICS,
            status_trailer=False,
        ),
        id="metrics-not-taken",
    ),
    pytest.param(
        Case(spans_request(_id(9), pad=BODY), UNAVAILABLE, "bodies_in_flight", "bodies_in_flight"),
        id="bodies-in-flight",
    ),
    pytest.param(
        Case(
            spans_request(_id(10), _id(11), _id(12)), EXHAUSTED, "too_many_spans", "too_many_spans"
        ),
        id="more-spans-than-the-backlog-holds",
    ),
    pytest.param(
        Case(spans_request(_id(13)), UNAVAILABLE, "queue_full", "queue_full"), id="pipeline-full"
    ),
    pytest.param(
        Case(spans_request(_id(14)), UNAVAILABLE, "store_unavailable", "store_unavailable"),
        id="store-unavailable",
    ),
    pytest.param(
        Case(spans_request(_id(15)), UNAVAILABLE, "shutting_down", "shutting_down"),
        id="shutting-down",
    ),
    pytest.param(
        Case(spans_request(_id(16)), UNAVAILABLE, "wal_unavailable", "log_disk_full"),
        id="log-disk-full",
    ),
]


def _refused(url: str) -> dict[str, int]:
    """factledger_requests_refused_total{transport="grpc"} by reason."""
    text = httpx.get(f"{url}/metrics", timeout=10).text
    found = re.findall(
        r'^factledger_requests_refused_total\{reason="(\w+)",transport="grpc"\} (\d+)$', text, re.M
    )
    return {reason: int(count) for reason, count in found}


def _partial(method: str, answer: Answer) -> tuple[int, str]:
    if method == LOGS:
        logs = ExportLogsServiceResponse.FromString(answer.response).partial_success
        return logs.rejected_log_records, logs.error_message
    spans = ExportTraceServiceResponse.FromString(answer.response).partial_success
    return spans.rejected_spans, spans.error_message


@pytest.mark.parametrize("case", CASES)
def test_every_outcome_over_grpc(case: Case, request: pytest.FixtureRequest) -> None:
    """The status the OTLP specification gives each outcome, the refusal's message and
    `google.rpc.Status`, RetryInfo (2 s) exactly on the retryable ones, partial success
    on accepted ones, and each refusal counted once under its reason."""
    with SITUATIONS[case.situation](request) as target:
        before = _refused(target.url)
        answer = export(
            target.grpc,
            case.request,
            method=case.method,
            metadata=case.metadata,
            compression=case.compression,
        )
        after = _refused(target.url)
    assert answer.code == case.code, answer.details
    counted = {reason: n - before.get(reason, 0) for reason, n in after.items()}
    assert {reason: n for reason, n in counted.items() if n} == (
        {case.reason: 1} if case.reason else {}
    )
    if case.code is OK:
        rejected, message = _partial(case.method, answer)
        assert rejected == case.rejected
        assert bool(message) is bool(case.rejected)
        return
    status = answer.status
    if not case.status_trailer:
        assert status is None, "gRPC answers this one itself"
        return
    assert status is not None
    assert (status.code, status.message) == (case.code.value[0], answer.details)
    retryable = case.code in RETRYABLE
    assert answer.retry_delay == (RETRY_DELAY_SECONDS if retryable else None)
    assert (RETRY_INFO_KEY in answer.trailers) is retryable


def test_the_backlog_bound_is_named_in_the_refusal(request: pytest.FixtureRequest) -> None:
    with _too_many_spans(request) as target:
        answer = export(target.grpc, spans_request(_id(20), _id(21), _id(22)))
    assert answer.code is EXHAUSTED
    assert "3 spans" in answer.details and "FACTLEDGER_QUEUE_SPANS" in answer.details


def test_the_generated_stubs_reach_both_services(service: ServiceProcess) -> None:
    """opentelemetry-proto's own `*_pb2_grpc` clients, as exporters are built on them."""
    with grpc.insecure_channel(service.grpc_target) as channel:
        traces = TraceServiceStub(channel).Export(  # type: ignore[no-untyped-call]
            ExportTraceServiceRequest.FromString(spans_request(_id(30), b"\x01")),
            metadata=AUTH,
            timeout=30,
        )
        logs = LogsServiceStub(channel).Export(  # type: ignore[no-untyped-call]
            ExportLogsServiceRequest.FromString(logs_request(_id(31))), metadata=AUTH, timeout=30
        )
    assert traces.partial_success.rejected_spans == 1
    assert "invalid_span_id" in traces.partial_success.error_message
    assert logs.partial_success.rejected_log_records == 0


# --- the SDK's exporters and the zero-code distro ------------------------------------


def _received(url: str) -> dict[str, float]:
    text = httpx.get(f"{url}/metrics", timeout=10).text
    found = re.findall(r'^factledger_spans_received_total\{transport="(\w+)"\} (\S+)$', text, re.M)
    return {transport: float(count) for transport, count in found}


def test_the_sdk_grpc_exporter_sends_a_turn_that_is_judged(open_service: ServiceProcess) -> None:
    before = _received(open_service.url)
    provider = TracerProvider(shutdown_on_exit=False)
    exporter = OTLPSpanExporter(endpoint=open_service.grpc_target, insecure=True)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    try:
        trace_id = emit_agent_turn(provider.get_tracer("tests"))
    finally:
        provider.shutdown()
    turn = judged_turn(open_service.url, trace_id, verdict="reject")
    assert turn["reply"] == REPLY
    assert "claim_without_tool" in {f["kind"] for f in turn["findings"]}
    assert len(turn["spans"]) == 4
    after = _received(open_service.url)
    assert after["grpc"] - before.get("grpc", 0) == 4
    assert after["http"] == before.get("http", 0)


def test_sdk_grpc_log_records_join_their_span_and_build_the_turn(service: ServiceProcess) -> None:
    user, reply = "Push my branch (gRPC).", "Pushed to origin."
    spans = OTLPSpanExporter(endpoint=service.grpc_target, insecure=True, headers=AUTH)
    logs = OTLPLogExporter(
        endpoint=service.grpc_target,
        insecure=True,
        headers=AUTH,
        compression=grpc.Compression.Gzip,
    )
    trace_id = sdk_log_turn(spans, logs, "tests.sdk_logs.grpc", user, reply)
    turn = judged_turn(service.url, trace_id, user_message=user, reply=reply)
    assert {"chat gpt-4o", "gen_ai.user.message", "gen_ai.choice"} <= {
        s["name"] for s in turn["spans"]
    }


def test_the_zero_code_distro_defaults_reach_the_service(open_service: ServiceProcess) -> None:
    """`opentelemetry-instrument` as the OpenTelemetry docs run it: no protocol chosen
    (the Python distro's default is gRPC), only the endpoint; the turn is judged."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://{open_service.grpc_target}"
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    instrument = Path(sys.executable).parent / "opentelemetry-instrument"
    done = subprocess.run(
        [str(instrument), sys.executable, str(ROOT / "tests/integration/zero_code_agent.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    trace_id = done.stdout.split()[-1]
    assert re.fullmatch(r"[0-9a-f]{32}", trace_id), done.stdout
    turn = judged_turn(open_service.url, trace_id, verdict="reject")
    assert "claim_without_tool" in {f["kind"] for f in turn["findings"]}


# --- connection limits ---------------------------------------------------------------


def test_connections_past_the_bound_are_refused_and_idle_ones_closed(
    tmp_path: Path,
) -> None:
    """FACTLEDGER_GRPC_MAX_CONNECTIONS refuses a connection past it (UNAVAILABLE: the
    exporter retries), and FACTLEDGER_GRPC_IDLE_SECONDS closes a connection without calls,
    which gives its place to the next one."""
    env = {"FACTLEDGER_GRPC_MAX_CONNECTIONS": "1", "FACTLEDGER_GRPC_IDLE_SECONDS": "1"}
    # Each channel its own connection (grpcio shares them between channels by default).
    own = [("grpc.use_local_subchannel_pool", 1)]
    request = ExportTraceServiceRequest.FromString(spans_request(_id(40)))
    with ServiceProcess(tmp_path / "data", env) as svc:
        first = grpc.insecure_channel(svc.grpc_target, options=own)
        TraceServiceStub(first).Export(request, timeout=30)  # type: ignore[no-untyped-call]
        with (
            grpc.insecure_channel(svc.grpc_target, options=own) as second,
            pytest.raises(grpc.RpcError) as refused,
        ):
            TraceServiceStub(second).Export(request, timeout=30)  # type: ignore[no-untyped-call]
        assert cast(grpc.Call, refused.value).code() is UNAVAILABLE
        time.sleep(3)  # the first connection idles past its second and is closed
        with grpc.insecure_channel(svc.grpc_target, options=own) as third:
            TraceServiceStub(third).Export(request, timeout=30)  # type: ignore[no-untyped-call]
        first.close()


def test_the_receiver_stops_once_and_may_be_stopped_before_it_started(tmp_path: Path) -> None:
    """`shutdown` is safe before `start` and twice; once stopped, the port is free."""
    settings = _settings(tmp_path)
    service = Service(
        settings,
        cast(Store, None),  # no call reaches the store or the pipeline here
        cast(Pipeline, None),
        Metrics(),
        InFlightBytes(settings.max_bodies_in_flight_bytes),
    )

    async def cycle() -> None:
        receiver = GrpcReceiver(service)
        await receiver.shutdown()
        assert await receiver.start() == settings.grpc_port == receiver.port
        await receiver.shutdown(0)
        await receiver.shutdown(0)

    # A loop of its own in a thread of its own: in one pytest run the browser tests leave
    # a running loop on the main thread, where `asyncio.run` refuses to start.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, cycle()).result(timeout=60)
    check_port_free("127.0.0.1", settings.grpc_port, "--grpc-port")
