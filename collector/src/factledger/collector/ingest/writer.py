"""The span writer: batches of accepted requests into the store, then onward to assembly.

Requests queued by `submit` (or replayed from the log) are gathered into one insert of up
to `BATCH_SPANS` spans or `BATCH_SECONDS` of waiting, stored redacted (when redaction is
on; assembly keeps the raw spans so validation compares the real values), and only then
released from the write-ahead log, up to its stored-through mark.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from factledger.collector import rows
from factledger.collector.ingest.wal import WriteAheadLog
from factledger.collector.metrics import Metrics
from factledger.collector.redaction import Redactor
from factledger.processors.spans import SpanRecord

from .admission import Backlog
from .retry import Send
from .watermark import StoredMark

log = logging.getLogger("factledger.pipeline")

BATCH_SPANS = 5_000
BATCH_SECONDS = 0.1


@dataclass(frozen=True)
class Batch:
    """One request's spans, as queued for the writer."""

    seq: int
    """Its record in the write-ahead log."""
    spans: tuple[SpanRecord, ...]
    size: int
    """The request's bytes (decompressed): what the batch's spans cost in memory, roughly."""
    received_ms: int = 0
    """When the request was received (Unix ms), for one replayed from the log; 0: it is
    being stored as it arrives, so the time of storing is its time."""


class SpanWriter:
    """Owns the ingest queue. `put` may be called from any thread; `run` is the writer
    thread's body and returns once `stop` is set. `stored` gets every stored batch's spans
    (raw, not redacted), in order, on the writer thread."""

    def __init__(
        self,
        send: Send,
        wal: WriteAheadLog,
        mark: StoredMark,
        backlog: Backlog,
        metrics: Metrics,
        stop: threading.Event,
        stored: Callable[[tuple[SpanRecord, ...]], None],
        redactor: Redactor | None = None,
    ) -> None:
        self._send = send
        self._wal = wal
        self._mark = mark
        self._backlog = backlog
        self._metrics = metrics
        self._stop = stop
        self._stored = stored
        self._redactor = redactor
        self._queue: queue.Queue[Batch] = queue.Queue()

    def put(self, batch: Batch) -> None:
        """Queue a request whose spans count as pending in the backlog."""
        self._queue.put(batch)

    def run(self) -> None:
        while not self._stop.is_set():
            try:
                self.write_once()
            except Exception:  # the writer must outlive any single batch
                log.exception("span writer iteration failed")
                self._metrics.inc("factledger_worker_errors_total", worker="span-writer")

    def write_once(self) -> None:
        """Store what is queued (waiting up to 0.1 s for a first request)."""
        batches = self._take_batches()
        if not batches:
            self._wal.expire()  # idle: no release comes to close and delete old segments
            return
        now_ms = int(time.time() * 1000)
        spans = [s for b in batches for s in _stamped(b.spans, (b.received_ms or now_ms))]
        size = sum(b.size for b in batches)
        span_rows = [
            rows.span_row(self._stored_span(s), s.received_at_unix_nano // 1_000_000) for s in spans
        ]
        if not self._send(span_rows):
            # Stopping before the spans were stored: keep them in the write-ahead log
            # (no release), so the next start stores them.
            self._backlog.withdraw(len(spans), size)
            return
        self._metrics.inc("factledger_spans_stored_total", len(spans))
        self._backlog.stored(len(spans), size)
        self._wal.release(self._mark.stored(b.seq for b in batches))
        if spans:
            self._stored(tuple(spans))

    def _stored_span(self, span: SpanRecord) -> SpanRecord:
        return self._redactor.span(span) if self._redactor else span

    def _take_batches(self) -> list[Batch]:
        try:
            first = self._queue.get(timeout=0.1)
        except queue.Empty:
            return []
        batches = [first]
        count = len(first.spans)
        deadline = time.monotonic() + BATCH_SECONDS
        while count < BATCH_SPANS and time.monotonic() < deadline:
            try:
                batch = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            batches.append(batch)
            count += len(batch.spans)
        return batches


def _stamped(spans: tuple[SpanRecord, ...], stored_ms: int) -> tuple[SpanRecord, ...]:
    """`spans` carrying the time they were stored (their `IngestedAt`): turn judging tells
    a skewed agent clock by it (`collector.judge.clock_skew`). Set in place: the spans of a
    batch were decoded for the writer alone and nothing has read them yet, and a copy of
    each (`dataclasses.replace`) cost more than storing it."""
    stamp = stored_ms * 1_000_000
    for span in spans:
        object.__setattr__(span, "received_at_unix_nano", stamp)
    return spans
