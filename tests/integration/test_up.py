"""`factledger up` as a child process: it starts the service on the embedded store (OTLP
over HTTP and gRPC), the dashboard and demo traffic, prints where each is, and SIGTERM
stops the dashboard with it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import grpc
import httpx
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from factledger.service_process import free_port
from tests.integration.grpc_exports import export

STARTUP_SECONDS = 120


def test_up_starts_service_dashboard_and_demo_and_stops_them(tmp_path: Path):
    port, grpc_port, dashboard_port = free_port(), free_port(), free_port()
    log_path = tmp_path / "up.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "factledger.cli",
                "up",
                "--port",
                str(port),
                "--grpc-port",
                str(grpc_port),
                "--dashboard-port",
                str(dashboard_port),
                "--data-dir",
                str(tmp_path / "data"),
                "--demo-turns",
                "20",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "FACTLEDGER_GRACE_SECONDS": "0.3"},
        )
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while "Press Ctrl-C to stop." not in log_path.read_text():
            assert process.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.2)
        printed = log_path.read_text()
        assert re.search(rf"FactLedger service +http://127\.0\.0\.1:{port}\b", printed)
        assert re.search(rf"Dashboard +http://127\.0\.0\.1:{dashboard_port}\n", printed)
        assert re.search(rf"OTLP/gRPC +127\.0\.0\.1:{grpc_port}\n", printed)
        accepted = export(f"127.0.0.1:{grpc_port}", ExportTraceServiceRequest().SerializeToString())
        assert accepted.code is grpc.StatusCode.OK, accepted.details
        health = httpx.get(f"http://127.0.0.1:{dashboard_port}/_stcore/health", timeout=5)
        assert health.status_code == 200

        total = 0
        while total < 20 and time.monotonic() < deadline:
            time.sleep(0.3)
            turns = httpx.get(f"http://127.0.0.1:{port}/api/v1/turns", params={"limit": 1})
            total = turns.json()["total"]
        assert total >= 20, "the demo traffic did not arrive"
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(60)
    assert process.returncode == 0, log_path.read_text()
    try:
        httpx.get(f"http://127.0.0.1:{dashboard_port}/_stcore/health", timeout=2)
    except httpx.TransportError:
        pass
    else:
        raise AssertionError("the dashboard outlived `factledger up`")


class Up:
    """`factledger up` without a dashboard, as a child process writing to `log_path`."""

    def __init__(self, data_dir: Path, log_path: Path, *args: str) -> None:
        self.port = free_port()
        self.log_path = log_path
        with log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "factledger.cli",
                    "up",
                    "--port",
                    str(self.port),
                    "--grpc-port",
                    str(free_port()),
                    "--dashboard-port",
                    "0",
                    "--data-dir",
                    str(data_dir),
                    *args,
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, "FACTLEDGER_GRACE_SECONDS": "0.3"},
            )
        deadline = time.monotonic() + STARTUP_SECONDS
        while "Press Ctrl-C to stop." not in self.printed():
            assert self.process.poll() is None, self.printed()
            assert time.monotonic() < deadline, self.printed()
            time.sleep(0.2)

    def printed(self) -> str:
        return self.log_path.read_text()

    def get(self, path: str, **params: str | int) -> httpx.Response:
        return httpx.get(f"http://127.0.0.1:{self.port}{path}", params=params, timeout=10)

    def turns(self) -> int:
        total: int = self.get("/api/v1/turns", limit=1).json()["total"]
        return total

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(60) == 0, self.printed()


def received_spans(metrics: str) -> float:
    """Spans received over either transport."""
    return sum(
        float(line.split()[-1])
        for line in metrics.splitlines()
        if line.startswith("factledger_spans_received_total")
    )


def test_up_again_sends_no_more_demo_traffic_and_fresh_starts_clean(tmp_path: Path):
    data = tmp_path / "data"
    first = Up(data, tmp_path / "first.log", "--demo-turns", "5")
    try:
        assert f"Data                 {data}/" in first.printed()
        deadline = time.monotonic() + STARTUP_SECONDS
        while first.turns() < 5:
            assert time.monotonic() < deadline, "the demo traffic did not arrive"
            time.sleep(0.3)
    finally:
        first.stop()

    again = Up(data, tmp_path / "again.log", "--demo-turns", "5")
    try:
        assert "Demo traffic         none: the store already holds" in again.printed()
        kept = again.turns()
        assert kept >= 5
        time.sleep(3)  # the demo's burst and trickle would have sent by now
        assert received_spans(again.get("/metrics").text) == 0
        assert again.turns() == kept
    finally:
        again.stop()

    fresh = Up(data, tmp_path / "fresh.log", "--fresh", "--demo", "never")
    try:
        assert f"removed {data / 'chdb'}" in fresh.printed()
        assert fresh.turns() == 0
    finally:
        fresh.stop()
