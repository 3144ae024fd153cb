"""Integration fixtures: a fresh database for every test on the process's one embedded
ClickHouse (chDB) data path (`chdb_dsn`, tests/conftest.py)."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from factledger.collector.settings import ServiceSettings
from factledger.collector.store import Store, StoreConfig
from tests.integration.app_server import served_app

_SEQUENCE = itertools.count(1)


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


@pytest.fixture
def served(store: Store, tmp_path: Path) -> Iterator[str]:
    """The service's app over this test's store on a loopback port (its base URL), judging a
    turn 0.2 s after its last span."""
    settings = ServiceSettings(data_dir=tmp_path / "data", grace_seconds=0.2, max_wait_seconds=5)
    with served_app(settings, store) as url:
        yield url
