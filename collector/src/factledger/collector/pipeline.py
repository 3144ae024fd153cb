"""The pipeline behind the receiver: write-ahead log, span writer, turn processor.

    receiver ──submit──▶ WAL (durable) ──▶ ingest queue ──▶ span writer ──▶ store.spans
                                                               │
                                                               ▼
                                          assembly queue ──▶ turn processor ──▶ store.turns
                                                               │     ▲          / findings
                                                        router ▼     │ rows
                                                 judge worker process 1 .. N
                                                   ├─ TurnAssembler
                                                   └─ validators

`submit` returns as soon as the request is in the write-ahead log: ingest never waits
for storage or validation. Queues are bounded by the number of spans accepted but not
yet assembled; past it `submit` refuses (the receiver answers 503 with Retry-After), and
a request larger than the bound itself is refused for good (413). A
failed insert is retried, never dropped: those spans were acknowledged. The log is
released only up to the highest sequence number below which every record is stored.

Assembly and validation (`collector.judging.TurnJudge`) run in worker processes by
default (`collector.judge_worker`; one unless `judge_workers` says more), so they do not
share the GIL with receiving and storing; this process keeps every store access and
inserts the rows the workers send back. With several workers, `collector.routing` sends
every span of a trace, and every trace of a conversation, to the same worker. A worker
that dies is restarted, and the turns it held are read back from the store (spans stored
that no verdict holds, with the verdicts already stored for their traces; those routed
to a worker still alive are left to it) and judged, as after a restart of the service;
a turn whose validation hung a worker is stored unvalidated (`collector.quarantine`).
That reading back covers every trace still owed a verdict, however long the outage (up
to the retention), oldest first, a page at a time in a thread of its own while new
requests are taken.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from factledger.collector import otlp, rows
from factledger.collector.judge_worker import JudgeWorker, WorkerConfig, WorkerDied, answering
from factledger.collector.judging import Judged, TurnJudge
from factledger.collector.metric_catalogue import VERDICT_DELAY as VERDICT_DELAY
from factledger.collector.metric_catalogue import VERDICT_DELAY_BUCKETS as VERDICT_DELAY_BUCKETS
from factledger.collector.metrics import Metrics
from factledger.collector.quarantine import MAX_QUARANTINED
from factledger.collector.redaction import Redactor
from factledger.collector.refusals import PipelineClosed as PipelineClosed
from factledger.collector.refusals import PipelineFull as PipelineFull
from factledger.collector.refusals import RequestTooLarge as RequestTooLarge
from factledger.collector.refusals import StoreUnavailable as StoreUnavailable
from factledger.collector.routing import Router
from factledger.collector.store import Store, StoreError
from factledger.collector.thread_names import named
from factledger.collector.wal import WalUnavailable, WriteAheadLog
from factledger.processors.assembler import PriorVerdict
from factledger.processors.runner import ValidationRunner
from factledger.processors.spans import SpanRecord

log = logging.getLogger("factledger.pipeline")

_BATCH_SPANS = 5_000
_ASSEMBLY_CHUNK = 500
"""Spans added between two looks for due turns, so a big batch never delays a verdict."""
_BATCH_SECONDS = 0.1
_RETRY_SECONDS = (0.2, 0.5, 1.0, 2.0, 5.0)
_RESTART_SECONDS = (0.0, 1.0, 2.0, 5.0, 10.0, 30.0)
"""Waits before restarting a judge worker that died again and again (a crash loop)."""
_HEALTHY_SECONDS = 60.0
_HANG_SECONDS = 120.0
"""A worker silent this long (no result, no heartbeat) is killed and replaced: far above
one message's work (a chunk of 500 spans, or a flush), well below forever."""
_RECEIVE_SECONDS = 0.02
_WATCH_SECONDS = 1.0
_MAX_LOOKED_UP_TRACES = 100_000
RECOVERY_PAGE_TRACES = 1_000
"""Owed traces read back from the store at a time. Recovery reads every trace still owed
a verdict, however old (the tables' TTL bounds it), oldest first; the next page waits
until the backlog is at most half full, so an outage's worth of owed turns never keeps
new requests out."""
_EPOCH = datetime.fromtimestamp(0, UTC)


@dataclass(frozen=True)
class _Batch:
    seq: int
    spans: tuple[SpanRecord, ...]
    size: int
    """The request's bytes (decompressed): what the batch's spans cost in memory, roughly."""


READ_BACK_SPAN_BYTES = 2048
"""What a span read back from the store counts against the byte bound (its request's size
is not known any more): about a GenAI span's encoded size."""


@dataclass(frozen=True)
class _ReadBack:
    """Spans read back from the store, and the stored verdicts they go on from (handed on
    before them)."""

    priors: tuple[PriorVerdict, ...]
    spans: tuple[SpanRecord, ...]
    workers: frozenset[int] | None = None
    """The judge workers it is read back for (those restarted); a trace routed to another
    worker is left to it. None: every worker (a restart of the service, late spans)."""


@dataclass(frozen=True)
class _Recall:
    """Stored verdicts for a worker to go on from, ahead of the spans read back with them."""

    priors: tuple[PriorVerdict, ...]


@dataclass(eq=False)
class _Slot:
    """One judge worker process and what the turn processor tracks of it (the watch
    thread reads `worker` and `index` only)."""

    index: int
    worker: JudgeWorker | None = None
    failures: int = 0
    """Deaths or failed starts in a row: how long the next restart waits."""
    restart_at: float = 0.0
    outbox: deque[tuple[SpanRecord, ...] | _Recall] = field(default_factory=deque)
    """Routed to this worker and not sent yet (waits here while the worker restarts)."""
    open_turns: int = 0
    flush_sent: bool = False
    flushed: bool = False


class Pipeline:
    """Owns the queues and the worker threads (and the judge worker processes).
    `start()` replays the write-ahead log before workers run; `shutdown()` drains what it
    can and is safe to call twice.

    `judge_workers` judge worker processes share the judging, each span routed by
    `router` (default: `collector.routing.Router`; with one worker nothing is routed).
    With `judge_in_worker=False` turns are judged in the turn-processor thread instead of
    a worker process (the only mode where `clock` reaches the turn assembler; a worker
    process keeps its own monotonic clock), and `judge_workers` does not apply."""

    def __init__(
        self,
        store: Store,
        wal: WriteAheadLog,
        runner: ValidationRunner,
        metrics: Metrics,
        *,
        grace_seconds: float = 2.0,
        max_wait_seconds: float = 60.0,
        max_pending_spans: int = 50_000,
        max_pending_bytes: int = 64 * 1024 * 1024,
        clock: Callable[[], float] = time.monotonic,
        redactor: Redactor | None = None,
        judge_in_worker: bool = True,
        judge_workers: int = 1,
        router: Router | None = None,
        hang_seconds: float = _HANG_SECONDS,
    ) -> None:
        if judge_workers < 1:
            raise ValueError(f"judge_workers must be at least 1, not {judge_workers}")
        if router is not None and router.workers != judge_workers:
            raise ValueError(f"the router routes to {router.workers} workers, not {judge_workers}")
        self._store = store
        self._wal = wal
        self._metrics = metrics
        self._clock = clock
        self._max_pending = max_pending_spans
        self._max_pending_bytes = max_pending_bytes
        self._redactor = redactor
        self._pending = 0
        self._pending_bytes = 0
        self._unassembled_bytes = 0
        """Request bytes behind the spans counted in `_pending` and `_unassembled`; the
        second is an estimate once spans leave in other groupings than they came in."""
        self._pending_lock = threading.Lock()
        self._ingest: queue.Queue[_Batch] = queue.Queue()
        self._assembly: queue.Queue[tuple[SpanRecord, ...] | _ReadBack] = queue.Queue(
            maxsize=10_000
        )
        self._judge: TurnJudge | None = None
        self._worker_config: WorkerConfig | None = None
        self._slots: list[_Slot] = []
        self._router: Router | None = None
        if judge_in_worker:
            self._worker_config = WorkerConfig(runner, grace_seconds, max_wait_seconds, redactor)
            self._slots = [_Slot(index) for index in range(judge_workers)]
            if judge_workers > 1:
                self._router = router if router is not None else Router(judge_workers)
        else:
            self._judge = TurnJudge(
                runner,
                grace_seconds=grace_seconds,
                max_wait_seconds=max_wait_seconds,
                clock=clock,
                redactor=redactor,
            )
        self._hang_seconds = hang_seconds
        self._quarantined: tuple[str, ...] = ()
        """Turns that stopped a worker (see `collector.quarantine`), oldest first."""
        self._started_ns = 0  # wall clock at start(): spans that began before may be late
        self._looked_up: OrderedDict[tuple[str, str], None] = OrderedDict()
        """(tenant, trace id) already looked up by `_read_back_judged_traces`."""
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._ready = threading.Event()
        self._closed = False
        self._unassembled = 0  # spans stored but not yet added to the assembler
        self._flush_requested = threading.Event()
        self._flushed = threading.Event()
        self._unwritable: set[str] = set()
        """Tables whose last insert failed in a way a retry may cure (full disk, ...)."""
        self._order_lock = threading.Lock()
        self._appending: list[int] = []
        """For each append in progress, the log's last sequence number before it."""
        self._unstored: set[int] = set()
        """Sequence numbers appended (or replayed) whose spans are not stored yet."""
        self._stored_seq = 0
        self._recovery_requested = threading.Event()
        self._recovery_idle = threading.Event()
        self._recovery_idle.set()
        self._recovery_lock = threading.Lock()
        self._recovery_all = False
        self._recovery_workers: set[int] = set()
        """Whom the requested walk is for: every worker, or these (restarted) ones."""
        self._describe()

    # --- receiver side ---------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """Started, not closing, every worker thread alive and, when turns are judged in
        worker processes, every one of them alive (False while one is being restarted)."""
        alive = all(thread.is_alive() for thread in self._threads)
        judging = all(s.worker is not None and s.worker.alive for s in self._slots)
        return self._ready.is_set() and not self._closed and alive and judging

    def has_capacity(self, request_bytes: int = 0) -> bool:
        """Room in the backlog for a request of `request_bytes` (0: size unknown), asked
        before its body is read, so that a request refused for room is never decoded."""
        if self._closed:
            return False
        backlog = self._backlog
        if backlog == 0:
            return True  # a request alone is always taken
        room = self._backlog_bytes + max(request_bytes, 1) <= self._max_pending_bytes
        return room and backlog < self._max_pending

    @property
    def store_writable(self) -> bool:
        """False from an insert that failed for the store's sake (a full disk, no memory,
        a lost server) until an insert into that table succeeds again."""
        return not self._unwritable

    @property
    def _backlog(self) -> int:
        """Spans accepted but not yet stored, plus stored but not yet assembled: both are
        held in memory, so both count against the bound."""
        return self._pending + self._unassembled

    @property
    def _backlog_bytes(self) -> int:
        """The request bytes behind the backlog: spans are bounded by bytes as well as by
        count, since one span may carry megabytes."""
        return self._pending_bytes + self._unassembled_bytes

    def _assembled(self, spans: int) -> None:
        """`spans` left the unassembled backlog (call under `_pending_lock`). Their bytes
        are taken in proportion: spans leave in turns, not in the requests they came in."""
        if spans <= 0:
            return
        if spans >= self._unassembled:
            self._unassembled_bytes = 0
        else:
            self._unassembled_bytes -= self._unassembled_bytes * spans // self._unassembled
        self._unassembled -= spans

    def submit(
        self, content_type: str, tenant: str, body: bytes, spans: Sequence[SpanRecord]
    ) -> int:
        """Make the request durable and queue its spans; returns the log sequence number.
        Raises `WalUnavailable` (the log cannot be written: a full disk, an I/O error)
        having counted nothing: the request was not acknowledged."""
        # Refusals are not drops: a client retries a 503 and sends the spans again, and
        # a 413 is its own to handle; neither was acknowledged.
        if len(spans) > self._max_pending:
            self._metrics.inc("factledger_spans_refused_total", len(spans), reason="too_many_spans")
            raise RequestTooLarge(len(spans), self._max_pending)
        if self._closed:
            raise PipelineClosed
        if self._unwritable:
            self._metrics.inc(
                "factledger_spans_refused_total", len(spans), reason="store_unavailable"
            )
            raise StoreUnavailable
        with self._pending_lock:
            backlog = self._backlog
            # A request alone is always taken (the body limit bounds it): one larger than
            # the byte bound waits for an empty backlog instead of being refused for good.
            full = (
                backlog + len(spans) > self._max_pending
                or self._backlog_bytes + len(body) > self._max_pending_bytes
            )
            if full and backlog > 0:
                self._metrics.inc("factledger_spans_refused_total", len(spans), reason="queue_full")
                raise PipelineFull
            self._pending += len(spans)
            self._pending_bytes += len(body)
        try:
            seq = self._append(content_type, tenant, body)
        except WalUnavailable:  # not acknowledged: its spans leave the backlog again
            with self._pending_lock:
                self._pending -= len(spans)
                self._pending_bytes -= len(body)
            self._metrics.inc(
                "factledger_spans_refused_total", len(spans), reason="wal_unavailable"
            )
            raise
        self._ingest.put(_Batch(seq, tuple(spans), len(body)))
        self._metrics.inc("factledger_spans_received_total", len(spans))
        return seq

    # --- lifecycle --------------------------------------------------------------------

    def start(self) -> None:
        """Replay the write-ahead log into the queues, then start the workers."""
        self._started_ns = time.time_ns()
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
                self._pending_bytes += len(record.body)
            self._unstored.add(record.seq)
            self._ingest.put(_Batch(record.seq, result.spans, len(record.body)))
            replayed += len(result.spans)
        if replayed:
            log.info("replayed %d spans from the write-ahead log", replayed)
            self._metrics.inc("factledger_wal_replayed_spans_total", replayed)
        self._recover_open_turns()
        if self._worker_config is not None:
            self._start_workers(self._worker_config)
        threads = [
            (self._write_spans, "span-writer"),
            (self._process_turns, "turn-processor"),
            (self._recover, "recovery"),
        ]
        if self._worker_config is not None:
            threads.append((self._watch_worker, "worker-watch"))
        for target, name in threads:
            thread = threading.Thread(
                target=named(name, target), name=f"factledger-{name}", daemon=True
            )
            thread.start()
            self._threads.append(thread)
        self._ready.set()

    def _recover_open_turns(self, worker: int | None = None) -> None:
        """Have the recovery thread read back, from the oldest, every trace whose stored
        spans no verdict holds: turns in flight at the last stop or held by a worker that
        died, the next turn of a judged trace, late spans. For a restarted `worker`, the
        traces routed to the other workers are left to them. Returns at once;
        `force_flush` waits for the reading to end."""
        with self._recovery_lock:
            if worker is None:
                self._recovery_all = True
            else:
                self._recovery_workers.add(worker)
            self._recovery_idle.clear()
            self._recovery_requested.set()

    def _recover(self) -> None:
        """The recovery thread: one walk over every owed trace per request."""
        try:
            while not self._stop.is_set():
                if not self._recovery_requested.wait(0.1):
                    continue
                with self._recovery_lock:
                    self._recovery_requested.clear()
                    workers = None if self._recovery_all else frozenset(self._recovery_workers)
                    self._recovery_all = False
                    self._recovery_workers = set()
                try:
                    self._read_back_owed(workers)
                except Exception:  # recovery is best effort; ingest goes on regardless
                    log.exception("reading open turns back from the store failed")
                    self._metrics.inc("factledger_worker_errors_total", worker="recovery")
                with self._recovery_lock:
                    if not self._recovery_requested.is_set():  # none asked for meanwhile
                        self._recovery_idle.set()
        finally:
            self._recovery_idle.set()  # stopping: nobody waits for a walk that will not come

    def _read_back_owed(self, workers: frozenset[int] | None) -> None:
        """Read the owed traces back a page at a time, oldest first, each with the
        verdicts already stored for them, so that what is owed is judged and what was
        judged is not judged again; for `workers` (None: every one). A page waits for
        room in the backlog."""
        traces = spans = 0
        for tenant in self._store.recent_tenants(_EPOCH):
            after = None
            while not self._stop.is_set():
                page = self._store.owed_traces(tenant, _EPOCH, RECOVERY_PAGE_TRACES, after)
                if not page:
                    break
                after = page[-1]
                if not self._wait_for_room():
                    return
                owed = [o.trace_id for o in page]
                read = self._store.spans_for_traces(tenant, owed)
                span_ids = [str(row["SpanId"]) for row in read]
                priors = self._store.verdicts_for(tenant, owed, span_ids, _EPOCH)
                if read:
                    spans_read = tuple(rows.span_from_row(row) for row in read)
                    self._hand_back(priors, spans_read, workers)
                traces += len(owed)
                spans += len(read)
        if spans:
            log.info("finishing %d open traces (%d spans) read back from the store", traces, spans)

    def _wait_for_room(self) -> bool:
        """Wait until the backlog is at most half full, in spans and in bytes; False when
        stopping first."""
        while (
            self._backlog > self._max_pending // 2
            or self._backlog_bytes > self._max_pending_bytes // 2
        ):
            if self._stop.wait(0.05):
                return False
        return True

    def _read_back_judged_traces(self, spans: Sequence[SpanRecord]) -> None:
        """A span that started before this process did may belong to a turn judged before
        it (a late span): the assembler no longer holds that turn and would make one of
        the span alone. So its trace, when it has verdicts, is read back with them ahead
        of the span, which then gives the turn's next version. Each trace is looked up
        once; new traces (started since) cost nothing."""
        older: dict[str, set[str]] = {}
        for span in spans:
            key = (span.tenant, span.trace_id)
            if span.start_time_unix_nano < self._started_ns and key not in self._looked_up:
                older.setdefault(span.tenant, set()).add(span.trace_id)
                self._looked_up[key] = None
        while len(self._looked_up) > _MAX_LOOKED_UP_TRACES:
            self._looked_up.popitem(last=False)
        for tenant, traces in older.items():
            try:
                priors = self._store.verdicts_for(tenant, list(traces), (), datetime.now(UTC))
                if not priors:
                    continue
                read = self._store.spans_for_traces(tenant, list(traces))
            except Exception:  # the span is judged all the same, without its past
                log.exception("reading judged traces back from the store failed")
                continue
            self._hand_back(priors, tuple(rows.span_from_row(row) for row in read))

    def _hand_back(
        self,
        priors: Sequence[PriorVerdict],
        spans: tuple[SpanRecord, ...],
        workers: frozenset[int] | None = None,
    ) -> None:
        """Queue spans read back from the store for assembly, after the stored verdicts
        they go on from; for `workers` (None: every one)."""
        self._metrics.inc("factledger_recovered_spans_total", len(spans))
        with self._pending_lock:
            self._unassembled += len(spans)
            self._unassembled_bytes += len(spans) * READ_BACK_SPAN_BYTES
        self._assembly.put(_ReadBack(tuple(priors), spans, workers))

    def shutdown(self, timeout: float = 10.0) -> None:
        """Stop taking requests, store what is queued, judge open turns; idempotent."""
        if self._closed:
            return
        self._closed = True
        self.force_flush(timeout, judge_open_turns=True)
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout)
        stuck = [s.worker for s in self._slots if s.worker is not None and s.worker.alive]
        if stuck:
            # The turn processor could not stop them: blocked on a worker that is stuck.
            for worker in stuck:
                worker.kill()
            for thread in self._threads:
                thread.join(timeout)

    def force_flush(self, timeout: float = 10.0, *, judge_open_turns: bool = False) -> bool:
        """Wait until every accepted span is stored and every due turn judged (tests,
        shutdown). With `judge_open_turns`, turns still open are judged now too."""
        deadline = time.monotonic() + timeout
        while self._pending > 0 or self._unassembled > 0 or not self._recovery_idle.is_set():
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
            self._wal.expire()  # idle: no release comes to close and delete old segments
            return
        spans = [s for b in batches for s in b.spans]
        size = sum(b.size for b in batches)
        now_ms = int(time.time() * 1000)
        span_rows = [rows.span_row(self._stored_span(s), now_ms) for s in spans]
        if not self._insert("spans", self._store.insert_spans, span_rows):
            # Stopping before the spans were stored: keep them in the write-ahead log
            # (no release), so the next start stores them.
            with self._pending_lock:
                self._pending -= len(spans)
                self._pending_bytes -= size
            return
        self._metrics.inc("factledger_spans_stored_total", len(spans))
        with self._pending_lock:
            # Counted as unassembled before they stop counting as pending, so that
            # force_flush never sees a moment where they are in neither.
            self._unassembled += len(spans)
            self._unassembled_bytes += size
            self._pending -= len(spans)
            self._pending_bytes -= size
        self._wal.release(self._stored_through(batches))
        if spans:
            self._read_back_judged_traces(spans)
            self._assembly.put(tuple(spans))

    def _append(self, content_type: str, tenant: str, body: bytes) -> int:
        """Append to the log. From before the record has its sequence number until its
        spans are stored, `_stored_through` stays below it: appending and queueing are two
        steps, so a request may be queued after a later one was queued and stored."""
        with self._order_lock:
            floor = self._wal.last_seq  # this record's number will be above it
            self._appending.append(floor)
        try:
            seq = self._wal.append(content_type, tenant, body)
            with self._order_lock:
                self._unstored.add(seq)
            return seq
        finally:
            with self._order_lock:
                self._appending.remove(floor)

    def _stored_through(self, batches: Sequence[_Batch]) -> int:
        """Mark `batches` stored; the highest sequence number up to which every record in
        the log is stored (what the log may release): never past a record still being
        appended or queued and not stored."""
        with self._order_lock:
            self._unstored.difference_update(b.seq for b in batches)
            self._stored_seq = max(self._stored_seq, *(b.seq for b in batches))
            through = self._stored_seq
            if self._appending:
                through = min(through, min(self._appending))
            if self._unstored:
                through = min(through, min(self._unstored) - 1)
            return through

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
        try:
            while not self._stop.is_set():
                try:
                    if self._judge is not None:
                        self._judge_here(self._judge)
                    else:
                        self._judge_in_workers()
                except Exception:  # the processor must outlive any single batch
                    log.exception("turn processor iteration failed")
                    self._metrics.inc("factledger_worker_errors_total", worker="turn-processor")
        finally:
            for slot in self._slots:
                if slot.worker is not None:
                    slot.worker.stop()

    def _judge_here(self, judge: TurnJudge) -> None:
        """One round of the in-thread mode: assemble what was stored, judge what is due."""
        try:
            item = self._assembly.get(timeout=0.05)
        except queue.Empty:
            item = ()
        if isinstance(item, _ReadBack):
            judge.recall(item.priors)
            item = item.spans
        spans = item
        for start in range(0, max(len(spans), 1), _ASSEMBLY_CHUNK):
            self._apply(judge.judge(spans[start : start + _ASSEMBLY_CHUNK]))
        if self._flush_requested.is_set():
            self._apply(judge.judge((), flush=True))

    def _judge_in_workers(self) -> None:
        """One round of the worker-process mode: route what was stored, send it, insert
        what came back; restart a worker that died."""
        live = [slot for slot in self._slots if self._live_worker(slot) is not None]
        if not live:  # waiting to restart them
            self._stop.wait(0.1)
            return
        self._route_assembly()
        for slot in live:
            worker = slot.worker
            assert worker is not None
            try:
                self._feed(slot, worker)
            except WorkerDied as exc:
                self._worker_died(slot, str(exc))
        listening = {slot.worker: slot for slot in live if slot.worker is not None}
        for worker in answering(list(listening), _RECEIVE_SECONDS):
            slot = listening[worker]
            try:
                results = worker.receive(0)
            except WorkerDied as exc:
                self._worker_died(slot, str(exc))
                continue
            if results:
                self._apply(*results, slot=slot)
                # Time spent inserting is not the worker's silence: count from here.
                worker.listening()

    def _route_assembly(self) -> None:
        """Move what waits for assembly into the workers' outboxes, each span to the
        worker its trace is routed to (`collector.routing`)."""
        while True:
            try:
                item = self._assembly.get_nowait()
            except queue.Empty:
                return
            if isinstance(item, _ReadBack):
                self._route_read_back(item)
                continue
            for slot, part in zip(self._slots, self._route(item, None), strict=True):
                if part:
                    slot.outbox.append(part)

    def _route(
        self, spans: tuple[SpanRecord, ...], only: frozenset[int] | None
    ) -> list[tuple[SpanRecord, ...]]:
        """`spans` split by worker; those of traces routed to a worker outside `only` are
        left out (and stop counting as unassembled)."""
        if self._router is None:  # one worker
            return [spans]
        parts, left_out = self._router.route(spans, only)
        if left_out:
            with self._pending_lock:
                self._assembled(left_out)
        return [tuple(part) for part in parts]

    def _route_read_back(self, item: _ReadBack) -> None:
        """Spans read back go where their traces are routed, each behind the stored
        verdicts that name one of its spans (a verdict naming no span read back goes to
        every worker it was read back for)."""
        parts = self._route(item.spans, item.workers)
        holders: dict[str, set[int]] = {}
        for index, part in enumerate(parts):
            for span in part:
                holders.setdefault(span.span_id, set()).add(index)
        read = {span.span_id for span in item.spans}
        everyone = range(len(self._slots)) if item.workers is None else item.workers
        recalls: list[list[PriorVerdict]] = [[] for _ in self._slots]
        for prior in item.priors:
            named = [span_id for span_id in prior.span_ids if span_id in read]
            targets = {i for span_id in named for i in holders.get(span_id, ())}
            for index in targets if named else everyone:
                recalls[index].append(prior)
        for slot, priors, part in zip(self._slots, recalls, parts, strict=True):
            if priors:
                slot.outbox.append(_Recall(tuple(priors)))
            if part:
                slot.outbox.append(part)

    def _feed(self, slot: _Slot, worker: JudgeWorker) -> None:
        """Send the worker what its outbox holds, then a flush when one is asked for.
        Raises WorkerDied (what was being sent is recovered with the worker's turns)."""
        while slot.outbox:
            message = slot.outbox.popleft()
            if isinstance(message, _Recall):
                worker.recall(message.priors)
                continue
            unsent = worker.send(message, _ASSEMBLY_CHUNK)
            if unsent:
                with self._pending_lock:
                    self._assembled(unsent)
                self._metrics.inc("factledger_spans_dropped_total", unsent, reason="assembly_error")
        if self._flush_requested.is_set() and not slot.flush_sent:
            worker.request_flush()  # after every span sent: it answers after them
            slot.flush_sent = True

    def _apply(self, *results: Judged, slot: _Slot | None = None) -> None:
        """Store judging results' rows (one insert per table for all of them) and count
        them; only then do their spans stop counting as unassembled (force_flush waits
        for that). `slot`: the worker they came from (None: judged in this thread)."""
        if not results:
            return
        try:
            turn_rows = [row for judged in results for row in judged.turn_rows]
            finding_rows = [row for judged in results for row in judged.finding_rows]
            if turn_rows and self._insert("turns", self._store.insert_turns, turn_rows):
                delays = rows.first_verdict_delays(turn_rows, int(time.time() * 1000))
                self._metrics.observe(VERDICT_DELAY, *delays)
            if finding_rows:
                self._insert("findings", self._store.insert_findings, finding_rows)
            for judged in results:
                for count in judged.counts:
                    self._metrics.inc(count.name, count.amount, **dict(count.labels))
        finally:
            with self._pending_lock:
                self._assembled(sum(judged.assembled for judged in results))
            if slot is not None:
                slot.open_turns = results[-1].open_turns
            if any(judged.flushed for judged in results):
                self._flush_answered(slot)

    def _flush_answered(self, slot: _Slot | None) -> None:
        """A flush is done once every worker (or this thread) has answered it."""
        if slot is not None:
            slot.flushed = True
            if not all(s.flushed for s in self._slots):
                return
        for each in self._slots:
            each.flushed = each.flush_sent = False
        self._flush_requested.clear()
        self._flushed.set()

    # --- the judge worker processes ---------------------------------------------------

    def _start_workers(self, config: WorkerConfig) -> None:
        """Start every judge worker, at the same time (each takes a moment to import)."""
        if len(self._slots) == 1:
            self._slots[0].worker = self._start_worker(self._slots[0], config)
            return

        def start(slot: _Slot) -> None:
            slot.worker = self._start_worker(slot, config)

        starting = [threading.Thread(target=start, args=(slot,)) for slot in self._slots]
        for thread in starting:
            thread.start()
        for thread in starting:
            thread.join()

    def _start_worker(self, slot: _Slot, config: WorkerConfig) -> JudgeWorker | None:
        worker = JudgeWorker(config)
        try:
            worker.start()
        except WorkerDied:
            log.exception("starting judge worker %d failed", slot.index)
            self._schedule_restart(slot)
            return None
        return worker

    def _live_worker(self, slot: _Slot) -> JudgeWorker | None:
        """The slot's running worker; a new one (after recovering the turns the old one
        held) when it died, None while waiting before the next attempt."""
        worker = slot.worker
        if worker is not None and worker.alive:
            return worker
        if worker is not None:
            self._worker_died(slot, f"exit code {worker.exitcode}")
        config = self._worker_config
        if config is None or time.monotonic() < slot.restart_at:
            return None
        config = replace(config, quarantined=frozenset(self._quarantined))
        slot.worker = self._start_worker(slot, config)
        if slot.worker is not None:
            # The turns the dead worker held: their spans are stored, their verdicts
            # are not. Read them back (after any that were still queued: duplicates
            # are ignored by the assembler) and ask for a pending flush again.
            self._recover_open_turns(slot.index)
            slot.flush_sent = False
        return slot.worker

    def _watch_worker(self) -> None:
        """Kill a worker that stays silent (no result, no heartbeat) while the turn
        processor listens: its judging is stuck where the turn time limit cannot reach
        (inside C code). A thread of its own, because the turn processor may itself be
        blocked sending to that worker. The kill ends the worker; the turn processor sees
        it die, restarts it and recovers the turns it held.

        A worker that begins or ends a turn between two looks is moving, however long
        its batch takes to answer: silence counts from the last such change."""
        noted: dict[int, tuple[JudgeWorker | None, str]] = {}
        while not self._stop.wait(_WATCH_SECONDS):
            for slot in self._slots:
                self._watch(slot, noted)

    def _watch(self, slot: _Slot, noted: dict[int, tuple[JudgeWorker | None, str]]) -> None:
        worker = slot.worker
        if worker is None or not worker.alive:
            return
        note = (worker, worker.judging())
        if note != noted.get(slot.index):
            noted[slot.index] = note
            worker.listening()
            return
        silent = worker.silent_for()
        if silent > self._hang_seconds:
            turn_id = note[1]
            log.error(
                "judge worker %d (pid %s) is silent for %.0fs, validating turn %s; killing it",
                slot.index,
                worker.pid,
                silent,
                turn_id or "(none)",
            )
            if turn_id:
                # Replaced, not mutated: the turn processor reads it at the next start.
                kept = (*self._quarantined, turn_id)
                self._quarantined = kept[-MAX_QUARANTINED:]
            self._metrics.inc("factledger_judge_worker_hangs_total")
            worker.kill()

    def _worker_died(self, slot: _Slot, reason: str) -> None:
        worker = slot.worker
        if worker is None:
            return
        log.error(
            "judge worker %d (pid %s) died: %s; restarting it", slot.index, worker.pid, reason
        )
        self._metrics.inc("factledger_judge_worker_restarts_total")
        worker.stop(0)
        with self._pending_lock:
            # Spans sent and not reported back are lost with the worker; those whose
            # turns have no verdict are recovered from the store when it restarts.
            self._assembled(worker.inflight)
        worker.inflight = 0
        slot.open_turns = 0
        slot.worker = None
        if time.monotonic() - worker.started_at > _HEALTHY_SECONDS:
            slot.failures = 0  # an occasional death is not a crash loop
        self._schedule_restart(slot)

    def _schedule_restart(self, slot: _Slot) -> None:
        """Count one more failure in a row (a death or a failed start); the nth waits
        `_RESTART_SECONDS[n - 1]` before the next start."""
        slot.failures += 1
        delay = _RESTART_SECONDS[min(slot.failures - 1, len(_RESTART_SECONDS) - 1)]
        slot.restart_at = time.monotonic() + delay

    def _stored_span(self, span: SpanRecord) -> SpanRecord:
        """The span as stored: redacted when redaction is on. Turn assembly keeps the raw
        span, so validation compares the real values."""
        return self._redactor.span(span) if self._redactor else span

    def _insert(
        self, what: str, insert: Callable[[list[list[object]]], object], batch: list[list[object]]
    ) -> bool:
        """Insert `batch`, waiting out a store that is unavailable or cannot write (a full
        disk): the rows are held, never dropped, and new requests are refused meanwhile
        (`store_writable`). Rows the store refuses for good (bad data) are found by
        halving the batch, dropped and counted, so one bad row never blocks the rows
        around it. False only when stopping first."""
        attempt = 0
        while True:
            try:
                insert(batch)
                self._unwritable.discard(what)
                return True
            except StoreError as exc:
                if not exc.retryable:
                    return self._split(what, insert, batch, exc)
                error: Exception = exc
            except Exception as exc:  # unknown failure: treat as transient, log it
                error = exc
            self._unwritable.add(what)
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
        """Register the pipeline's gauges (`collector.metric_catalogue` declares them)."""
        m = self._metrics
        m.gauge("factledger_queue_spans", lambda: self._pending)
        m.gauge("factledger_queue_bytes", lambda: self._backlog_bytes)
        m.gauge("factledger_assembly_queue_spans", lambda: self._unassembled)
        m.gauge("factledger_open_turns", self._open_turn_count)

    def _open_turn_count(self) -> int:
        if self._judge is not None:
            return self._judge.open_turns
        return sum(slot.open_turns for slot in self._slots)
