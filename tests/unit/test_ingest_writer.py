"""The span writer against the in-memory store: a batch is stored, then released from
the write-ahead log and handed on to assembly, its spans moved from pending to
unassembled; stopping before the store takes it keeps it in the log and out of both."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from factledger.collector.ingest.admission import Backlog
from factledger.collector.ingest.memory import InMemoryStore
from factledger.collector.ingest.retry import InsertRetry, Writability
from factledger.collector.ingest.wal import WriteAheadLog
from factledger.collector.ingest.watermark import StoredMark
from factledger.collector.ingest.writer import Batch, SpanWriter
from factledger.collector.metrics import Metrics
from factledger.collector.store import StoreError
from factledger.processors.spans import SpanRecord


def spans(trace: int, count: int) -> tuple[SpanRecord, ...]:
    return tuple(
        SpanRecord(trace_id=f"{trace:032x}", span_id=f"{trace:08x}{i:08x}", name=f"span {i}")
        for i in range(count)
    )


class Stage:
    """A writer wired as the pipeline wires it, over a real log in a temporary folder."""

    def __init__(self, folder: Path) -> None:
        self.store = InMemoryStore()
        self.metrics = Metrics()
        self.backlog = Backlog(100, 10_000, self.metrics)
        self.wal = WriteAheadLog(folder)
        self.stop = threading.Event()
        self.mark = StoredMark(self.wal)
        self.handed_on: list[tuple[SpanRecord, ...]] = []
        send = InsertRetry(
            "spans", self.store.insert_spans, self.metrics, Writability(), self.stop, (0.0,)
        )
        self.writer = SpanWriter(
            send,
            self.wal,
            self.mark,
            self.backlog,
            self.metrics,
            self.stop,
            self.handed_on.append,
        )

    def accept(self, batch: tuple[SpanRecord, ...], size: int = 100) -> int:
        self.backlog.admit(len(batch), size)
        seq = self.mark.append("application/json", "default", b"{}")
        self.writer.put(Batch(seq, batch, size))
        return seq


@pytest.fixture
def stage(tmp_path: Path) -> Iterator[Stage]:
    built = Stage(tmp_path / "wal")
    yield built
    built.wal.close()


def test_stored_spans_are_released_from_the_log_and_handed_on(stage: Stage) -> None:
    first, second = spans(1, 2), spans(2, 3)
    stage.accept(first)
    last = stage.accept(second)
    stage.writer.write_once()  # both requests in one insert
    assert stage.store.attempts("spans") == [5]
    assert [row["SpanId"] for row in stage.store.rows("spans")] == [
        s.span_id for s in (*first, *second)
    ]
    assert stage.handed_on == [(*first, *second)]
    assert (stage.backlog.pending, stage.backlog.unassembled, stage.backlog.bytes) == (0, 5, 200)
    assert stage.wal.released == last
    assert stage.metrics.value("factledger_spans_stored_total") == 5


def test_stopping_before_the_store_takes_a_batch_keeps_it_in_the_log(stage: Stage) -> None:
    stage.store.fail("spans", StoreError("disk full", retryable=True))
    stage.stop.set()
    stage.accept(spans(1, 2))
    stage.writer.write_once()
    assert stage.store.rows("spans") == []
    assert stage.handed_on == []
    assert stage.backlog.empty
    assert stage.wal.released == 0
    assert [record.seq for record in stage.wal.replay()] == [1]


def test_an_idle_writer_hands_on_nothing(stage: Stage) -> None:
    stage.writer.write_once()
    assert stage.handed_on == [] and stage.store.attempts("spans") == []
