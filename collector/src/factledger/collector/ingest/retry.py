"""Inserting rows that were acknowledged: retried while the store cannot write, halved
when it refuses a row for good. Two wrappers around one `Send`, each testable alone:

    BatchHalving ──▶ InsertRetry ──▶ the store's insert

`InsertRetry` waits out a store that is unavailable or cannot write (a full disk): the
rows are held, never dropped, and `Writability` says the table is failing so that new
requests are refused meanwhile. A permanent refusal (bad data) passes through it at once
to `BatchHalving`, which halves the batch until the rows the store refuses are alone,
drops and counts those, and stores the rest, so one bad row never blocks the rows around
it. Both return False only when stopping first: the caller keeps the rows (the spans stay
in the write-ahead log for the next start).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from factledger.collector.metrics import Metrics
from factledger.collector.store import StoreError

from .sink import Rows

log = logging.getLogger("factledger.pipeline")

RETRY_SECONDS = (0.2, 0.5, 1.0, 2.0, 5.0)
"""Waits between attempts; the last repeats."""

Insert = Callable[[Rows], object]
"""One attempt at a table: returns once written, raises `StoreError` (or anything) if not."""

Send = Callable[[Rows], bool]
"""Rows to store: True once stored (or, for rows refused for good, counted as dropped),
False when stopping first."""


class Writability:
    """The tables whose last insert failed in a way a retry may cure. Written by one
    thread per table at a time; read by any."""

    def __init__(self) -> None:
        self._failing: set[str] = set()

    @property
    def writable(self) -> bool:
        """False from such a failure until an insert into that table succeeds again."""
        return not self._failing

    def failing(self, table: str) -> None:
        self._failing.add(table)

    def recovered(self, table: str) -> None:
        self._failing.discard(table)


class InsertRetry:
    """Send a batch with `insert`, retrying every failure but a permanent `StoreError`
    (which it raises at once), backing off by `delays`, until it succeeds or `stop` is set.
    An exception of unknown kind counts as transient: it is logged and retried."""

    def __init__(
        self,
        table: str,
        insert: Insert,
        metrics: Metrics,
        writability: Writability,
        stop: threading.Event,
        delays: Sequence[float] = RETRY_SECONDS,
    ) -> None:
        self._table = table
        self._insert = insert
        self._metrics = metrics
        self._writability = writability
        self._stop = stop
        self._delays = delays

    def __call__(self, batch: Rows) -> bool:
        attempt = 0
        while True:
            try:
                self._insert(batch)
                self._writability.recovered(self._table)
                return True
            except StoreError as exc:
                if not exc.retryable:
                    raise
                error: Exception = exc
            except Exception as exc:  # unknown failure: treat as transient, log it
                error = exc
            self._writability.failing(self._table)
            delay = self._delays[min(attempt, len(self._delays) - 1)]
            log.warning("inserting %s failed (%s); retrying in %.1fs", self._table, error, delay)
            self._metrics.inc("factledger_store_errors_total", table=self._table)
            attempt += 1
            if self._stop.wait(delay):
                return False


class BatchHalving:
    """Send a batch with `send`; when it raises a permanent `StoreError`, send each half
    the same way, and drop (counting it) a single row the store refuses."""

    def __init__(self, table: str, send: Send, metrics: Metrics) -> None:
        self._table = table
        self._send = send
        self._metrics = metrics

    def __call__(self, batch: Rows) -> bool:
        try:
            return self._send(batch)
        except StoreError as exc:
            if exc.retryable:
                raise
            return self._split(batch, exc)

    def _split(self, batch: Rows, error: StoreError) -> bool:
        if len(batch) == 1:
            log.error("dropping a %s row the store refuses: %s", self._table, error)
            self._metrics.inc(
                "factledger_rows_dropped_total", table=self._table, reason="unstorable"
            )
            return True
        middle = len(batch) // 2
        return self(batch[:middle]) and self(batch[middle:])
