"""`factledger up`'s dashboard watch over real child processes: a dashboard that exits is
reported with its log's path and started again, within a bounded number of restarts per
window; past them the watch says so and tells `up` to stop."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from factledger.dashboard_watch import DashboardWatch, RestartBudget

LOG = Path("/data/dashboard.log")


def _exits(code: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen([sys.executable, "-c", f"raise SystemExit({code})"])
    process.wait(30)
    return process


def _runs() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_running_dashboard_is_left_alone() -> None:
    process = _runs()
    try:
        out = io.StringIO()
        watch = DashboardWatch(process, _runs, LOG, out=out)
        assert watch.check() and watch.process is process
        assert out.getvalue() == ""
    finally:
        process.kill()
        process.wait()


def test_an_exited_dashboard_is_reported_with_its_log_and_started_again() -> None:
    started: list[subprocess.Popen[bytes]] = []

    def start() -> subprocess.Popen[bytes]:
        started.append(_runs())
        return started[-1]

    out = io.StringIO()
    watch = DashboardWatch(_exits(3), start, LOG, out=out)
    try:
        assert watch.check()
        assert watch.process is started[0] and watch.process.poll() is None
        said = out.getvalue()
        assert "the dashboard exited (code 3)" in said and str(LOG) in said
        assert "Restarting it (1 of 3)" in said and "answers again" in said
    finally:
        for process in started:
            process.kill()
            process.wait()


def test_restarts_are_bounded_and_then_the_watch_tells_up_to_stop() -> None:
    clock = Clock()
    out = io.StringIO()
    watch = DashboardWatch(
        _exits(1), lambda: _exits(1), LOG, budget=RestartBudget(2, 600.0, clock), out=out
    )
    assert watch.check() and watch.check()
    assert not watch.check()
    said = out.getvalue()
    assert said.count("Restarting it") == 2
    assert f"after 2 restarts; stopping. Its log: {LOG}" in said


def test_the_budget_refills_as_restarts_leave_the_window() -> None:
    clock = Clock()
    budget = RestartBudget(2, 600.0, clock)
    assert budget.take() and budget.take() and not budget.take()
    clock.now = 599.0
    assert not budget.take()
    clock.now = 600.0
    assert budget.take()
