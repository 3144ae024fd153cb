"""The long-running commands as child processes: `factledger dashboard` stops its
Streamlit process on SIGTERM (in a container it is PID 1, and a service manager stops it
with SIGTERM), and `serve`, `up` and `dashboard` given a port that is taken stop at once
with one line naming the option that changes it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from factledger.service_process import free_port

STARTUP_SECONDS = 90


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(child) for child in path.read_text().split()] if path.exists() else []


def running(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port another program listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def factledger(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "factledger.cli", *args],
        env={**os.environ, "FACTLEDGER_DATA_DIR": str(data_dir)},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc")
def test_dashboard_stops_streamlit_on_sigterm(tmp_path: Path):
    port = free_port()
    api = f"http://127.0.0.1:{free_port()}"  # no service needed to start the dashboard
    log_path = tmp_path / "dashboard.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "factledger.cli", "dashboard", "--port", str(port)],
            env={**os.environ, "FACTLEDGER_API": api},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    streamlit = 0
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while "FactLedger dashboard" not in log_path.read_text():
            assert process.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.2)
        (streamlit,) = children(process.pid)
        assert running(streamlit)
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0, log_path.read_text()
        deadline = time.monotonic() + 15
        while running(streamlit) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not running(streamlit), "Streamlit outlived `factledger dashboard`"
        with pytest.raises(httpx.TransportError):
            httpx.get(f"http://127.0.0.1:{port}/_stcore/health", timeout=2)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
        if streamlit and running(streamlit):
            os.kill(streamlit, signal.SIGKILL)


@pytest.mark.parametrize(
    ("command", "option"),
    [
        (["serve", "--port", "{port}"], "--port"),
        (["serve", "--port", "{free}", "--grpc-port", "{port}"], "--grpc-port"),
        (["up", "--port", "{port}", "--dashboard-port", "0"], "--port"),
        (
            ["up", "--port", "{free}", "--grpc-port", "{port}", "--dashboard-port", "0"],
            "--grpc-port",
        ),
        (["up", "--port", "{free}", "--no-grpc", "--dashboard-port", "{port}"], "--dashboard-port"),
        (["dashboard", "--port", "{port}"], "--port"),
    ],
    ids=["serve", "serve-grpc", "up-service", "up-grpc", "up-dashboard", "dashboard"],
)
def test_a_port_in_use_names_the_option_that_changes_it(
    taken_port: int, tmp_path: Path, command: list[str], option: str
):
    args = [part.format(port=taken_port, free=free_port()) for part in command]
    done = factledger(*args, data_dir=tmp_path / "data")
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0] == (
        f"factledger: port {taken_port} on 127.0.0.1 is already in use "
        f"(is FactLedger already running?); choose another with {option} PORT"
    )
    assert not (tmp_path / "data" / "chdb").exists(), "the store was opened anyway"
