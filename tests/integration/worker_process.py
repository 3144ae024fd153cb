"""Finding the judge worker process of a service (or of this test process), and waiting
for what it does."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path


def judge_worker_pids(parent_pid: int) -> list[int]:
    """The pids of the judge workers `parent_pid` started (children running its module)."""
    pids = []
    for task in Path(f"/proc/{parent_pid}/task").iterdir():
        for pid in (task / "children").read_text().split():
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except FileNotFoundError:
                continue
            if b"factledger.collector.judge.worker_process" in cmdline:
                pids.append(int(pid))
    return pids


def judge_worker_pid(parent_pid: int) -> int | None:
    """The pid of the judge worker `parent_pid` started (a child running its module)."""
    pids = judge_worker_pids(parent_pid)
    return pids[0] if pids else None


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll `predicate` until it holds; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)
