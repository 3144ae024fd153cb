"""Service threads carry their names into the operating system (top -H, /proc)."""

from __future__ import annotations

import threading
from pathlib import Path

from factledger.collector.thread_names import named


def _os_name_of(thread: threading.Thread) -> str:
    return Path(f"/proc/self/task/{thread.native_id}/comm").read_text().strip()


def test_a_named_target_runs_under_its_os_name_cut_to_fifteen_bytes() -> None:
    running = threading.Semaphore(0)
    release = threading.Event()

    def work() -> None:
        running.release()  # the name is set before the target runs
        release.wait(10)

    short = threading.Thread(target=named("span-writer", work))
    long = threading.Thread(target=named("turn-processor-and-more", work))
    for thread in (short, long):
        thread.start()
    try:
        assert running.acquire(timeout=10) and running.acquire(timeout=10)
        assert _os_name_of(short) == "span-writer"
        assert _os_name_of(long) == "turn-processor-"
    finally:
        release.set()
        for thread in (short, long):
            thread.join(10)
