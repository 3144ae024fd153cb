"""`factledger up`: the product on one machine: the service on the embedded store, the
dashboard pointed at its API, and demo traffic so there is something to look at from the
first minute (a burst, then a slow trickle so the charts move)."""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import FrameType

import httpx
import uvicorn

from factledger.collector.app import create_app
from factledger.dashboard_cli import dashboard_url, start_dashboard, stop, wait_healthy
from factledger.settings import ServiceSettings

log = logging.getLogger("factledger.up")

READY_TIMEOUT_SECONDS = 120
DASHBOARD_TIMEOUT_SECONDS = 90
TRICKLE_RATE = 0.5
"""Demo turns per second after the first burst."""
TRICKLE_ROUND = 30


def run_up(
    settings: ServiceSettings,
    *,
    demo_turns: int,
    demo_rate: float | None,
    dashboard_port: int = 8501,
) -> int:
    """Serve until interrupted (Ctrl-C or SIGTERM): the service in this process, the
    dashboard as a child process (unless `dashboard_port` is 0; its output goes to
    <data dir>/dashboard.log), and `demo_turns` demo turns once the service is ready, then
    a trickle of TRICKLE_RATE turns per second."""
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(settings), host=settings.host, port=settings.port, log_level="warning"
        )
    )
    thread = threading.Thread(target=server.run, name="factledger-service", daemon=True)
    thread.start()
    base = f"http://{settings.host}:{settings.port}"
    if not _wait_ready(base, thread):
        print("factledger: the service did not start; see the log above", file=sys.stderr)
        return 1
    # SIGTERM (a service manager, `kill`) stops like Ctrl-C, so the dashboard process is
    # stopped too rather than left behind: installed before the dashboard starts.
    previous = signal.signal(signal.SIGTERM, _interrupt)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    dashboard_log = settings.data_dir / "dashboard.log"
    log_file = dashboard_log.open("ab") if dashboard_port else None
    dashboard = None
    stopping = threading.Event()
    try:
        if log_file is not None:
            dashboard = start_dashboard(base, port=dashboard_port, output=log_file)
        if demo_turns:
            threading.Thread(
                target=_demo,
                args=(base, demo_turns, demo_rate, stopping),
                name="factledger-demo",
                daemon=True,
            ).start()
        _announce(base, dashboard, dashboard_port, dashboard_log)
        print("Press Ctrl-C to stop.", flush=True)
        while thread.is_alive():
            thread.join(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        stopping.set()
        if dashboard is not None:
            stop(dashboard)
        if log_file is not None:
            log_file.close()
        server.should_exit = True
        # The service's own shutdown is bounded (flush, worker joins, alert delivery);
        # waiting for it lets open turns be judged and the store close cleanly.
        thread.join()
    return 0


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _announce(
    base: str, dashboard: subprocess.Popen[bytes] | None, port: int, log_path: Path
) -> None:
    print(f"FactLedger service   {base}   (OTLP/HTTP: {base}/v1/traces)")
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
