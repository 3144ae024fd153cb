"""Fixtures every test folder shares: one embedded ClickHouse (chDB) data path for the
whole pytest process; and how `make test` shares the tests between its two pytest-xdist
workers.

chDB hosts one engine per process and refuses a second data path while a client is open,
so every in-process test that needs the engine (integration tests, and browser tests
that serve a store of their own) takes `chdb_dsn` from here and isolates itself by
database name, never by path.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from factledger.collector.store import Store, StoreConfig

# Folders whose tests share session fixtures that take long to start (a service with
# seeded traffic, a dashboard and a browser; a service, the scripted LLM and each
# framework's run): each runs whole on one worker, so they start once.
WHOLE_FOLDERS = frozenset({"browser", "conformance"})


def work_unit(nodeid: str) -> str:
    """What a pytest-xdist worker takes at once for the test `nodeid`: its folder if that
    is one of WHOLE_FOLDERS, else its file (whose module fixtures then start once)."""
    path = nodeid.split("::", 1)[0]
    parts = path.split("/")
    return parts[1] if len(parts) > 2 and parts[1] in WHOLE_FOLDERS else path


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With `-n`, workers take work units in the order collected: the two longest, the
    browser and conformance folders, come first, one to each worker, and the files of the
    other folders fill in around them."""
    from xdist.scheduler import LoadScopeScheduling  # here: plain pytest needs no xdist

    class ByWorkUnit(LoadScopeScheduling):  # type: ignore[misc]  # xdist has no types
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    config.option.loadscopereorder = False  # collection order, not the most tests first
    return ByWorkUnit(config, log)


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
