"""What a service stored and showed, as text to search for secrets: every table of its
store (read by a separate process through the store's own client, because chDB holds one
data path per process), its query API's answers and its metrics."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

_DUMP = """
import json, sys
from factledger.collector.store import Store, StoreConfig
store = Store.open(StoreConfig(dsn=sys.argv[1], database=sys.argv[2]))
try:
    tables = [
        row["name"]
        for row in store._query(
            "SELECT name FROM system.tables WHERE database = {db:String}"
            " AND engine NOT LIKE '%View'",
            {"db": sys.argv[2]},
        )
    ]
    client = store._live()
    dump = {
        table: client.raw_query(
            f"SELECT * FROM {sys.argv[2]}.{table}", fmt="TabSeparated"
        ).decode("utf-8", "replace")
        for table in tables
    }
finally:
    store.close()
json.dump(dump, sys.stdout)
"""


def stored_tables(data_dir: Path, database: str = "factledger") -> dict[str, str]:
    """Every table (views left out: they read the tables) of the stopped service's store,
    as TabSeparated text by table name."""
    dsn = f"chdb://{(data_dir / 'chdb').resolve()}"
    done = subprocess.run(
        [sys.executable, "-c", _DUMP, dsn, database],
        capture_output=True,
        check=True,
        timeout=120,
    )
    tables: dict[str, str] = json.loads(done.stdout)
    return tables


def judged_turns(url: str, expected: int, timeout: float = 90.0) -> list[dict[str, Any]]:
    """The service's judged turns (each as `/api/v1/turns/{id}` shows it), once `expected`
    of them are listed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        page = httpx.get(
            f"{url}/api/v1/turns",
            params={"verdict": ["reject", "flag", "pass"], "limit": 500},
            timeout=10,
        ).json()
        if page["total"] >= expected:
            return [
                httpx.get(f"{url}/api/v1/turns/{t['turn_id']}", timeout=10).json()
                for t in page["turns"]
            ]
        time.sleep(0.2)
    raise AssertionError(f"fewer than {expected} turns judged in {timeout}s")
