"""Peer products run for real on loopback, each from its own virtualenv under .peers/
(built by `make peers` from tests/peers/*.txt: their dependencies clash with ours).

A missing virtualenv fails the test under CI=true and skips it elsewhere, naming the
make command that builds it.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from factledger.service_process import free_port

ROOT = Path(__file__).resolve().parents[2]


def peer_bin(peer: str, program: str) -> Path:
    """`program` of the virtualenv of `peer`, which must have been built whole."""
    venv = ROOT / ".peers" / peer
    if not (venv / ".installed").exists():
        message = f"the {peer} virtualenv is missing: build it with `make peers`"
        if os.environ.get("CI", "").strip().lower() in ("1", "true", "yes"):
            pytest.fail(message)
        pytest.skip(message)
    return venv / "bin" / program


@contextmanager
def serving(
    command: list[str], env: Mapping[str, str], ready_url: str, log: Path, timeout: float = 300
) -> Iterator[None]:
    """Run `command` until the block ends; enter once `ready_url` answers 200."""
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT
        )
        try:
            deadline = time.monotonic() + timeout
            while True:
                if process.poll() is not None:
                    pytest.fail(f"{command[0]} exited: {log.read_text()[-2000:]}")
                try:
                    if httpx.get(ready_url, timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    pytest.fail(f"{command[0]} did not start: {log.read_text()[-2000:]}")
                time.sleep(0.5)
            yield
        finally:
            process.terminate()
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@contextmanager
def phoenix_server(workdir: Path) -> Iterator[str]:
    """A Phoenix server (SQLite in `workdir`) on loopback; its base URL."""
    port = free_port()
    env = {
        "PHOENIX_WORKING_DIR": str(workdir),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(free_port()),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    url = f"http://127.0.0.1:{port}"
    program = peer_bin("phoenix", "phoenix")
    with serving([str(program), "serve"], env, f"{url}/healthz", workdir / "serve.log"):
        yield url


@contextmanager
def mlflow_server(workdir: Path) -> Iterator[str]:
    """An MLflow tracking server (SQLite in `workdir`) on loopback; its base URL."""
    port = free_port()
    command = [
        str(peer_bin("mlflow", "mlflow")),
        "server",
        "--backend-store-uri",
        f"sqlite:///{workdir / 'mlflow.db'}",
        "--default-artifact-root",
        str(workdir / "artifacts"),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        "1",
    ]
    url = f"http://127.0.0.1:{port}"
    with serving(command, {}, f"{url}/health", workdir / "server.log"):
        yield url
