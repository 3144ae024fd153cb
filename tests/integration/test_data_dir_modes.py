"""The data directory of a running service is private to the service's user: the
embedded store's files and the write-ahead log (raw requests, secrets included) can be
read by no other account on the machine."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import httpx

from factledger.service_process import ServiceProcess
from tests.integration.otlp_turns import post_turn


def _shared(root: Path) -> list[str]:
    """Every directory not 0700 and every file with a group or other bit, under `root`."""
    found = []
    for path in [root, *root.rglob("*")]:
        mode = path.lstat().st_mode
        if stat.S_ISLNK(mode):
            continue  # a link's own bits mean nothing; its target is listed itself
        bits = stat.S_IMODE(mode)
        private = bits == 0o700 if stat.S_ISDIR(mode) else not bits & 0o077
        if not private:
            found.append(f"{bits:o} {path}")
    return found


def _stored_turns(url: str) -> int:
    answer = httpx.get(f"{url}/api/v1/turns", timeout=5)
    assert answer.status_code == 200, answer.text
    return len(answer.json()["turns"])


def test_a_running_services_data_directory_is_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    data.chmod(0o755)  # as `mkdir /data` leaves it in the image
    previous = os.umask(0o022)  # the usual umask, which the service must not rely on
    try:
        with ServiceProcess(tmp_path / "run", {"FACTLEDGER_DATA_DIR": str(data)}) as svc:
            post_turn(svc.url, 1, hallucinate=False)
            deadline = time.monotonic() + 60
            while _stored_turns(svc.url) < 1:
                assert time.monotonic() < deadline, "the turn was never stored"
                time.sleep(0.2)
            assert list((data / "wal").iterdir()), "the log holds the request"
            assert list((data / "chdb").iterdir()), "the store wrote its files"
            assert _shared(data) == []
        assert _shared(data) == []
    finally:
        os.umask(previous)
