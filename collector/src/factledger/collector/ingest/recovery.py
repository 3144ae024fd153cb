"""Recovery: spans stored that no verdict holds, read back from the store to be judged.

Two cases. A walk over every trace owed a verdict, however long the outage (up to the
retention), oldest first, a page at a time in a thread of its own while new requests are
taken: at a start (turns in flight at the last stop), and when a judge worker died with
turns it held. And a late span: one that started before this process did may belong to
a turn judged before it, so its trace, when it has verdicts, is read back with them ahead
of the span, which then gives the turn's next version.

Spans read back go to assembly behind the stored verdicts they go on from, so what is
owed is judged and what was judged is not judged again.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from factledger.collector import rows
from factledger.collector.metrics import Metrics
from factledger.processors.assembly.assembler import PriorVerdict
from factledger.processors.spans import SpanRecord

from .admission import Backlog
from .assembly import ReadBack
from .sink import RecoveryReads

log = logging.getLogger("factledger.pipeline")

RECOVERY_PAGE_TRACES = 1_000
"""Owed traces read back from the store at a time. Recovery reads every trace still owed
a verdict, however old (the tables' TTL bounds it), oldest first; the next page waits
until the backlog is at most half full, so an outage's worth of owed turns never keeps
new requests out."""
MAX_LOOKED_UP_TRACES = 100_000
_EPOCH = datetime.fromtimestamp(0, UTC)


class Recovery:
    """Reads back through `reads` and hands what it read to `hand_on` (the assembly
    queue), counting it in `backlog`. `request` may be called from any thread; `run` is
    the recovery thread's body; `late_spans` runs on the span writer's thread."""

    def __init__(
        self,
        reads: RecoveryReads,
        backlog: Backlog,
        hand_on: Callable[[ReadBack], None],
        metrics: Metrics,
        stop: threading.Event,
        *,
        page_traces: int = RECOVERY_PAGE_TRACES,
    ) -> None:
        self._reads = reads
        self._backlog = backlog
        self._hand_on = hand_on
        self._metrics = metrics
        self._stop = stop
        self._page_traces = page_traces
        self.started_ns = 0
        """Wall clock at the pipeline's start: spans that began before may be late."""
        self._looked_up: OrderedDict[tuple[str, str], None] = OrderedDict()
        """(tenant, trace id) already looked up by `late_spans`."""
        self._requested = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._lock = threading.Lock()
        self._for_all = False
        self._for_workers: set[int] = set()
        """Whom the requested walk is for: every worker, or these (restarted) ones."""

    @property
    def idle(self) -> bool:
        """No walk requested or under way."""
        return self._idle.is_set()

    def request(self, worker: int | None = None) -> None:
        """Have the recovery thread read back, from the oldest, every trace whose stored
        spans no verdict holds: turns in flight at the last stop or held by a worker that
        died, the next turn of a judged trace, late spans. For a restarted `worker`, the
        traces routed to the other workers are left to them. Returns at once; `idle` is
        False until the reading ends."""
        with self._lock:
            if worker is None:
                self._for_all = True
            else:
                self._for_workers.add(worker)
            self._idle.clear()
            self._requested.set()

    def run(self) -> None:
        """The recovery thread: one walk over every owed trace per request."""
        try:
            while not self._stop.is_set():
                if not self._requested.wait(0.1):
                    continue
                with self._lock:
                    self._requested.clear()
                    workers = None if self._for_all else frozenset(self._for_workers)
                    self._for_all = False
                    self._for_workers = set()
                try:
                    self._read_back_owed(workers)
                except Exception:  # recovery is best effort; ingest goes on regardless
                    log.exception("reading open turns back from the store failed")
                    self._metrics.inc("factledger_worker_errors_total", worker="recovery")
                with self._lock:
                    if not self._requested.is_set():  # none asked for meanwhile
                        self._idle.set()
        finally:
            self._idle.set()  # stopping: nobody waits for a walk that will not come

    def _read_back_owed(self, workers: frozenset[int] | None) -> None:
        """Read the owed traces back a page at a time, oldest first, each with the
        verdicts already stored for them; for `workers` (None: every one). A page waits
        for room in the backlog."""
        traces = spans = 0
        for tenant in self._reads.recent_tenants(_EPOCH):
            after = None
            while not self._stop.is_set():
                page = self._reads.owed_traces(tenant, _EPOCH, self._page_traces, after)
                if not page:
                    break
                after = page[-1]
                if not self._wait_for_room():
                    return
                owed = [o.trace_id for o in page]
                read = self._reads.spans_for_traces(tenant, owed)
                span_ids = [str(row["SpanId"]) for row in read]
                priors = self._reads.verdicts_for(tenant, owed, span_ids, _EPOCH)
                if read:
                    spans_read = tuple(rows.span_from_row(row) for row in read)
                    self._hand_back(priors, spans_read, workers)
                traces += len(owed)
                spans += len(read)
        if spans:
            log.info("finishing %d open traces (%d spans) read back from the store", traces, spans)

    def _wait_for_room(self) -> bool:
        """Wait until the backlog is at most half full; False when stopping first."""
        while not self._backlog.at_most_half_full:
            if self._stop.wait(0.05):
                return False
        return True

    def late_spans(self, spans: Sequence[SpanRecord]) -> None:
        """Read back, ahead of `spans`, the judged traces those that started before this
        process may belong to (the assembler no longer holds those turns and would make
        one of the span alone). Each trace is looked up once; new traces cost nothing."""
        older: dict[str, set[str]] = {}
        for span in spans:
            key = (span.tenant, span.trace_id)
            if span.start_time_unix_nano < self.started_ns and key not in self._looked_up:
                older.setdefault(span.tenant, set()).add(span.trace_id)
                self._looked_up[key] = None
        while len(self._looked_up) > MAX_LOOKED_UP_TRACES:
            self._looked_up.popitem(last=False)
        for tenant, traces in older.items():
            try:
                priors = self._reads.verdicts_for(tenant, list(traces), (), datetime.now(UTC))
                if not priors:
                    continue
                read = self._reads.spans_for_traces(tenant, list(traces))
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
        self._metrics.inc("factledger_recovered_spans_total", len(spans))
        self._backlog.read_back(len(spans))
        self._hand_on(ReadBack(tuple(priors), spans, workers))
