"""Run `factledger serve` as a real child process on loopback, for end-to-end tests and
benchmarks.

Each service gets its own data directory, hence its own chDB path and write-ahead log.
Standard library only, so it runs wherever the service does.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType


def free_port() -> int:
    """A loopback port that the kernel will not hand to anyone else for about a minute.

    Binding port 0 and letting go leaves a gap before the server binds, in which any other
    process asking for a port may be given the same one (with tests on two workers, one
    lost its port that way). So the port is left holding a closed connection in TIME_WAIT,
    closed from its own side: the kernel skips it when it picks a port, for bind(0) and
    connect alike, until TIME_WAIT ends (60 s on Linux), while a server binding it with
    SO_REUSEADDR, as uvicorn, gRPC, tornado and http.server all do, takes it at once."""
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        address = listener.getsockname()
        with socket.create_connection(address):
            accepted, _ = listener.accept()
            accepted.close()  # first: the TIME_WAIT is kept on the port's side
        port: int = address[1]
        return port


class ServiceProcess:
    """`with ServiceProcess(data_dir, env) as svc:` starts the service and waits for /readyz."""

    def __init__(
        self,
        data_dir: Path,
        env: dict[str, str] | None = None,
        port: int | None = None,
        args: Sequence[str] = (),
        grpc_port: int | None = None,
    ):
        self.data_dir = data_dir
        self.port = port or free_port()
        self.grpc_port = grpc_port or free_port()
        """OTLP/gRPC's port: a free one of its own too, so services run side by side."""
        self.args = list(args)  # more `factledger serve` options, e.g. --host
        self.env = {
            **os.environ,
            "FACTLEDGER_DATA_DIR": str(data_dir),
            "FACTLEDGER_GRACE_SECONDS": "0.3",
            "FACTLEDGER_MAX_WAIT_SECONDS": "5",
            **(env or {}),
        }
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = data_dir / f"service-{self.port}.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def grpc_target(self) -> str:
        """Where an OTLP/gRPC exporter sends (`host:port`)."""
        return f"127.0.0.1:{self.grpc_port}"

    def start(self, timeout: float = 60.0) -> ServiceProcess:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "factledger.cli", "serve"),
                *("--port", str(self.port), "--grpc-port", str(self.grpc_port), *self.args),
            ],
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"service exited early:\n{self.log()}")
            if _ready(f"{self.url}/readyz"):
                return self
            time.sleep(0.1)
        # Not left running: a caller that sees the error has no handle to stop it with
        # (`with` never reaches __exit__ when __enter__ raises).
        self.stop()
        raise RuntimeError(f"service not ready within {timeout}s:\n{self.log()}")

    def kill9(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def __enter__(self) -> ServiceProcess:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1.0) as answer:
            return bool(answer.status == 200)
    except (OSError, ValueError):  # refused, reset, timed out, or an HTTP error status
        return False
