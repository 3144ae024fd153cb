"""Insert retry and batch halving, each alone and stacked as the pipeline stacks them,
against the in-memory store: acknowledged rows are held through any failure a retry may
cure, a row refused for good is found by halving, dropped and counted, and its
neighbours are stored; stopping ends the wait without losing the batch."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from factledger.collector.ingest.memory import InMemoryStore
from factledger.collector.ingest.retry import (
    BatchHalving,
    InsertRetry,
    Writability,
)
from factledger.collector.ingest.sink import Rows
from factledger.collector.metrics import Metrics
from factledger.collector.rows import FINDING_COLUMNS
from factledger.collector.store import StoreError

NO_WAIT = (0.0,)
TRANSIENT = StoreError("disk full", retryable=True)
PERMANENT = StoreError("bad data", retryable=False)


def finding(index: int) -> list[object]:
    """A findings row whose Idx is `index` (the other columns do not matter here)."""
    row: list[object] = [""] * len(FINDING_COLUMNS)
    row[FINDING_COLUMNS.index("Idx")] = index
    return row


def batch(size: int) -> list[list[object]]:
    return [finding(i) for i in range(size)]


def stored(store: InMemoryStore) -> list[int]:
    return [row["Idx"] for row in store.rows("findings")]


def direct(store: InMemoryStore) -> Callable[[Rows], bool]:
    """Sends straight to the store, as a retry does once the store takes the batch."""

    def send(rows: Rows) -> bool:
        store.insert_findings(rows)
        return True

    return send


def retry(store: InMemoryStore, metrics: Metrics, writability: Writability) -> InsertRetry:
    return InsertRetry(
        "findings", store.insert_findings, metrics, writability, threading.Event(), NO_WAIT
    )


@pytest.mark.parametrize(
    "errors",
    [[TRANSIENT], [TRANSIENT, TRANSIENT, TRANSIENT], [OSError("connection reset")]],
    ids=["one-retryable-failure", "three-in-a-row", "an-unknown-error-counts-as-transient"],
)
def test_retry_holds_the_batch_until_the_store_takes_it(errors: list[Exception]) -> None:
    store, metrics, writability = InMemoryStore(), Metrics(), Writability()
    store.fail("findings", *errors)
    assert retry(store, metrics, writability)(batch(3))
    assert stored(store) == [0, 1, 2]
    assert store.attempts("findings") == [3] * (len(errors) + 1)
    assert metrics.value("factledger_store_errors_total", table="findings") == len(errors)
    assert writability.writable  # the last insert succeeded


def test_the_table_is_unwritable_from_a_retryable_failure_until_an_insert_succeeds() -> None:
    store, writability = InMemoryStore(), Writability()
    seen: list[bool] = []

    def insert(rows: Rows) -> object:
        seen.append(writability.writable)
        if len(seen) < 3:
            raise TRANSIENT
        return store.insert_findings(rows)

    send = InsertRetry("findings", insert, Metrics(), writability, threading.Event(), NO_WAIT)
    assert send(batch(1))
    assert seen == [True, False, False]
    assert writability.writable


def test_retry_raises_a_permanent_refusal_at_once_without_marking_the_table() -> None:
    store, metrics, writability = InMemoryStore(), Metrics(), Writability()
    store.fail("findings", PERMANENT)
    with pytest.raises(StoreError) as raised:
        retry(store, metrics, writability)(batch(2))
    assert raised.value is PERMANENT
    assert store.attempts("findings") == [2]
    assert writability.writable
    assert metrics.value("factledger_store_errors_total", table="findings") == 0


def test_retry_backs_off_by_its_delays_and_the_last_repeats() -> None:
    waits: list[float] = []

    class Stop(threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            waits.append(timeout or 0.0)
            return False

    store = InMemoryStore()
    store.fail("findings", *[TRANSIENT] * 4)
    send = InsertRetry(
        "findings", store.insert_findings, Metrics(), Writability(), Stop(), (0.2, 0.5)
    )
    assert send(batch(1))
    assert waits == [0.2, 0.5, 0.5, 0.5]


def test_stopping_ends_the_wait_and_keeps_the_batch_unstored() -> None:
    store, writability = InMemoryStore(), Writability()
    store.fail("findings", TRANSIENT)
    stop = threading.Event()
    stop.set()
    send = InsertRetry("findings", store.insert_findings, Metrics(), writability, stop, (60.0,))
    assert not send(batch(2))
    assert stored(store) == []
    assert not writability.writable  # still failing: requests stay refused


@pytest.mark.parametrize(
    ("size", "bad", "attempts"),
    [
        (1, {0}, [1]),
        (4, {2}, [4, 2, 2, 1, 1]),
        (5, {0, 4}, [5, 2, 1, 1, 3, 1, 2, 1, 1]),
        (4, {0, 1, 2, 3}, [4, 2, 1, 1, 2, 1, 1]),
    ],
    ids=["a-lone-bad-row", "one-bad-row-among-four", "bad-rows-at-both-ends", "every-row-bad"],
)
def test_halving_drops_only_the_rows_the_store_refuses(
    size: int, bad: set[int], attempts: list[int]
) -> None:
    store, metrics = InMemoryStore(), Metrics()
    store.refuse("findings", lambda row: row["Idx"] in bad)
    send = BatchHalving("findings", direct(store), metrics)
    assert send(batch(size))
    assert stored(store) == [i for i in range(size) if i not in bad]
    assert store.attempts("findings") == attempts
    dropped = metrics.value("factledger_rows_dropped_total", table="findings", reason="unstorable")
    assert dropped == len(bad)


def test_halving_lets_a_retryable_error_through() -> None:
    store = InMemoryStore()
    store.fail("findings", TRANSIENT)
    with pytest.raises(StoreError) as raised:
        BatchHalving("findings", direct(store), Metrics())(batch(2))
    assert raised.value is TRANSIENT


def test_stacked_a_half_that_meets_a_full_disk_is_retried_not_split() -> None:
    """As the pipeline stacks them: halving around retry around the store's insert."""
    store, metrics, writability = InMemoryStore(), Metrics(), Writability()
    store.refuse("findings", lambda row: row["Idx"] == 3)
    calls = 0

    def insert(rows: Rows) -> object:
        nonlocal calls
        calls += 1
        if calls == 2:  # the first half's first attempt
            raise TRANSIENT
        return store.insert_findings(rows)

    inner = InsertRetry("findings", insert, metrics, writability, threading.Event(), NO_WAIT)
    assert BatchHalving("findings", inner, metrics)(batch(4))
    assert stored(store) == [0, 1, 2]
    assert store.attempts("findings") == [4, 2, 2, 1, 1]  # the failed attempt never reached it
    assert metrics.value("factledger_store_errors_total", table="findings") == 1
    dropped = metrics.value("factledger_rows_dropped_total", table="findings", reason="unstorable")
    assert dropped == 1
    assert writability.writable
