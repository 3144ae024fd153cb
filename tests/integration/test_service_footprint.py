"""What the running service keeps out of its memory: pandas, which the database driver
would import at the first insert to ask whether the rows are a DataFrame (some 40-70 MiB
resident in the process that must stay under its memory bound)."""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from factledger.service_process import ServiceProcess
from tests.integration.otlp_turns import post_turn


def _mapped_files(pid: int) -> str:
    return Path(f"/proc/{pid}/maps").read_text()


def test_storing_and_judging_turns_never_loads_pandas(tmp_path: Path) -> None:
    with ServiceProcess(tmp_path / "data") as svc:
        assert svc.proc is not None
        for number in range(1, 4):  # trace ids from the index: 0 would be invalid
            post_turn(svc.url, number, hallucinate=number == 2)
        deadline = time.monotonic() + 60
        while httpx.get(f"{svc.url}/api/v1/turns", timeout=5).json()["total"] < 3:
            assert time.monotonic() < deadline, "the turns were never stored and judged"
            time.sleep(0.2)
        maps = _mapped_files(svc.proc.pid)
        assert "clickhouse_connect" in maps or "chdb" in maps, "the store was never loaded"
        assert "/pandas/" not in maps
