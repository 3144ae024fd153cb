"""`factledger dashboard`: run the Streamlit dashboard against a running service.

The dashboard is its own process (`python -m streamlit run .../factledger/dashboard/app.py`); it
learns the service's URL from FACTLEDGER_API and reads only its /api/v1. SIGTERM stops it
with its parent: in a container `factledger dashboard` is PID 1, which the kernel sends no
signal it has no handler for, and a parent killed by the default handler would leave the
Streamlit process running.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from importlib import resources
from types import FrameType
from typing import IO

import httpx

from factledger.dashboard.client import API_ENV, DEFAULT_API_URL
from factledger.dashboard.palette import theme_options

DEFAULT_DASHBOARD_PORT = 8501
DEFAULT_DASHBOARD_HOST = "127.0.0.1"
HEALTH_PATH = "/_stcore/health"


def app_path() -> str:
    """The Streamlit entry script inside the installed package."""
    return str(resources.files("factledger.dashboard") / "app.py")


def streamlit_command(
    *, port: int, host: str = DEFAULT_DASHBOARD_HOST, python: str = sys.executable
) -> list[str]:
    """The command line that serves the dashboard: headless, no usage statistics, no
    file watching (nothing is edited under a running dashboard), and the dashboard's
    theme (`palette.theme_options`: red only for rejects, amber only for flags)."""
    return [
        python,
        "-m",
        "streamlit",
        "run",
        app_path(),
        "--server.port",
        str(port),
        "--server.address",
        host,
        "--server.headless",
        "true",
        "--server.fileWatcherType",
        "none",
        "--server.runOnSave",
        "false",
        "--browser.gatherUsageStats",
        "false",
        "--client.toolbarMode",
        "viewer",
        *theme_options(),
    ]


def dashboard_env(api_url: str, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of the dashboard process: `base` (default os.environ) plus the API
    URL; Streamlit's usage statistics stay off even if a config file turns them on."""
    env = dict(os.environ if base is None else base)
    env[API_ENV] = api_url.rstrip("/")
    env["STREAMLIT_BROWSER_GATHER_USAGE_STATS"] = "false"
    return env


def dashboard_url(port: int, host: str = DEFAULT_DASHBOARD_HOST) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
    return f"http://{shown}:{port}"


def start_dashboard(
    api_url: str,
    *,
    port: int = DEFAULT_DASHBOARD_PORT,
    host: str = DEFAULT_DASHBOARD_HOST,
    output: IO[bytes] | int | None = None,
) -> subprocess.Popen[bytes]:
    """Start the dashboard process; its output goes to `output` (default: inherited)."""
    return subprocess.Popen(
        streamlit_command(port=port, host=host),
        env=dashboard_env(api_url),
        stdout=output,
        stderr=subprocess.STDOUT if output is not None else None,
    )


def wait_healthy(url: str, process: subprocess.Popen[bytes], timeout: float = 60.0) -> bool:
    """Wait until Streamlit answers its health check; False if the process exits or
    `timeout` seconds pass first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(url + HEALTH_PATH, timeout=1.0).status_code == 200:
                return True
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    return False


def stop(process: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """Terminate the dashboard process, then kill it if it lingers. Idempotent."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout)


@contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """Within the block SIGTERM raises KeyboardInterrupt in the main thread, as Ctrl-C
    does, so the `finally` blocks that stop child processes run; restored on exit."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_dashboard(
    api_url: str = DEFAULT_API_URL,
    *,
    port: int = DEFAULT_DASHBOARD_PORT,
    host: str = DEFAULT_DASHBOARD_HOST,
) -> int:
    """Serve the dashboard in the foreground until interrupted (Ctrl-C or SIGTERM, which
    stop the Streamlit process too); returns the exit code."""
    process: subprocess.Popen[bytes] | None = None
    try:
        with sigterm_interrupts():
            process = start_dashboard(api_url, port=port, host=host)
            url = dashboard_url(port, host)
            if wait_healthy(url, process):
                print(f"FactLedger dashboard {url}   (API: {api_url})", flush=True)
            return process.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        if process is not None:
            stop(process)
