"""The store's connection: the only module that talks to `clickhouse_connect`. It runs
queries with bound parameters, inserts column-oriented batches with a deduplication
token, and turns the driver's failures into `StoreError` (retryable or not)."""

from __future__ import annotations

import hashlib
import logging
import re
import struct
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from clickhouse_connect.driver import options as driver_options
from clickhouse_connect.driver.client import Client
from clickhouse_connect.driver.exceptions import ClickHouseError, OperationalError

from factledger.processors.errors import FactLedgerError

from .config import StoreConfig

# The driver imports pandas at the first insert only to ask whether the rows are a
# DataFrame; the store never passes one, nor asks for one back. Saying pandas is absent
# keeps it out of the service: about 67 MiB of resident memory and 0.3 s of CPU at start.
# (A module global the driver resolves lazily; one already resolved is left as it is.)
driver_options.__dict__.setdefault("pd", None)
driver_options.__dict__.setdefault("pd_time_test", None)

INSERT_CHUNK_ROWS = 50_000
"""Rows per INSERT at most: bounds one request's memory; batches below it go in whole."""

# ClickHouse error codes worth a retry: timeouts, overload, network, too many parts, and
# the disk and resource errors (a full disk, no memory, a file that cannot be written or
# opened, a system call that failed). Those say nothing about the rows: refusing them as
# bad data would drop spans already acknowledged.
_RETRYABLE_CODES = frozenset(
    {
        74,  # CANNOT_READ_FROM_FILE_DESCRIPTOR
        75,  # CANNOT_WRITE_TO_FILE_DESCRIPTOR
        76,  # CANNOT_OPEN_FILE
        77,  # CANNOT_CLOSE_FILE
        159,  # TIMEOUT_EXCEEDED
        173,  # CANNOT_ALLOCATE_MEMORY
        202,  # TOO_MANY_SIMULTANEOUS_QUERIES
        209,  # SOCKET_TIMEOUT
        210,  # NETWORK_ERROR
        236,  # ABORTED
        241,  # MEMORY_LIMIT_EXCEEDED
        242,  # TABLE_IS_READ_ONLY
        243,  # NOT_ENOUGH_SPACE
        252,  # TOO_MANY_PARTS
        319,  # UNKNOWN_STATUS_OF_INSERT
        425,  # SYSTEM_ERROR
        439,  # CANNOT_SCHEDULE_TASK
    }
)
# The same failures seen in the text, for an error that carries no code (or the generic
# one of a wrapped system error): errno 28 is ENOSPC, 12 ENOMEM, 24 EMFILE.
_RESOURCE_TEXT = re.compile(
    r"not enough space|no space left on device|errno:? 28\b|cannot allocate memory"
    r"|errno:? 12\b|memory limit|too many open files|errno:? 24\b|disk quota exceeded",
    re.IGNORECASE,
)


class StoreError(FactLedgerError):
    """A call to ClickHouse failed. `retryable` is True when the same call may succeed
    later (timeouts, overload, a lost connection, a full disk, no memory); False for bad
    data or bad SQL."""

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


_DEDUP_KEYS: Mapping[str, tuple[int, ...]] = {
    "spans": (1, 2, 3),  # Tenant, TraceId, SpanId
    "turns": (0, 1, 2),  # Tenant, TurnId, Version
    "findings": (0, 1, 2, 3),  # Tenant, TurnId, Version, Idx
    "snapshots": (0, 1, 4, 5),  # Tenant, Hash, CallId, TurnId
    "turn_evidence": (0, 1, 2),  # Tenant, TurnId, Version
    "verifications": (0, 1, 2, 3),  # Tenant, TurnId, Version, Idx
}
"""Positions of the columns that identify a row, per table; other tables hash whole rows."""


def deduplication_token(table: str, rows: Sequence[Sequence[Any]]) -> str:
    """The `insert_deduplication_token` of one INSERT: equal for a resend of the same rows,
    so ClickHouse stores a retried batch once (tables keep a deduplication window: see
    schemas/008_deduplication.sql). Spans, turn versions and findings are identified by
    their ids; a span is immutable once ended, so equal ids mean an equal row."""
    digest = hashlib.blake2b(table.encode(), digest_size=16)
    positions = _DEDUP_KEYS.get(table)
    for row in rows:
        picked = [row[i] for i in positions] if positions else row
        digest.update(repr(picked).encode())
        digest.update(b"\0")
    return digest.hexdigest()


class _SerializationErrorFilter(logging.Filter):
    """The driver logs a full traceback for every value it cannot serialize, then raises;
    `_translated` turns that into a StoreError carrying the same reason, and the caller
    logs it once per row it drops. Without this filter one bad row in a batch of n logs
    about log2(n) tracebacks while the batch is halved down to it."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Error serializing column")


logging.getLogger("clickhouse_connect.driver.transform").addFilter(_SerializationErrorFilter())


def _retryable(exc: ClickHouseError) -> bool:
    """True for a failure of the store rather than of the data: the same call may succeed
    once the server is back, the disk has room or memory is free."""
    if isinstance(exc, OperationalError) or getattr(exc, "code", None) in _RETRYABLE_CODES:
        return True
    return _RESOURCE_TEXT.search(str(exc)) is not None


@contextmanager
def _translated(action: str) -> Iterator[None]:
    try:
        yield
    except ClickHouseError as exc:
        raise StoreError(f"{action} failed: {exc}", retryable=_retryable(exc)) from exc
    except (ValueError, TypeError, OverflowError, struct.error) as exc:
        # The driver serializes rows itself and lets Python's own errors through: a value
        # of the wrong type for its column. Sending the same rows again cannot help.
        raise StoreError(f"{action} failed: {exc!r}", retryable=False) from exc


class Connection:
    """A live connection to one database: queries, inserts and closing. The store's
    query families (`collector.store.turns`, ...) are built on it."""

    def __init__(self, client: Client, config: StoreConfig) -> None:
        self._client: Client | None = client
        self._config = config
        self._db = config.database
        self._close_lock = threading.Lock()

    @property
    def config(self) -> StoreConfig:
        return self._config

    def close(self) -> None:
        """Release the connection. Idempotent; later calls raise StoreError."""
        with self._close_lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def _live(self) -> Client:
        client = self._client
        if client is None:
            raise StoreError("the store is closed", retryable=False)
        return client

    def _sql(self, text: str) -> str:
        return text.replace("{db}", self._db)

    def _query(self, sql: str, params: Mapping[str, Any]) -> list[dict[str, Any]]:
        client = self._live()
        with _translated("query"):
            result = client.query(self._sql(sql), parameters=dict(params))
            return list(result.named_results())

    def _scalar(self, sql: str, params: Mapping[str, Any]) -> int:
        rows = self._query(sql, params)
        return int(next(iter(rows[0].values()))) if rows else 0

    def _insert(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> int:
        width = len(columns)
        for row in rows:
            if len(row) != width:
                raise ValueError(f"a {table} row has {len(row)} values, not {width}")
        client = self._live()
        for start in range(0, len(rows), INSERT_CHUNK_ROWS):
            chunk = rows[start : start + INSERT_CHUNK_ROWS]
            data = [list(column) for column in zip(*chunk, strict=True)]
            with _translated(f"insert into {table}"):
                client.insert(
                    table,
                    data,
                    column_names=list(columns),
                    database=self._db,
                    column_oriented=True,
                    settings={
                        "insert_deduplication_token": deduplication_token(table, chunk),
                        # A view's target (turn_versions) skips the block its source skipped.
                        "deduplicate_blocks_in_dependent_materialized_views": 1,
                    },
                )
        return len(rows)
