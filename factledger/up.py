"""`factledger up`: the product on one machine: the service on the embedded store, and
demo traffic so there is something to look at from the first minute."""

from __future__ import annotations

import logging
import sys
import threading
import time

import httpx
import uvicorn

from factledger.collector.app import create_app
from factledger.settings import ServiceSettings

log = logging.getLogger("factledger.up")

READY_TIMEOUT_SECONDS = 120


def run_up(settings: ServiceSettings, *, demo_turns: int, demo_rate: float | None) -> int:
    """Serve until interrupted; send `demo_turns` demo turns once the service is ready."""
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
    print(f"FactLedger service   {base}   (OTLP/HTTP: {base}/v1/traces)")
    print(f"Query API            {base}/api/v1   (OpenAPI: {base}/docs)")
    print(f"Metrics              {base}/metrics")
    if demo_turns:
        threading.Thread(
            target=_demo, args=(base, demo_turns, demo_rate), name="factledger-demo", daemon=True
        ).start()
    print("Press Ctrl-C to stop.", flush=True)
    try:
        while thread.is_alive():
            thread.join(0.5)
    except KeyboardInterrupt:
        server.should_exit = True
        thread.join(30)
    return 0


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


def _demo(base: str, turns: int, rate: float | None) -> None:
    from factledger.demo import run_demo

    try:
        report = run_demo(base, turns=turns, rate=rate, progress=False)
        print(
            f"demo: sent {report.turns} turns ({report.clean} clean, "
            f"{report.turns - report.clean} with hallucinations)",
            flush=True,
        )
    except Exception as exc:  # the demo is a convenience; the service keeps running
        log.exception("demo traffic failed: %s", exc)
