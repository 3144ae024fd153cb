"""Admission: the backlog's bound, in spans and in request bytes, and its refusals.

The backlog is every span held in memory: accepted and not stored yet (pending), and
stored but not assembled into turns yet (unassembled). Both count against one bound,
since both are held; so do the bytes of the requests behind them, since one span may
carry megabytes. A request alone is always taken (the body limit bounds it), so one
larger than the byte bound waits for an empty backlog instead of being refused for good;
a request of more spans than the bound itself can never be taken and is refused for good.

Refusals are not drops: a client retries a 503 and sends the spans again, and a 413 is
its own to handle; neither was acknowledged. They are counted by reason in
`factledger_spans_refused_total`.
"""

from __future__ import annotations

import threading

from factledger.collector.metrics import Metrics

from .base import PipelineFull, RequestTooLarge

READ_BACK_SPAN_BYTES = 2048
"""What a span read back from the store counts against the byte bound (its request's size
is not known any more): about a GenAI span's encoded size."""


class Backlog:
    """Counts of the spans held and the bytes behind them, against `max_spans` and
    `max_bytes`. Thread-safe: the receiver admits while the writer and the turn processor
    move spans on. The counts are read without the lock (a moment stale at worst)."""

    def __init__(self, max_spans: int, max_bytes: int, metrics: Metrics) -> None:
        self.max_spans = max_spans
        self.max_bytes = max_bytes
        self._metrics = metrics
        self._lock = threading.Lock()
        self.pending = 0
        """Spans accepted (or replayed from the log) and not stored yet."""
        self.unassembled = 0
        """Spans stored (or read back) and not yet added to a turn."""
        self._pending_bytes = 0
        self._unassembled_bytes = 0
        """Request bytes behind `pending` and `unassembled`; the second is an estimate
        once spans leave in other groupings than they came in."""

    @property
    def spans(self) -> int:
        """Spans accepted but not yet stored, plus stored but not yet assembled."""
        return self.pending + self.unassembled

    @property
    def bytes(self) -> int:
        """The request bytes behind the backlog."""
        return self._pending_bytes + self._unassembled_bytes

    @property
    def empty(self) -> bool:
        return self.pending <= 0 and self.unassembled <= 0

    @property
    def at_most_half_full(self) -> bool:
        """Half the bound or less, in spans and in bytes: room for spans read back."""
        return self.spans <= self.max_spans // 2 and self.bytes <= self.max_bytes // 2

    def has_capacity(self, request_bytes: int = 0) -> bool:
        """Room for a request of `request_bytes` (0: size unknown)."""
        if self.spans == 0:
            return True  # a request alone is always taken
        room = self.bytes + max(request_bytes, 1) <= self.max_bytes
        return room and self.spans < self.max_spans

    def check_size(self, spans: int) -> None:
        """Raise `RequestTooLarge` for a request no backlog could ever hold."""
        if spans > self.max_spans:
            self._metrics.inc("factledger_spans_refused_total", spans, reason="too_many_spans")
            raise RequestTooLarge(spans, self.max_spans)

    def admit(self, spans: int, size: int) -> None:
        """Take a request of `spans` spans and `size` bytes as pending, or raise
        `PipelineFull` having taken nothing."""
        with self._lock:
            backlog = self.spans
            full = backlog + spans > self.max_spans or self.bytes + size > self.max_bytes
            if full and backlog > 0:
                self._metrics.inc("factledger_spans_refused_total", spans, reason="queue_full")
                raise PipelineFull
            self.pending += spans
            self._pending_bytes += size

    def replayed(self, spans: int, size: int) -> None:
        """Spans replayed from the write-ahead log: pending, whatever the bound."""
        with self._lock:
            self.pending += spans
            self._pending_bytes += size

    def withdraw(self, spans: int, size: int) -> None:
        """Pending spans that leave unstored: not acknowledged after all (the log could
        not take them), or kept in the log for the next start (stopping)."""
        with self._lock:
            self.pending -= spans
            self._pending_bytes -= size

    def stored(self, spans: int, size: int) -> None:
        """Pending spans are stored and wait for assembly."""
        with self._lock:
            # Counted as unassembled before they stop counting as pending, so that a
            # reader never sees a moment where they are in neither.
            self.unassembled += spans
            self._unassembled_bytes += size
            self.pending -= spans
            self._pending_bytes -= size

    def read_back(self, spans: int) -> None:
        """Spans read back from the store wait for assembly (their size estimated)."""
        with self._lock:
            self.unassembled += spans
            self._unassembled_bytes += spans * READ_BACK_SPAN_BYTES

    def assembled(self, spans: int) -> None:
        """`spans` left the unassembled backlog (added to a turn, set aside, or lost with
        a worker). Their bytes are taken in proportion: spans leave in turns, not in the
        requests they came in."""
        if spans <= 0:
            return
        with self._lock:
            if spans >= self.unassembled:
                self._unassembled_bytes = 0
            else:
                self._unassembled_bytes -= self._unassembled_bytes * spans // self.unassembled
            self.unassembled -= spans
