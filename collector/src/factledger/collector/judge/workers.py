"""Judging in worker processes (`collector.judge.worker_process`), so that assembly and validation
do not share the GIL with receiving and storing; this process keeps every store access
and inserts the rows the workers send back.

With several workers, `collector.judge.routing` sends every span of a trace, and every trace
of a conversation, to the same worker. A worker that dies is restarted (after a wait that
grows while it keeps dying), and the turns it held are read back from the store by
recovery: those routed to a worker still alive are left to it. A worker that hangs is
killed by the hang watch (`collector.judge.hang_watch`).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from factledger.collector.ingest.admission import Backlog
from factledger.collector.ingest.assembly import ASSEMBLY_CHUNK, AssemblyItem, ReadBack
from factledger.collector.judge.routing import Router
from factledger.collector.judge.turn_judge import Judged, drop_count
from factledger.collector.judge.worker_process import (
    JudgeWorker,
    WorkerConfig,
    WorkerDied,
    answering,
)
from factledger.collector.metrics import Metrics
from factledger.processors.assembly.assembler import PriorVerdict
from factledger.processors.judging.core import Settlement
from factledger.processors.judging.drops import Drop
from factledger.processors.spans import SpanRecord

from .base import FlushRequest, Settlements, take_settlements
from .hang_watch import HANG_SECONDS, HangWatch
from .results import VerdictWriter

log = logging.getLogger("factledger.pipeline")

RESTART_SECONDS = (0.0, 1.0, 2.0, 5.0, 10.0, 30.0)
"""Waits before restarting a judge worker that died again and again (a crash loop)."""
HEALTHY_SECONDS = 60.0
"""A worker that ran this long before dying was not crash-looping: its wait starts over."""
_RECEIVE_SECONDS = 0.02


@dataclass(frozen=True)
class _Recall:
    """Stored verdicts for a worker to go on from, ahead of the spans read back with them."""

    priors: tuple[PriorVerdict, ...]


@dataclass(frozen=True)
class _Settle:
    """Verification answers for turns this worker judged."""

    settlements: tuple[Settlement, ...]


@dataclass(eq=False)
class _Slot:
    """One judge worker process and what the turn processor tracks of it (the hang watch
    reads `worker` and `index` only)."""

    index: int
    worker: JudgeWorker | None = None
    failures: int = 0
    """Deaths or failed starts in a row: how long the next restart waits."""
    restart_at: float = 0.0
    outbox: deque[tuple[SpanRecord, ...] | _Recall | _Settle] = field(default_factory=deque)
    """Routed to this worker and not sent yet (waits here while the worker restarts)."""
    open_turns: int = 0
    flush_sent: bool = False
    flushed: bool = False


class WorkerJudging:
    """A `Judging` over `workers` judge worker processes, each span routed by `router`
    (with one worker nothing is routed). `recover(index)` is asked to read back the turns
    a restarted worker's predecessor held."""

    def __init__(
        self,
        config: WorkerConfig,
        workers: int,
        router: Router | None,
        assembly: queue.Queue[AssemblyItem],
        verdicts: VerdictWriter,
        flush: FlushRequest,
        backlog: Backlog,
        metrics: Metrics,
        stop: threading.Event,
        recover: Callable[[int], None],
        hang_seconds: float = HANG_SECONDS,
        settlements: Settlements | None = None,
    ) -> None:
        self._config = config
        self._slots = [_Slot(index) for index in range(workers)]
        self._router = router
        self._assembly = assembly
        self._verdicts = verdicts
        self._flush = flush
        self._backlog = backlog
        self._metrics = metrics
        self._stop = stop
        self._recover = recover
        self._settlements = settlements
        self._watch = HangWatch(self._slots, metrics, stop, hang_seconds)

    @property
    def alive(self) -> bool:
        return all(s.worker is not None and s.worker.alive for s in self._slots)

    @property
    def open_turns(self) -> int:
        return sum(slot.open_turns for slot in self._slots)

    @property
    def background(self) -> Sequence[tuple[str, Callable[[], None]]]:
        return (("worker-watch", self._watch.run),)

    def start(self) -> None:
        """Start every judge worker, at the same time (each takes a moment to import)."""
        if len(self._slots) == 1:
            self._slots[0].worker = self._start_worker(self._slots[0], self._config)
            return

        def start(slot: _Slot) -> None:
            slot.worker = self._start_worker(slot, self._config)

        starting = [threading.Thread(target=start, args=(slot,)) for slot in self._slots]
        for thread in starting:
            thread.start()
        for thread in starting:
            thread.join()

    def close(self) -> None:
        for slot in self._slots:
            if slot.worker is not None:
                slot.worker.stop()

    def kill(self) -> bool:
        stuck = [s.worker for s in self._slots if s.worker is not None and s.worker.alive]
        for worker in stuck:
            worker.kill()
        return bool(stuck)

    def run_once(self) -> None:
        """Route what was stored, send it, insert what came back; restart a worker that
        died."""
        live = [slot for slot in self._slots if self._live_worker(slot) is not None]
        if not live:  # waiting to restart them
            self._stop.wait(0.1)
            return
        self._route_assembly()
        self._route_settlements()
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
                self._apply(results, slot)
                # Time spent inserting is not the worker's silence: count from here.
                worker.listening()

    # --- routing and sending ----------------------------------------------------------

    def _route_assembly(self) -> None:
        """Move what waits for assembly into the workers' outboxes, each span to the
        worker its trace is routed to (`collector.judge.routing`)."""
        while True:
            try:
                item = self._assembly.get_nowait()
            except queue.Empty:
                return
            if isinstance(item, ReadBack):
                self._route_read_back(item)
                continue
            for slot, part in zip(self._slots, self._route(item, None), strict=True):
                if part:
                    slot.outbox.append(part)

    def _route_settlements(self) -> None:
        """Verification answers go back to the worker that judged their turns (a worker
        restarted meanwhile takes them as the next version all the same)."""
        if self._settlements is None:
            return
        for judge, settled in take_settlements(self._settlements).items():
            if 0 <= judge < len(self._slots):
                self._slots[judge].outbox.append(_Settle(tuple(settled)))

    def _route(
        self, spans: tuple[SpanRecord, ...], only: frozenset[int] | None
    ) -> list[tuple[SpanRecord, ...]]:
        """`spans` split by worker; those of traces routed to a worker outside `only` are
        left out (and stop counting as unassembled)."""
        if self._router is None:  # one worker
            return [spans]
        parts, left_out = self._router.route(spans, only)
        if left_out:
            self._backlog.assembled(left_out)
        return [tuple(part) for part in parts]

    def _route_read_back(self, item: ReadBack) -> None:
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
            if isinstance(message, _Settle):
                worker.settle(message.settlements)
                continue
            unsent = worker.send(message, ASSEMBLY_CHUNK)
            if unsent:
                self._backlog.assembled(unsent)
                dropped = drop_count(Drop.ASSEMBLY_ERROR, unsent)
                self._metrics.inc(dropped.name, dropped.amount, **dict(dropped.labels))
        if self._flush.requested and not slot.flush_sent:
            worker.request_flush()  # after every span sent: it answers after them
            slot.flush_sent = True

    def _apply(self, results: Sequence[Judged], slot: _Slot) -> None:
        try:
            self._verdicts.write(results, slot.index)
        finally:
            slot.open_turns = results[-1].open_turns
            if any(judged.flushed for judged in results):
                self._flush_answered(slot)

    def _flush_answered(self, slot: _Slot) -> None:
        """A flush is done once every worker has answered it."""
        slot.flushed = True
        if not all(s.flushed for s in self._slots):
            return
        for each in self._slots:
            each.flushed = each.flush_sent = False
        self._flush.answer()

    # --- starts, deaths and restarts --------------------------------------------------

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
        if time.monotonic() < slot.restart_at:
            return None
        config = replace(self._config, quarantined=frozenset(self._watch.quarantined))
        slot.worker = self._start_worker(slot, config)
        if slot.worker is not None:
            # The turns the dead worker held: their spans are stored, their verdicts
            # are not. Read them back (after any that were still queued: duplicates
            # are ignored by the assembler) and ask for a pending flush again.
            self._recover(slot.index)
            slot.flush_sent = False
        return slot.worker

    def _worker_died(self, slot: _Slot, reason: str) -> None:
        worker = slot.worker
        if worker is None:
            return
        log.error(
            "judge worker %d (pid %s) died: %s; restarting it", slot.index, worker.pid, reason
        )
        self._metrics.inc("factledger_judge_worker_restarts_total")
        worker.stop(0)
        # Spans sent and not reported back are lost with the worker; those whose
        # turns have no verdict are recovered from the store when it restarts.
        self._backlog.assembled(worker.inflight)
        worker.inflight = 0
        slot.open_turns = 0
        slot.worker = None
        if time.monotonic() - worker.started_at > HEALTHY_SECONDS:
            slot.failures = 0  # an occasional death is not a crash loop
        self._schedule_restart(slot)

    def _schedule_restart(self, slot: _Slot) -> None:
        """Count one more failure in a row (a death or a failed start); the nth waits
        `RESTART_SECONDS[n - 1]` before the next start."""
        slot.failures += 1
        delay = RESTART_SECONDS[min(slot.failures - 1, len(RESTART_SECONDS) - 1)]
        slot.restart_at = time.monotonic() + delay
