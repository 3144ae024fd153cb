"""Integration fixtures: one embedded ClickHouse (chDB) data path for the whole pytest
process, and a fresh database on it for every test.

chDB hosts one engine per process and refuses a second data path while a client is open,
so every in-process test that needs the engine takes `chdb_dsn` from here and isolates
itself by database name, never by path.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from factledger.collector.store import Store, StoreConfig

_SEQUENCE = itertools.count(1)


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


@pytest.fixture
def database_name(request: pytest.FixtureRequest) -> str:
    """A database name no other test of the process uses: a counter and the test's name."""
    slug = re.sub(r"[^A-Za-z0-9_]+", "_", request.node.name).strip("_")
    return f"t{next(_SEQUENCE)}_{slug}"[:64]


@pytest.fixture
def store_config(chdb_dsn: str, database_name: str) -> StoreConfig:
    return StoreConfig(dsn=chdb_dsn, database=database_name)


@pytest.fixture
def store(store_config: StoreConfig) -> Iterator[Store]:
    """An open store on this test's own database."""
    opened = Store.open(store_config)
    try:
        yield opened
    finally:
        opened.close()
