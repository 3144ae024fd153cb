"""The service as a child process (`factledger.service_process`), as tests and benchmarks
start it: one that does not become ready is not left running, and the port it is given is
not handed to another process before it binds."""

from __future__ import annotations

import errno
import socket
from pathlib import Path

import pytest

from factledger.service_process import ServiceProcess, free_port


def test_a_service_not_ready_in_time_is_stopped_before_the_error(tmp_path: Path) -> None:
    service = ServiceProcess(tmp_path / "data")
    with pytest.raises(RuntimeError, match=r"service not ready within 0\.2s"):
        service.start(timeout=0.2)  # starting takes seconds: it is not ready yet
    assert service.proc is not None
    assert service.proc.poll() is not None


def test_a_free_port_is_kept_from_other_binds_and_open_to_its_server() -> None:
    """The kernel picks a port for bind(0) or connect() only among ports a plain bind
    could take, so a plain bind refused means no other process is handed this one; the
    server, binding with SO_REUSEADDR as every server here does, gets it."""
    port = free_port()
    with socket.socket() as other, pytest.raises(OSError) as refused:
        other.bind(("127.0.0.1", port))
    assert refused.value.errno == errno.EADDRINUSE
    with socket.socket() as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", port))
        server.listen()
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
