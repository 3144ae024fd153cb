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

Assembly and validation (`collector.judge.turn_judge.TurnJudge`) run in worker processes by
default (`collector.judge.worker_process`; one unless `judge_workers` says more), so they do not
share the GIL with receiving and storing; this process keeps every store access and
inserts the rows the workers send back. With several workers, `collector.judge.routing` sends
every span of a trace, and every trace of a conversation, to the same worker. A worker
that dies is restarted, and the turns it held are read back from the store (spans stored
that no verdict holds, with the verdicts already stored for their traces; those routed
to a worker still alive are left to it) and judged, as after a restart of the service;
a turn whose validation hung a worker is stored unvalidated (`collector.judge.quarantine`).
That reading back covers every trace still owed a verdict, however long the outage (up
to the retention), oldest first, a page at a time in a thread of its own while new
requests are taken.

`Pipeline` composes the stages, each a module of its own:

    ingest.base        Ingest (what the receiver sees) and the refusals
    ingest.sink        the store as the pipeline needs it (ingest.memory: in memory)
    ingest.admission   the backlog's bound, in spans and bytes
    ingest.watermark   how far the log is stored
    ingest.writer      the span writer
    ingest.retry       insert retry and batch halving
    ingest.recovery    owed turns and late spans read back from the store
    judge.in_thread    judging in the turn-processor thread
    judge.workers      judging in worker processes, restarts (judge.hang_watch: hangs)
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence

from factledger.collector import otlp
from factledger.collector.export.records import DEFAULT_DASHBOARD_URL
from factledger.collector.ingest.admission import READ_BACK_SPAN_BYTES, Backlog
from factledger.collector.ingest.assembly import assembly_queue
from factledger.collector.ingest.base import (
    PipelineClosed,
    PipelineFull,
    RequestTooLarge,
    StoreUnavailable,
)
from factledger.collector.ingest.recovery import RECOVERY_PAGE_TRACES, Recovery
from factledger.collector.ingest.retry import BatchHalving, Insert, InsertRetry, Send, Writability
from factledger.collector.ingest.sink import PipelineStore
from factledger.collector.ingest.wal import WalUnavailable, WriteAheadLog
from factledger.collector.ingest.watermark import StoredMark
from factledger.collector.ingest.writer import Batch, SpanWriter
from factledger.collector.judge.base import FlushRequest, Judging, Settlements, process_turns
from factledger.collector.judge.hang_watch import HANG_SECONDS
from factledger.collector.judge.in_thread import ThreadJudging
from factledger.collector.judge.results import (
    VERDICT_DELAY,
    VERDICT_DELAY_BUCKETS,
    Export,
    VerdictWriter,
)
from factledger.collector.judge.routing import Router
from factledger.collector.judge.turn_judge import TurnJudge
from factledger.collector.judge.worker_process import WorkerConfig
from factledger.collector.judge.workers import WorkerJudging
from factledger.collector.metrics import Metrics
from factledger.collector.redaction import Redactor
from factledger.collector.thread_names import named
from factledger.collector.verify.stage import StageLimits, VerificationStage
from factledger.processors.runner import ValidationRunner
from factledger.processors.spans import SpanRecord
from factledger.processors.verification.base import Verifier

__all__ = [
    "READ_BACK_SPAN_BYTES",
    "RECOVERY_PAGE_TRACES",
    "VERDICT_DELAY",
    "VERDICT_DELAY_BUCKETS",
    "Pipeline",
    "PipelineClosed",
    "PipelineFull",
    "RequestTooLarge",
    "StoreUnavailable",
]

log = logging.getLogger("factledger.pipeline")


class Pipeline:
    """Owns the queues and the worker threads (and the judge worker processes).
    `start()` replays the write-ahead log before workers run; `shutdown()` drains what it
    can and is safe to call twice. An `Ingest` for the receiver.

    `judge_workers` judge worker processes share the judging, each span routed by
    `router` (default: `collector.judge.routing.Router`; with one worker nothing is routed).
    With `judge_in_worker=False` turns are judged in the turn-processor thread instead of
    a worker process (the only mode where `clock` reaches the turn assembler; a worker
    process keeps its own monotonic clock), and `judge_workers` does not apply."""

    def __init__(
        self,
        store: PipelineStore,
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
        hang_seconds: float = HANG_SECONDS,
        verifiers: Sequence[Verifier] = (),
        verification_limits: StageLimits | None = None,
        export: Export | None = None,
        dashboard_url: str = DEFAULT_DASHBOARD_URL,
    ) -> None:
        if judge_workers < 1:
            raise ValueError(f"judge_workers must be at least 1, not {judge_workers}")
        if router is not None and router.workers != judge_workers:
            raise ValueError(f"the router routes to {router.workers} workers, not {judge_workers}")
        self._wal = wal
        self._metrics = metrics
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._ready = threading.Event()
        self._closed = False
        self._backlog = Backlog(max_pending_spans, max_pending_bytes, metrics)
        self._mark = StoredMark(wal)
        self._writability = Writability()
        assembly = assembly_queue()

        def insert(table: str, into: Insert) -> Send:
            retry = InsertRetry(table, into, metrics, self._writability, self._stop)
            return BatchHalving(table, retry, metrics)

        # The page size is read here, when the pipeline is made, not when this module is
        # imported: it can be set through this module's name.
        self._recovery = Recovery(
            store,
            self._backlog,
            assembly.put,
            metrics,
            self._stop,
            page_traces=RECOVERY_PAGE_TRACES,
        )
        self._writer = SpanWriter(
            insert("spans", store.insert_spans),
            wal,
            self._mark,
            self._backlog,
            metrics,
            self._stop,
            self._stored,
            redactor,
        )
        self._assembly = assembly
        self._flush = FlushRequest()
        settlements: Settlements = queue.SimpleQueue()
        self._verification: VerificationStage | None = None
        if verifiers:
            self._verification = VerificationStage(
                verifiers,
                lambda judge, settlement: settlements.put((judge, settlement)),
                metrics,
                verification_limits or StageLimits(),
            )
        verify = self._verification is not None
        verdicts = VerdictWriter(
            insert("turns", store.insert_turns),
            insert("findings", store.insert_findings),
            insert("verifications", store.insert_verifications),
            self._backlog,
            metrics,
            self._verification.submit if self._verification else None,
            snapshots=insert("snapshots", store.insert_snapshots),
            evidence=insert("turn_evidence", store.insert_turn_evidence),
            export=export,
            dashboard_url=dashboard_url,
        )
        self._judging: Judging
        if judge_in_worker:
            if judge_workers > 1 and router is None:
                router = Router(judge_workers)
            self._judging = WorkerJudging(
                WorkerConfig(runner, grace_seconds, max_wait_seconds, redactor, verify=verify),
                judge_workers,
                router if judge_workers > 1 else None,
                assembly,
                verdicts,
                self._flush,
                self._backlog,
                metrics,
                self._stop,
                self._recovery.request,
                hang_seconds,
                settlements,
            )
        else:
            judge = TurnJudge(
                runner,
                grace_seconds=grace_seconds,
                max_wait_seconds=max_wait_seconds,
                clock=clock,
                redactor=redactor,
                verify=verify,
                grade=runner.graded,
            )
            self._judging = ThreadJudging(judge, assembly, verdicts, self._flush, settlements)
        self._describe()

    # --- receiver side ---------------------------------------------------------------

    @property
    def ready(self) -> bool:
        """Started, not closing, every worker thread alive and, when turns are judged in
        worker processes, every one of them alive (False while one is being restarted)."""
        alive = all(thread.is_alive() for thread in self._threads)
        return self._ready.is_set() and not self._closed and alive and self._judging.alive

    @property
    def closed(self) -> bool:
        """`shutdown` has begun: requests are refused as `PipelineClosed`."""
        return self._closed

    def has_capacity(self, request_bytes: int = 0) -> bool:
        """Room in the backlog for a request of `request_bytes` (0: size unknown), asked
        before its body is read, so that a request refused for room is never decoded."""
        return not self._closed and self._backlog.has_capacity(request_bytes)

    @property
    def store_writable(self) -> bool:
        """False from an insert that failed for the store's sake (a full disk, no memory,
        a lost server) until an insert into that table succeeds again."""
        return self._writability.writable

    def submit(
        self, content_type: str, tenant: str, body: bytes, spans: Sequence[SpanRecord]
    ) -> int:
        """Make the request durable and queue its spans; returns the log sequence number.
        Raises `WalUnavailable` (the log cannot be written: a full disk, an I/O error)
        having counted nothing: the request was not acknowledged."""
        # Refusals are not drops: a client retries a 503 and sends the spans again, and
        # a 413 is its own to handle; neither was acknowledged.
        self._backlog.check_size(len(spans))
        if self._closed:
            raise PipelineClosed
        if not self._writability.writable:
            self._metrics.inc(
                "factledger_spans_refused_total", len(spans), reason="store_unavailable"
            )
            raise StoreUnavailable
        self._backlog.admit(len(spans), len(body))
        try:
            seq = self._mark.append(content_type, tenant, body)
        except WalUnavailable:  # not acknowledged: its spans leave the backlog again
            self._backlog.withdraw(len(spans), len(body))
            self._metrics.inc(
                "factledger_spans_refused_total", len(spans), reason="wal_unavailable"
            )
            raise
        self._writer.put(Batch(seq, tuple(spans), len(body)))
        return seq

    # --- lifecycle --------------------------------------------------------------------

    def start(self) -> None:
        """Replay the write-ahead log into the queues, then start the workers."""
        self._recovery.started_ns = time.time_ns()
        replayed = 0
        for record in self._wal.replay():
            try:
                result = otlp.decode_request(record.body, record.content_type, tenant=record.tenant)
            except Exception:  # a record that no longer decodes cannot be saved
                log.exception("write-ahead log record %s does not decode", record.seq)
                self._metrics.inc("factledger_wal_records_unreadable_total")
                continue
            self._backlog.replayed(len(result.spans), len(record.body))
            self._mark.replayed(record.seq)
            received_ms = int(record.written_before * 1000)
            self._writer.put(Batch(record.seq, result.spans, len(record.body), received_ms))
            replayed += len(result.spans)
        if replayed:
            log.info("replayed %d spans from the write-ahead log", replayed)
            self._metrics.inc("factledger_wal_replayed_spans_total", replayed)
        self._recovery.request()
        self._judging.start()
        if self._verification is not None:
            self._verification.start()
        threads: list[tuple[Callable[[], None], str]] = [
            (self._writer.run, "span-writer"),
            (self._process_turns, "turn-processor"),
            (self._recovery.run, "recovery"),
        ]
        threads += [(body, name) for name, body in self._judging.background]
        for target, name in threads:
            thread = threading.Thread(
                target=named(name, target), name=f"factledger-{name}", daemon=True
            )
            thread.start()
            self._threads.append(thread)
        self._ready.set()

    def shutdown(self, timeout: float = 10.0) -> None:
        """Stop taking requests, store what is queued, judge open turns; idempotent."""
        if self._closed:
            return
        self._closed = True
        self.force_flush(timeout, judge_open_turns=True)
        if self._verification is not None:
            self._verification.stop(timeout)
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout)
        # The turn processor could not stop them: blocked on a worker that is stuck.
        if self._judging.kill():
            for thread in self._threads:
                thread.join(timeout)

    def force_flush(self, timeout: float = 10.0, *, judge_open_turns: bool = False) -> bool:
        """Wait until every accepted span is stored and every due turn judged (tests,
        shutdown). With `judge_open_turns`, turns still open are judged now too."""
        deadline = time.monotonic() + timeout
        while not self._backlog.empty or not self._recovery.idle:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        if judge_open_turns and self._threads:
            return self._flush.ask(deadline - time.monotonic())
        return True

    def verified(self, timeout: float = 10.0) -> bool:
        """Wait until verification has answered every turn it holds (retries waiting
        count) and the settled versions are judged: for tests. True at once when no
        verifier is configured."""
        if self._verification is None:
            return True
        deadline = time.monotonic() + timeout
        if not self._verification.wait_idle(timeout):
            return False
        return self._flush.ask(deadline - time.monotonic()) if self._threads else True

    # --- stage joints -----------------------------------------------------------------

    def _stored(self, spans: tuple[SpanRecord, ...]) -> None:
        """Stored spans go to assembly, behind any judged trace a late one belongs to."""
        self._recovery.late_spans(spans)
        self._assembly.put(spans)

    def _process_turns(self) -> None:
        process_turns(self._judging, self._stop, self._metrics)

    def _describe(self) -> None:
        """Register the pipeline's gauges (`collector.metric_catalogue` declares them)."""
        m = self._metrics
        m.gauge("factledger_queue_spans", lambda: self._backlog.pending)
        m.gauge("factledger_queue_bytes", lambda: self._backlog.bytes)
        m.gauge("factledger_assembly_queue_spans", lambda: self._backlog.unassembled)
        m.gauge("factledger_open_turns", self._open_turn_count)

    def _open_turn_count(self) -> int:
        return self._judging.open_turns
