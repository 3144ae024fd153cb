"""The seam between the pipeline and the judging of turns, and the turn processor loop.

A `Judging` takes what waits for assembly (`collector.ingest.assembly`), judges the turns
that are due (`collector.judge.turn_judge.TurnJudge`), and stores their verdicts. Two kinds:
`ThreadJudging` judges in the turn-processor thread itself; `WorkerJudging` hands the
spans to judge worker processes and stores what they send back. Either answers a
`FlushRequest` (judge every open turn now) once every judge of it has.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Sequence
from typing import Protocol, TypeAlias

from factledger.collector.metrics import Metrics
from factledger.processors.judging.core import Settlement

log = logging.getLogger("factledger.pipeline")


Settlements: TypeAlias = queue.SimpleQueue[tuple[int, Settlement]]
"""What verification answered, by the index of the judge that judged the turn: put by the
verification stage's threads, taken by the turn processor."""


def take_settlements(settlements: Settlements) -> dict[int, list[Settlement]]:
    """Everything waiting, by judge."""
    taken: dict[int, list[Settlement]] = {}
    while True:
        try:
            judge, settlement = settlements.get_nowait()
        except queue.Empty:
            return taken
        taken.setdefault(judge, []).append(settlement)


class Judging(Protocol):
    """Judges turns from the assembly queue. `run_once` and `close` are called by the
    turn-processor thread alone; the properties may be read from any thread."""

    @property
    def alive(self) -> bool:
        """Every judge it runs is alive (False while a worker process is restarted)."""
        ...

    @property
    def open_turns(self) -> int:
        """Turns being assembled."""
        ...

    @property
    def background(self) -> Sequence[tuple[str, Callable[[], None]]]:
        """Threads it needs besides the turn processor, by name: each body returns once
        the pipeline stops."""
        ...

    def start(self) -> None:
        """Start what judges (worker processes); before the turn processor runs."""
        ...

    def run_once(self) -> None:
        """One round: take what waits, judge what is due, store the verdicts; waits a
        moment at most when there is nothing to do. May raise: the loop goes on."""
        ...

    def close(self) -> None:
        """Stop what judges (the turn processor is ending)."""
        ...

    def kill(self) -> bool:
        """Kill what did not stop (stuck inside a validator) at shutdown; True if any."""
        ...


class FlushRequest:
    """A request that every open turn be judged now (shutdown, tests), and its answer.
    Asked from any thread; answered by the turn processor."""

    def __init__(self) -> None:
        self._requested = threading.Event()
        self._answered = threading.Event()

    @property
    def requested(self) -> bool:
        return self._requested.is_set()

    def ask(self, timeout: float) -> bool:
        """Request a flush and wait for it; False when `timeout` passes first."""
        self._answered.clear()
        self._requested.set()
        return self._answered.wait(max(0.0, timeout))

    def answer(self) -> None:
        """Every judge has judged its open turns."""
        self._requested.clear()
        self._answered.set()


def process_turns(judging: Judging, stop: threading.Event, metrics: Metrics) -> None:
    """The turn processor thread: rounds of `judging` until `stop`, then `close`."""
    try:
        while not stop.is_set():
            try:
                judging.run_once()
            except Exception:  # the processor must outlive any single batch
                log.exception("turn processor iteration failed")
                metrics.inc("factledger_worker_errors_total", worker="turn-processor")
    finally:
        judging.close()
