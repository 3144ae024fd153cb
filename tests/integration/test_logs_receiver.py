"""POST /v1/logs end to end: the OTel SDK's OTLP/HTTP log exporter (a real LoggerProvider
and LoggingHandler, as Semantic Kernel is set up) against a real `factledger serve`;
GenAI content written as log records joins its span and the turn is built with it;
partial success and drop counters for records that name no span; kill -9 loses no
acknowledged log record."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import LogRecordExportResult, SimpleLogRecordProcessor

from factledger.service_process import ServiceProcess
from tests.integration.otlp_turns import (
    chat_span_request,
    judged_turn,
    log_request,
    sdk_log_turn,
)

TOKEN = "logs-test-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
JSON = {"Content-Type": "application/json", **AUTH}


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    env = {"FACTLEDGER_INGEST_TOKEN": TOKEN, "FACTLEDGER_API_OPEN": "1"}
    with ServiceProcess(tmp_path_factory.mktemp("logs"), env) as svc:
        yield svc


@pytest.mark.parametrize("compression", [Compression.NoCompression, Compression.Gzip])
def test_sdk_log_records_join_their_span_and_build_the_turn(
    service: ServiceProcess, compression: Compression
) -> None:
    user, reply = f"Push my branch ({compression.value}).", "Pushed to origin."
    spans = OTLPSpanExporter(endpoint=f"{service.url}/v1/traces", headers=AUTH)
    logs = OTLPLogExporter(endpoint=f"{service.url}/v1/logs", headers=AUTH, compression=compression)
    trace_id = sdk_log_turn(spans, logs, f"tests.sdk_logs.{compression.value}", user, reply)
    turn = judged_turn(service.url, trace_id, user_message=user, reply=reply)
    names = {s["name"] for s in turn["spans"]}
    assert {"chat gpt-4o", "gen_ai.user.message", "gen_ai.choice"} <= names


def test_the_sdk_exporter_with_a_bad_token_is_refused_with_401(service: ServiceProcess) -> None:
    exporter = OTLPLogExporter(
        endpoint=f"{service.url}/v1/logs", headers={"Authorization": "Bearer wrong"}
    )
    provider = LoggerProvider()
    results: list[LogRecordExportResult] = []

    class Recording(SimpleLogRecordProcessor):
        def on_emit(self, log_record: Any) -> None:
            results.append(exporter.export([log_record]))

    provider.add_log_record_processor(Recording(exporter))
    provider.get_logger("tests").emit(body="hello", attributes={"event.name": "x"})
    provider.shutdown()
    assert results == [LogRecordExportResult.FAILURE]
    refused = httpx.post(
        f"{service.url}/v1/logs",
        headers={"Content-Type": "application/x-protobuf", "Authorization": "Bearer wrong"},
        content=b"",
    )
    assert refused.status_code == 401
    assert refused.headers["WWW-Authenticate"] == "Bearer"


def test_records_that_name_no_span_are_partial_success_and_counted(
    service: ServiceProcess,
) -> None:
    message = [("gen_ai.user.message", {"role": "user", "content": "hi"})]
    document = json.loads(log_request("", "", message))
    good = json.loads(log_request("5" * 32, "6" * 16, message))
    document["resourceLogs"][0]["scopeLogs"][0]["logRecords"] += good["resourceLogs"][0][
        "scopeLogs"
    ][0]["logRecords"]
    answer = httpx.post(
        f"{service.url}/v1/logs", headers=JSON, content=json.dumps(document).encode()
    )
    assert answer.status_code == 200, answer.text
    partial = answer.json()["partialSuccess"]
    assert partial["rejectedLogRecords"] == "1"
    assert "no_span" in partial["errorMessage"]
    # protobuf: the same answer as an ExportLogsServiceResponse
    proto = httpx.post(
        f"{service.url}/v1/logs",
        headers={"Content-Type": "application/x-protobuf", **AUTH},
        content=b"",
    )
    assert proto.status_code == 200
    assert (
        ExportLogsServiceResponse.FromString(proto.content).partial_success.rejected_log_records
        == 0
    )
    metrics = httpx.get(f"{service.url}/metrics").text
    assert 'factledger_log_records_dropped_total{reason="no_span"} 1' in metrics


def test_a_log_minutes_late_gives_the_judged_turn_its_next_version(
    service: ServiceProcess,
) -> None:
    trace_id, span_id = "7" * 32, "8" * 16
    sent = httpx.post(
        f"{service.url}/v1/traces", headers=JSON, content=chat_span_request(trace_id, span_id)
    )
    assert sent.status_code == 200
    user = [("gen_ai.user.message", {"role": "user", "content": "Is the build green?"})]
    assert (
        httpx.post(
            f"{service.url}/v1/logs", headers=JSON, content=log_request(trace_id, span_id, user)
        ).status_code
        == 200
    )
    first = judged_turn(service.url, trace_id, user_message="Is the build green?")
    assert first["reply"] == ""
    choice = [("gen_ai.choice", {"message": {"role": "assistant", "content": "It is green."}})]
    late = log_request(trace_id, span_id, choice)
    assert httpx.post(f"{service.url}/v1/logs", headers=JSON, content=late).status_code == 200
    second = judged_turn(service.url, trace_id, reply="It is green.")
    assert second["turn_id"] == first["turn_id"]
    assert len(second["versions"]) == 2


TURNS = 60


def _post_until_killed(url: str, acked: dict[int, str], stop: threading.Event) -> None:
    with httpx.Client(timeout=5) as client:
        for index in range(1, TURNS + 1):
            if stop.is_set():
                return
            trace_id, span_id = f"{index:032x}", f"{index:016x}"
            events = [
                ("gen_ai.user.message", {"role": "user", "content": f"request {index}"}),
                ("gen_ai.choice", {"message": {"role": "assistant", "content": f"done {index}"}}),
            ]
            try:
                spans = client.post(
                    f"{url}/v1/traces", headers=JSON, content=chat_span_request(trace_id, span_id)
                )
                logs = client.post(
                    f"{url}/v1/logs", headers=JSON, content=log_request(trace_id, span_id, events)
                )
            except httpx.HTTPError:
                return  # the service died under us
            if spans.status_code == 200 and logs.status_code == 200:
                acked[index] = trace_id


def test_kill_9_loses_no_acknowledged_log_record(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = {"FACTLEDGER_INGEST_TOKEN": TOKEN, "FACTLEDGER_API_OPEN": "1"}
    # A long grace: nothing is judged before the kill, so every turn is finished after it.
    first = ServiceProcess(data, {**env, "FACTLEDGER_GRACE_SECONDS": "30"}).start()
    acked: dict[int, str] = {}
    stop = threading.Event()
    client = threading.Thread(target=_post_until_killed, args=(first.url, acked, stop))
    client.start()
    deadline = time.monotonic() + 30
    while len(acked) < TURNS // 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    first.kill9()
    stop.set()
    client.join(10)
    assert len(acked) >= TURNS // 3
    with ServiceProcess(data, env, port=first.port) as second:
        for index, trace_id in acked.items():
            turn = judged_turn(
                second.url,
                trace_id,
                timeout=60,
                user_message=f"request {index}",
                reply=f"done {index}",
            )
            ids = [s["span_id"] for s in turn["spans"]]
            assert len(ids) == len(set(ids)) == 3, turn["spans"]
        replayed = [
            line
            for line in httpx.get(f"{second.url}/metrics").text.splitlines()
            if line.startswith("factledger_wal_replayed_spans_total ")
        ]
        assert replayed and float(replayed[0].split()[1]) > 0, "nothing came from the log"
