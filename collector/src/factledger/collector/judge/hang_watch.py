"""The hang watch: kill a judge worker that stays silent while the turn processor listens.

Its judging is then stuck where the turn time limit cannot reach (inside C code). A
thread of its own, because the turn processor may itself be blocked sending to that
worker. The kill ends the worker; the turn processor sees it die, restarts it and
recovers the turns it held, and the turn it was validating is quarantined
(`collector.judge.quarantine`): the next worker stores it unvalidated.

A worker that begins or ends a turn between two looks is moving, however long its batch
takes to answer: silence counts from the last such change.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Protocol

from factledger.collector.judge.quarantine import MAX_QUARANTINED
from factledger.collector.judge.worker_process import JudgeWorker
from factledger.collector.metrics import Metrics

log = logging.getLogger("factledger.pipeline")

HANG_SECONDS = 120.0
"""A worker silent this long (no result, no heartbeat) is killed and replaced: far above
one message's work (a chunk of 500 spans, or a flush), well below forever."""
WATCH_SECONDS = 1.0


class Watched(Protocol):
    """A worker's place as the watch reads it (`index` and `worker` only)."""

    @property
    def index(self) -> int: ...

    @property
    def worker(self) -> JudgeWorker | None: ...


class HangWatch:
    """Watches `slots` every `WATCH_SECONDS` until `stop`; `run` is the thread's body."""

    def __init__(
        self,
        slots: Sequence[Watched],
        metrics: Metrics,
        stop: threading.Event,
        hang_seconds: float = HANG_SECONDS,
    ) -> None:
        self._slots = slots
        self._metrics = metrics
        self._stop = stop
        self._hang_seconds = hang_seconds
        self.quarantined: tuple[str, ...] = ()
        """Turns that stopped a worker (see `collector.judge.quarantine`), oldest first. Replaced,
        not mutated: the turn processor reads it at a worker's next start."""

    def run(self) -> None:
        noted: dict[int, tuple[JudgeWorker | None, str]] = {}
        while not self._stop.wait(WATCH_SECONDS):
            for slot in self._slots:
                self._watch(slot, noted)

    def _watch(self, slot: Watched, noted: dict[int, tuple[JudgeWorker | None, str]]) -> None:
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
                kept = (*self.quarantined, turn_id)
                self.quarantined = kept[-MAX_QUARANTINED:]
            self._metrics.inc("factledger_judge_worker_hangs_total")
            worker.kill()
