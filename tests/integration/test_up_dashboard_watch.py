"""`factledger up` notices a dead dashboard: with its Streamlit process killed, `up` says
so, names the dashboard's log and starts a dashboard again that answers on the same port."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from factledger.service_process import free_port

STARTUP_SECONDS = 120


def _dashboards(pid: int) -> list[int]:
    """The Streamlit processes among `pid`'s children."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            if b"streamlit" in Path(f"/proc/{child}/cmdline").read_bytes():
                found.append(int(child))
    return found


def _wait_for(log_path: Path, text: str, process: subprocess.Popen[bytes]) -> str:
    deadline = time.monotonic() + STARTUP_SECONDS
    while text not in (printed := log_path.read_text()):
        assert process.poll() is None, printed
        assert time.monotonic() < deadline, printed
        time.sleep(0.2)
    return printed


def test_up_restarts_a_dashboard_that_died_and_names_its_log(tmp_path: Path) -> None:
    port, dashboard_port = free_port(), free_port()
    data = tmp_path / "data"
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
                str(data),
                "--demo",
                "never",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "FACTLEDGER_GRACE_SECONDS": "0.3"},
        )
    health = f"http://127.0.0.1:{dashboard_port}/_stcore/health"
    try:
        _wait_for(log_path, "Press Ctrl-C to stop.", process)
        (streamlit,) = _dashboards(process.pid)
        os.kill(streamlit, signal.SIGKILL)
        printed = _wait_for(log_path, "the dashboard answers again", process)
        assert f"the dashboard exited (code -9); its log: {data / 'dashboard.log'}" in printed
        assert "Restarting it (1 of 3)" in printed
        assert httpx.get(health, timeout=5).status_code == 200
        assert _dashboards(process.pid) not in ([], [streamlit])
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(60)
    assert process.returncode == 0, log_path.read_text()
