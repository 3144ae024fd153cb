"""The real ClickHouse client with span inserts that misbehave on cue, as a disk or a
server does: for tests of what the receivers answer while the store cannot keep up.

Wrap `store._live()` and open a `Store(cast(Client, wrapper), store.config)` over it;
every other call reaches the real client.
"""

from __future__ import annotations

import threading
from typing import Any

from clickhouse_connect.driver.exceptions import DatabaseError

NO_SPACE = "Code: 243. DB::Exception: Cannot reserve 1.00 MiB, not enough space. (NOT_ENOUGH_SPACE)"


class DiskFullClient:
    """The real client, except that span inserts fail as chDB fails them on a full disk
    while `full` is set (through the driver's own exception, so the store classifies it)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.full = threading.Event()
        self.refused = threading.Event()

    def insert(self, table: str, *args: Any, **kwargs: Any) -> Any:
        if table == "spans" and self.full.is_set():
            self.refused.set()
            raise DatabaseError(NO_SPACE, code=243, name="NOT_ENOUGH_SPACE")
        return self._client.insert(table, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


class SlowSpansClient:
    """The real client, except that span inserts wait until `go` is set (a store that
    has fallen behind): accepted spans stay in the backlog meanwhile. `waiting` is set
    once an insert waits."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.go = threading.Event()
        self.waiting = threading.Event()

    def insert(self, table: str, *args: Any, **kwargs: Any) -> Any:
        if table == "spans" and not self.go.is_set():
            self.waiting.set()
            assert self.go.wait(60)
        return self._client.insert(table, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)
