"""Judging in the turn-processor thread: no worker process, one `TurnJudge`.

The only mode where the pipeline's clock reaches the turn assembler (a worker process
keeps its own monotonic clock), and the one tests use to step through time.
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Sequence

from factledger.collector.ingest.assembly import ASSEMBLY_CHUNK, AssemblyItem, ReadBack
from factledger.collector.judge.turn_judge import Judged, TurnJudge

from .base import FlushRequest, Settlements, take_settlements
from .results import VerdictWriter


class ThreadJudging:
    """A `Judging` that assembles and validates on the calling thread."""

    def __init__(
        self,
        judge: TurnJudge,
        assembly: queue.Queue[AssemblyItem],
        verdicts: VerdictWriter,
        flush: FlushRequest,
        settlements: Settlements | None = None,
    ) -> None:
        self._judge = judge
        self._assembly = assembly
        self._verdicts = verdicts
        self._flush = flush
        self._settlements = settlements

    @property
    def alive(self) -> bool:
        return True

    @property
    def open_turns(self) -> int:
        return self._judge.open_turns

    @property
    def background(self) -> Sequence[tuple[str, Callable[[], None]]]:
        return ()

    def start(self) -> None:
        pass  # nothing runs apart from the turn processor

    def run_once(self) -> None:
        """Assemble what was stored, judge what is due and what verification settled."""
        if self._settlements is not None:
            for settled in take_settlements(self._settlements).values():
                self._apply(self._judge.settle(settled))
        try:
            item = self._assembly.get(timeout=0.05)
        except queue.Empty:
            item = ()
        if isinstance(item, ReadBack):
            self._judge.recall(item.priors)
            item = item.spans
        spans = item
        for start in range(0, max(len(spans), 1), ASSEMBLY_CHUNK):
            self._apply(self._judge.judge(spans[start : start + ASSEMBLY_CHUNK]))
        if self._flush.requested:
            self._apply(self._judge.judge((), flush=True))

    def _apply(self, judged: Judged) -> None:
        try:
            self._verdicts.write([judged])
        finally:
            if judged.flushed:
                self._flush.answer()

    def close(self) -> None:
        pass

    def kill(self) -> bool:
        return False
