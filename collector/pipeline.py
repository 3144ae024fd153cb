"""The pipeline behind the receiver: write-ahead log, span writer, turn processor.

    receiver ──submit──▶ WAL (durable) ──▶ ingest queue ──▶ span writer ──▶ store.spans
                                                               │
                                                               ▼
                                          assembly queue ──▶ turn processor
                                                               ├─ TurnAssembler
                                                               ├─ validators
                                                               └─▶ store.turns / findings

`submit` returns as soon as the request is in the write-ahead log: ingest never waits
for storage or validation. Queues are bounded by the number of spans accepted but not
yet stored; past it `submit` refuses (the receiver answers 503 with Retry-After). A
failed insert is retried, never dropped: those spans were acknowledged.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from factledger.collector import otlp, rows
from factledger.collector.metrics import Metrics
from factledger.collector.redaction import Redactor
from factledger.collector.store import Store, StoreError
from factledger.collector.wal import WriteAheadLog
from factledger.processors.assembler import AssembledTurn, TurnAssembler
from factledger.processors.runner import ValidationRunner
from factledger.processors.spans import SpanRecord

log = logging.getLogger("factledger.pipeline")

_BATCH_SPANS = 5_000
_ASSEMBLY_CHUNK = 500
"""Spans added between two looks for due turns, so a big batch never delays a verdict."""
_MAX_OPEN_TURNS = 100_000
_MAX_MODEL_LABELS = 200
_MAX_LABEL_CHARS = 100
_BATCH_SECONDS = 0.1
_RETRY_SECONDS = (0.2, 0.5, 1.0, 2.0, 5.0)


def _datetime(unix_nano: int) -> datetime:
    return datetime.fromtimestamp(unix_nano / 1e9, UTC)


class PipelineFull(Exception):
    """The pipeline holds as many unstored spans as it may; retry later (503)."""


class PipelineClosed(Exception):
    """The pipeline is shutting down and takes no more requests (503)."""


@dataclass(frozen=True)
class _Batch:
    seq: int
    spans: tuple[SpanRecord, ...]


class Pipeline:
    """Owns the queues and the two worker threads. `start()` replays the write-ahead log
    before workers run; `shutdown()` drains what it can and is safe to call twice."""

    def __init__(
        self,
        store: Store,
        wal: WriteAheadLog,
        runner: ValidationRunner,
        metrics: Metrics,
        *,
        grace_seconds: float = 2.0,
        max_wait_seconds: float = 60.0,
        max_pending_spans: int = 200_000,
        clock: Callable[[], float] = time.monotonic,
        recovery_seconds: float = 3600.0,
        redactor: Redactor | None = None,
    ) -> None:
        self._store = store
        self._wal = wal
        self._runner = runner
        self._metrics = metrics
        self._clock = clock
        self._max_pending = max_pending_spans
        self._recovery_seconds = recovery_seconds
        self._redactor = redactor
        self._pending = 0
        self._pending_lock = threading.Lock()
        self._ingest: queue.Queue[_Batch] = queue.Queue()
        self._assembly: queue.Queue[tuple[SpanRecord, ...]] = queue.Queue(maxsize=10_000)
        self._assembler = TurnAssembler(
            clock,
            grace_seconds=grace_seconds,
            max_wait_seconds=max_wait_seconds,
            max_open_turns=_MAX_OPEN_TURNS,
        )
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._ready = threading.Event()
        self._closed = False
        self._unassembled = 0  # spans stored but not yet added to the assembler
        self._model_labels: set[str] = set()
        self._assembly_drops_seen: dict[str, int] = {}
        self._flush_requested = threading.Event()
        self._flushed = threading.Event()
        self._describe()

    # --- receiver side ---------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """Started, not closing, and both workers alive."""
        alive = all(thread.is_alive() for thread in self._threads)
        return self._ready.is_set() and not self._closed and alive

    def has_capacity(self) -> bool:
        return self._backlog < self._max_pending and not self._closed

    @property
    def _backlog(self) -> int:
        """Spans accepted but not yet stored, plus stored but not yet assembled: both are
        held in memory, so both count against the bound."""
        return self._pending + self._unassembled

    def submit(
        self, content_type: str, tenant: str, body: bytes, spans: Sequence[SpanRecord]
    ) -> int:
        """Make the request durable and queue its spans; returns the log sequence number."""
        if self._closed:
            raise PipelineClosed
        with self._pending_lock:
            backlog = self._backlog
            if backlog + len(spans) > self._max_pending and backlog > 0:
                self._metrics.inc("factledger_spans_dropped_total", len(spans), reason="queue_full")
                raise PipelineFull
            self._pending += len(spans)
        seq = self._wal.append(content_type, tenant, body)
        self._ingest.put(_Batch(seq, tuple(spans)))
        self._metrics.inc("factledger_spans_received_total", len(spans))
        return seq

    # --- lifecycle --------------------------------------------------------------------

    def start(self) -> None:
        """Replay the write-ahead log into the queues, then start the workers."""
        replayed = 0
        for record in self._wal.replay():
            try:
                result = otlp.decode_request(record.body, record.content_type, tenant=record.tenant)
            except Exception:  # a record that no longer decodes cannot be saved
                log.exception("write-ahead log record %s does not decode", record.seq)
                self._metrics.inc("factledger_wal_records_unreadable_total")
                continue
            with self._pending_lock:
                self._pending += len(result.spans)
            self._ingest.put(_Batch(record.seq, result.spans))
            replayed += len(result.spans)
        if replayed:
            log.info("replayed %d spans from the write-ahead log", replayed)
            self._metrics.inc("factledger_wal_replayed_spans_total", replayed)
        self._recover_open_turns()
        for target, name in (
            (self._write_spans, "span-writer"),
            (self._process_turns, "turn-processor"),
        ):
            thread = threading.Thread(target=target, name=f"factledger-{name}", daemon=True)
            thread.start()
            self._threads.append(thread)
        self._ready.set()

    def _recover_open_turns(self) -> None:
        """Turns in flight at the last stop: their spans were stored (so no longer in the
        write-ahead log) but no verdict was. Read them back so they are judged."""
        since = datetime.now(UTC) - timedelta(seconds=self._recovery_seconds)
        traces: list[str] = []
        stored: list[dict[str, object]] = []
        try:
            for tenant in self._store.recent_tenants(since):
                open_traces = self._store.open_traces(tenant, since)
                if open_traces:
                    traces += open_traces
                    stored += self._store.spans_for_traces(tenant, open_traces)
        except Exception:  # recovery is best effort; ingest must start regardless
            log.exception("reading open turns back from the store failed")
            return
        spans = tuple(rows.span_from_row(row) for row in stored)
        if not spans:
            return
        log.info(
            "finishing %d open traces (%d spans) from before the restart", len(traces), len(spans)
        )
        self._metrics.inc("factledger_recovered_spans_total", len(spans))
        with self._pending_lock:
            self._unassembled += len(spans)
        self._assembly.put(spans)

    def shutdown(self, timeout: float = 10.0) -> None:
        """Stop taking requests, store what is queued, judge open turns; idempotent."""
        if self._closed:
            return
        self._closed = True
        self.force_flush(timeout, judge_open_turns=True)
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout)

    def force_flush(self, timeout: float = 10.0, *, judge_open_turns: bool = False) -> bool:
        """Wait until every accepted span is stored and every due turn judged (tests,
        shutdown). With `judge_open_turns`, turns still open are judged now too."""
        deadline = time.monotonic() + timeout
        while self._pending > 0 or self._unassembled > 0:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        if judge_open_turns and self._threads:
            self._flushed.clear()
            self._flush_requested.set()
            return self._flushed.wait(max(0.0, deadline - time.monotonic()))
        return True

    # --- workers ----------------------------------------------------------------------

    def _write_spans(self) -> None:
        while not self._stop.is_set():
            try:
                self._write_span_batches()
            except Exception:  # the writer must outlive any single batch
                log.exception("span writer iteration failed")
                self._metrics.inc("factledger_worker_errors_total", worker="span-writer")

    def _write_span_batches(self) -> None:
        batches = self._take_batches()
        if not batches:
            return
        spans = [s for b in batches for s in b.spans]
        now_ms = int(time.time() * 1000)
        span_rows = [rows.span_row(self._stored_span(s), now_ms) for s in spans]
        if not self._insert("spans", self._store.insert_spans, span_rows):
            # Stopping before the spans were stored: keep them in the write-ahead log
            # (no release), so the next start stores them.
            with self._pending_lock:
                self._pending -= len(spans)
            return
        self._metrics.inc("factledger_spans_stored_total", len(spans))
        with self._pending_lock:
            # Counted as unassembled before they stop counting as pending, so that
            # force_flush never sees a moment where they are in neither.
            self._unassembled += len(spans)
            self._pending -= len(spans)
        self._wal.release(max(b.seq for b in batches))
        if spans:
            self._assembly.put(tuple(spans))

    def _take_batches(self) -> list[_Batch]:
        try:
            first = self._ingest.get(timeout=0.1)
        except queue.Empty:
            return []
        batches = [first]
        count = len(first.spans)
        deadline = time.monotonic() + _BATCH_SECONDS
        while count < _BATCH_SPANS and time.monotonic() < deadline:
            try:
                batch = self._ingest.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            batches.append(batch)
            count += len(batch.spans)
        return batches

    def _process_turns(self) -> None:
        while not self._stop.is_set():
            try:
                spans = self._assembly.get(timeout=0.05)
            except queue.Empty:
                spans = ()
            try:
                self._assemble_and_judge(spans)
            except Exception:  # the processor must outlive any single batch
                log.exception("turn processor iteration failed")
                self._metrics.inc("factledger_worker_errors_total", worker="turn-processor")

    def _assemble_and_judge(self, spans: tuple[SpanRecord, ...]) -> None:
        for start in range(0, max(len(spans), 1), _ASSEMBLY_CHUNK):
            chunk = spans[start : start + _ASSEMBLY_CHUNK]
            try:
                for span in chunk:
                    try:
                        self._assembler.add(span)
                    except Exception:  # one bad span never takes the processor down
                        log.exception("assembling span %s failed", span.span_id)
                        self._metrics.inc("factledger_spans_dropped_total", reason="assembly_error")
                self._judge_due(flush=False)
            finally:
                with self._pending_lock:
                    self._unassembled -= len(chunk)
        flush = self._flush_requested.is_set()
        try:
            self._judge_due(flush=flush)
        finally:
            if flush:
                self._flush_requested.clear()
                self._flushed.set()
        self._count_assembly_drops()

    def _count_assembly_drops(self) -> None:
        """Carry the assembler's drop counts (duplicates, oversized groups, turns that
        could not be built, ...) into /metrics."""
        for reason, count in self._assembler.drops.items():
            new = count - self._assembly_drops_seen.get(reason, 0)
            if new > 0:
                self._metrics.inc("factledger_assembly_drops_total", new, reason=reason)
                self._assembly_drops_seen[reason] = count

    def _judge_due(self, *, flush: bool) -> None:
        due = self._assembler.flush_all() if flush else self._assembler.due()
        if not due:
            return
        try:
            self._judge(due)
        except Exception:
            log.exception("judging %d turns failed", len(due))
            self._metrics.inc("factledger_turns_failed_total", len(due))

    def _judge(self, turns: Sequence[AssembledTurn]) -> None:
        validated_at = datetime.now(UTC)
        turn_rows: list[list[object]] = []
        finding_rows: list[list[object]] = []
        for assembled in turns:
            try:
                self._judge_one(assembled, validated_at, turn_rows, finding_rows)
            except Exception:  # one turn that cannot be shaped never costs its neighbours
                log.exception("judging turn %s failed", assembled.turn.turn_id)
                self._metrics.inc("factledger_turns_failed_total")
        if turn_rows:
            self._insert("turns", self._store.insert_turns, turn_rows)
        if finding_rows:
            self._insert("findings", self._store.insert_findings, finding_rows)

    def _judge_one(
        self,
        assembled: AssembledTurn,
        validated_at: datetime,
        turn_rows: list[list[object]],
        finding_rows: list[list[object]],
    ) -> None:
        verdict = self._runner.validate(assembled.turn)
        started = _datetime(assembled.started_at_ns)
        # Judged on the raw turn; stored redacted (metrics below read only kinds and model).
        turn, stored_verdict = (
            self._redactor.judged(assembled.turn, verdict)
            if self._redactor
            else (assembled.turn, verdict)
        )
        turn_rows.append(
            rows.turn_row(
                turn,
                stored_verdict,
                version=assembled.version,
                started_at=started,
                ended_at=_datetime(assembled.ended_at_ns),
                validated_at=validated_at,
                span_ids=assembled.span_ids,
            )
        )
        finding_rows.extend(
            rows.finding_rows(turn, stored_verdict, version=assembled.version, started_at=started)
        )
        self._metrics.inc(
            "factledger_turns_validated_total",
            verdict=verdict.outcome.value,
            model=self._model_label(assembled.turn.model),
        )
        for f in verdict.findings:
            self._metrics.inc("factledger_findings_total", kind=f.kind.value)

    def _stored_span(self, span: SpanRecord) -> SpanRecord:
        """The span as stored: redacted when redaction is on. Turn assembly keeps the raw
        span, so validation compares the real values."""
        return self._redactor.span(span) if self._redactor else span

    def _model_label(self, model: str) -> str:
        """Model names come from clients: bound the label set a Prometheus scrape sees."""
        label = (model or "unknown")[:_MAX_LABEL_CHARS]
        if label in self._model_labels:
            return label
        if len(self._model_labels) >= _MAX_MODEL_LABELS:
            return "other"
        self._model_labels.add(label)
        return label

    def _insert(
        self, what: str, insert: Callable[[list[list[object]]], object], batch: list[list[object]]
    ) -> bool:
        """Insert `batch`, waiting out a store that is unavailable. Rows the store refuses
        for good (bad data) are found by halving the batch, dropped and counted, so one
        bad row never blocks the rows around it. False only when stopping first."""
        attempt = 0
        while True:
            try:
                insert(batch)
                return True
            except StoreError as exc:
                if not exc.retryable:
                    return self._split(what, insert, batch, exc)
                error: Exception = exc
            except Exception as exc:  # unknown failure: treat as transient, log it
                error = exc
            delay = _RETRY_SECONDS[min(attempt, len(_RETRY_SECONDS) - 1)]
            log.warning("inserting %s failed (%s); retrying in %.1fs", what, error, delay)
            self._metrics.inc("factledger_store_errors_total", table=what)
            attempt += 1
            if self._stop.wait(delay):
                return False

    def _split(
        self,
        what: str,
        insert: Callable[[list[list[object]]], object],
        batch: list[list[object]],
        error: Exception,
    ) -> bool:
        if len(batch) == 1:
            log.error("dropping a %s row the store refuses: %s", what, error)
            self._metrics.inc("factledger_rows_dropped_total", table=what, reason="unstorable")
            return True
        middle = len(batch) // 2
        return self._insert(what, insert, batch[:middle]) and self._insert(
            what, insert, batch[middle:]
        )

    def _describe(self) -> None:
        m = self._metrics
        m.describe("factledger_spans_received_total", "Spans accepted by the receiver.")
        m.describe("factledger_spans_stored_total", "Spans written to the store.")
        m.describe("factledger_spans_dropped_total", "Spans not accepted, by reason.")
        m.describe("factledger_turns_validated_total", "Turns judged, by verdict and model.")
        m.describe("factledger_findings_total", "Findings reported, by kind.")
        m.describe(
            "factledger_assembly_drops_total",
            "Spans or turns turn assembly set aside, by reason (duplicate, group_full, ...).",
        )
        m.gauge(
            "factledger_queue_spans", "Spans accepted but not yet stored.", lambda: self._pending
        )
        m.gauge(
            "factledger_assembly_queue_spans",
            "Spans stored but not yet assembled into turns.",
            lambda: self._unassembled,
        )
        m.gauge(
            "factledger_open_turns", "Turns being assembled.", lambda: self._assembler.open_count
        )
