"""Fixtures every test folder shares: one embedded ClickHouse (chDB) data path for the
whole pytest process.

chDB hosts one engine per process and refuses a second data path while a client is open,
so every in-process test that needs the engine (integration tests, and browser tests
that serve a store of their own) takes `chdb_dsn` from here and isolates itself by
database name, never by path.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from factledger.collector.store import Store, StoreConfig


@pytest.fixture(scope="session")
def chdb_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The one chDB data directory of this pytest process."""
    return tmp_path_factory.mktemp("chdb")


@pytest.fixture(scope="session")
def chdb_dsn(chdb_path: Path) -> Iterator[str]:
    """The DSN of that path. A store stays open on it for the whole session: the engine
    starts once, instead of once per test (a restart reloads every test's database)."""
    dsn = f"chdb://{chdb_path}"
    keeper = Store.open(StoreConfig(dsn=dsn, database="session_keeper"))
    try:
        yield dsn
    finally:
        keeper.close()
