"""The service's app on a loopback port, in a thread of the test process, over a store
the test opened (chDB allows one process per data path, so the test keeps it)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from fastapi import FastAPI

from factledger.collector.app import create_app
from factledger.collector.ingest.wal import WriteAheadLog
from factledger.collector.settings import ServiceSettings
from factledger.collector.store import Store
from factledger.service_process import free_port

START_SECONDS = 30


@contextmanager
def served(app: FastAPI) -> Iterator[str]:
    """`app`'s base URL while the block runs (its lifespan has run: the gRPC receiver of
    settings with a `grpc_port` listens too); the server stops after it."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + START_SECONDS
    while not server.started:
        assert thread.is_alive(), "the app did not start (its log says why)"
        assert time.monotonic() < deadline, "the app did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)


@contextmanager
def served_app(
    settings: ServiceSettings, store: Store, wal: WriteAheadLog | None = None
) -> Iterator[str]:
    """The app of `settings` over `store` (and `wal`, when the test holds the log)."""
    with served(create_app(settings, store=store, wal=wal)) as url:
        yield url
