"""`factledger up` as a child process: it starts the service on the embedded store, the
dashboard and demo traffic, prints both URLs, and SIGTERM stops the dashboard with it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.integration.service_process import free_port

STARTUP_SECONDS = 120


def test_up_starts_service_dashboard_and_demo_and_stops_them(tmp_path: Path):
    port, dashboard_port = free_port(), free_port()
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
