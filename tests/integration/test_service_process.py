"""The service as a child process (`factledger.service_process`), as tests and benchmarks
start it: one that does not become ready is not left running."""

from __future__ import annotations

from pathlib import Path

import pytest

from factledger.service_process import ServiceProcess


def test_a_service_not_ready_in_time_is_stopped_before_the_error(tmp_path: Path) -> None:
    service = ServiceProcess(tmp_path / "data")
    with pytest.raises(RuntimeError, match=r"service not ready within 0\.2s"):
        service.start(timeout=0.2)  # starting takes seconds: it is not ready yet
    assert service.proc is not None
    assert service.proc.poll() is not None
