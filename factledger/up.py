"""`factledger up`: the product on one machine: the service on the embedded store, the
dashboard pointed at its API, and demo traffic so there is something to look at from the
first minute (a burst, then a slow trickle so the charts move).

Everything lives in the data directory (default ./.factledger): the embedded store
(`chdb/`), the write-ahead log (`wal/`) and the dashboard's log. Started again on the same
directory, the service finds what it stored before; demo traffic then goes only into a
store that holds nothing yet (DEMO_AUTO), so repeated starts do not pile demo turns up.
`fresh=True` removes the store and the log first.
"""

from __future__ import annotations

import fcntl
import logging
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Literal

import httpx
import uvicorn

from factledger.collector.access import DEFAULT_TENANT
from factledger.collector.app import create_app
from factledger.collector.service import Service
from factledger.collector.settings import ServiceSettings
from factledger.dashboard_cli import (
    dashboard_url,
    sigterm_interrupts,
    start_dashboard,
    stop,
    wait_healthy,
)
from factledger.dashboard_watch import DashboardWatch
from factledger.processors.errors import FactLedgerError

log = logging.getLogger("factledger.up")

READY_TIMEOUT_SECONDS = 120
DASHBOARD_TIMEOUT_SECONDS = 90
TRICKLE_RATE = 0.5
"""Demo turns per second after the first burst."""
TRICKLE_ROUND = 30

DemoMode = Literal["auto", "always", "never"]
DEMO_AUTO: DemoMode = "auto"
"""Demo traffic only into a store that holds no span yet."""


def run_up(
    settings: ServiceSettings,
    *,
    demo_turns: int,
    demo_rate: float | None,
    dashboard_port: int = 8501,
    demo: DemoMode = DEMO_AUTO,
    fresh: bool = False,
) -> int:
    """Serve until interrupted (Ctrl-C or SIGTERM): the service in this process, the
    dashboard as a child process (unless `dashboard_port` is 0; its output goes to
    <data dir>/dashboard.log), and `demo_turns` demo turns once the service is ready, then
    a trickle of TRICKLE_RATE turns per second; with `demo` "auto" only when the store
    holds nothing yet. `fresh` removes the embedded store and the write-ahead log first.
    A dashboard that exits is restarted, within `dashboard_watch`'s bounds; past them
    `up` stops and returns 1."""
    if fresh:
        for removed in clear_data(settings):
            print(f"removed {removed}", flush=True)
    app = create_app(settings)
    server = uvicorn.Server(
        uvicorn.Config(app, host=settings.host, port=settings.port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, name="factledger-service", daemon=True)
    thread.start()
    base = f"http://{settings.host}:{settings.port}"
    if not _wait_ready(base, thread):
        print("factledger: the service did not start; see the log above", file=sys.stderr)
        return 1
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    dashboard_log = settings.data_dir / "dashboard.log"
    log_file = dashboard_log.open("ab") if dashboard_port else None
    dashboard = None
    watch: DashboardWatch | None = None
    code = 0
    stopping = threading.Event()
    # SIGTERM (a service manager, `kill`) stops like Ctrl-C, so the dashboard process is
    # stopped too rather than left behind: in force before the dashboard starts.
    try:
        with sigterm_interrupts():
            if log_file is not None:
                output = log_file

                def restart() -> subprocess.Popen[bytes]:
                    return start_dashboard(base, port=dashboard_port, output=output)

                dashboard = restart()
                watch = DashboardWatch(
                    dashboard,
                    restart,
                    dashboard_log,
                    healthy=lambda process: wait_healthy(
                        dashboard_url(dashboard_port), process, DASHBOARD_TIMEOUT_SECONDS
                    ),
                )
            stored = _stored_spans(app.state.service)
            sending = demo_turns > 0 and (demo == "always" or (demo == DEMO_AUTO and not stored))
            if sending:
                threading.Thread(
                    target=_demo,
                    args=(base, demo_turns, demo_rate, stopping),
                    name="factledger-demo",
                    daemon=True,
                ).start()
            _announce(settings, base, dashboard, dashboard_port, dashboard_log)
            _announce_data(settings, stored, sending, demo)
            print("Press Ctrl-C to stop.", flush=True)
            while thread.is_alive():
                thread.join(0.5)
                if watch is not None and not watch.check():
                    code = 1
                    break
    except KeyboardInterrupt:
        pass
    finally:
        stopping.set()
        if watch is not None:
            stop(watch.process)
        elif dashboard is not None:
            stop(dashboard)
        if log_file is not None:
            log_file.close()
        server.should_exit = True
        # The service's own shutdown is bounded (flush, worker joins, alert delivery);
        # waiting for it lets open turns be judged and the store close cleanly.
        thread.join()
    return code


def clear_data(settings: ServiceSettings) -> list[Path]:
    """Remove the embedded store, the write-ahead log and the dashboard's log from the
    data directory (nothing else in it); return what was removed. Refuses a store that is
    not the data directory's own (not this command's to delete) and one that a running
    service has open."""
    if settings.store_dsn:
        raise FactLedgerError(
            f"--fresh removes the embedded store under {settings.data_dir}, but "
            "FACTLEDGER_STORE names another store; clear that one yourself, or unset it"
        )
    store = settings.data_dir / "chdb"
    if _in_use(store / "status"):
        raise FactLedgerError(
            f"--fresh would remove the store in {store}, which another process has open "
            "(a running factledger serve or up?); stop it first"
        )
    removed = []
    for path in (store, settings.wal_dir):
        if path.exists():
            shutil.rmtree(path)
            removed.append(path)
    log_path = settings.data_dir / "dashboard.log"
    if log_path.exists():
        log_path.unlink()
        removed.append(log_path)
    return removed


def _in_use(status: Path) -> bool:
    """Whether an embedded ClickHouse holds the store open: it keeps an exclusive lock on
    its status file while it runs."""
    try:
        handle = status.open("rb")
    except FileNotFoundError:
        return False
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False


def _stored_spans(service: Service) -> int:
    """Spans the store already holds for the demo's tenant (the only one it sends to)."""
    return service.store.span_count(DEFAULT_TENANT)


def _announce_data(settings: ServiceSettings, stored: int, sending: bool, demo: DemoMode) -> None:
    where = settings.data_dir
    print(f"Data                 {where}/   (store and write-ahead log; --fresh starts clean)")
    if stored and not sending and demo == DEMO_AUTO:
        print(
            f"Demo traffic         none: the store already holds {stored} spans "
            "(--demo always sends more, --fresh starts clean)"
        )
    elif sending:
        print("Demo traffic         sending (--demo never for none)")
    sys.stdout.flush()


def _announce(
    settings: ServiceSettings,
    base: str,
    dashboard: subprocess.Popen[bytes] | None,
    port: int,
    log_path: Path,
) -> None:
    print(f"FactLedger service   {base}   (OTLP/HTTP: {base}/v1/traces)")
    if settings.grpc_port:
        print(f"OTLP/gRPC            {settings.host}:{settings.grpc_port}")
    if dashboard is not None:
        url = dashboard_url(port)
        if wait_healthy(url, dashboard, DASHBOARD_TIMEOUT_SECONDS):
            print(f"Dashboard            {url}")
        else:
            print(f"Dashboard            {url}   (not answering; see {log_path})")
    print(f"Query API            {base}/api/v1   (OpenAPI: {base}/docs)")
    print(f"Metrics              {base}/metrics", flush=True)


def _wait_ready(base: str, thread: threading.Thread) -> bool:
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    while time.monotonic() < deadline and thread.is_alive():
        try:
            if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                return True
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    return False


def _demo(base: str, turns: int, rate: float | None, stopping: threading.Event) -> None:
    from factledger.demo import run_demo

    try:
        report = run_demo(base, turns=turns, rate=rate, progress=False)
        print(
            f"demo: sent {report.turns} turns ({report.clean} clean, "
            f"{report.turns - report.clean} with hallucinations); "
            f"continuing at {TRICKLE_RATE:g} turns/s",
            flush=True,
        )
        seed = 8
        while not stopping.is_set():
            run_demo(base, turns=TRICKLE_ROUND, seed=seed, rate=TRICKLE_RATE, progress=False)
            seed += 1
    except Exception as exc:  # the demo is a convenience; the service keeps running
        log.exception("demo traffic failed: %s", exc)
