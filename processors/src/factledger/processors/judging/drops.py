"""Why spans or turns were set aside, named once for every runner of the judging core.

The span processor reports these names as the keys of its `drops`; the service counts
them in /metrics (`collector.judge.turn_judge.drop_count` says under which counter), so a reason
means the same wherever it is read.
"""

from __future__ import annotations

import threading
from enum import StrEnum


class Drop(StrEnum):
    """One reason something was not handled the ordinary way."""

    # Set aside by the assembler (`TurnAssembler.drops`).
    DUPLICATE = "duplicate"
    """A re-sent span (same tenant, trace and span id): ignored."""
    NORMALIZE_ERROR = "normalize_error"
    """A span whose convention's reader raised."""
    MAX_OPEN_TURNS = "max_open_turns"
    """The oldest open turn was judged early to make room for a new one."""
    GROUP_FULL = "group_full"
    """A span past the bound of spans per trace (or chain of traces)."""
    NO_TURN_ROOT = "no_turn_root"
    """A group with nothing to build a turn from (tool spans whose LLM calls never came)."""
    UNBUILDABLE_TURN = "unbuildable_turn"
    """A group whose turns could not be built."""
    LOG_WITHOUT_SPAN = "log_without_span"
    """A log record whose span never came."""
    HELD_LOGS_FULL = "held_logs_full"
    """A log record past the bound of logs waiting for their span."""
    LOG_EVENTS_FULL = "log_events_full"
    """A log event past the bound of events one span takes."""

    # Set aside by the judging core.
    ASSEMBLY_ERROR = "assembly_error"
    """A span the assembler raised on; its neighbours go on."""
    TURN_FAILED = "turn_failed"
    """A turn that could not be completed, validated or made into its verdict's output."""

    # Set aside by a runner's transport.
    CALLBACK_ERROR = "callback_error"
    """A verdict whose delivery (the span processor's `on_verdict`) raised."""
    QUEUE_FULL = "queue_full"
    """A span that found the runner's bounded queue full."""
    CONVERSION_ERROR = "conversion_error"
    """A span that could not be read into a `SpanRecord`."""
    SHUTDOWN = "shutdown"
    """A span that arrived after shutdown."""


ASSEMBLY_DROPS: frozenset[Drop] = frozenset(
    {
        Drop.DUPLICATE,
        Drop.NORMALIZE_ERROR,
        Drop.MAX_OPEN_TURNS,
        Drop.GROUP_FULL,
        Drop.NO_TURN_ROOT,
        Drop.UNBUILDABLE_TURN,
        Drop.LOG_WITHOUT_SPAN,
        Drop.HELD_LOGS_FULL,
        Drop.LOG_EVENTS_FULL,
    }
)
"""The assembler's reasons: spans or groups it set aside while taking spans in."""

TURN_DROPS: frozenset[Drop] = frozenset({Drop.TURN_FAILED, Drop.CALLBACK_ERROR})
"""Reasons that count turns; every other reason counts spans (or groups, for assembly)."""


class DropTally:
    """Running totals by reason. Thread-safe: a runner's transport counts from the threads
    that hand it spans while the core counts from the one that judges."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._totals: dict[Drop, int] = {}
        self._reported: dict[Drop, int] = {}

    def add(self, reason: Drop, amount: int = 1) -> None:
        if amount > 0:
            with self._lock:
                self._totals[reason] = self._totals.get(reason, 0) + amount

    def totals(self) -> dict[Drop, int]:
        """Every count so far (a snapshot)."""
        with self._lock:
            return dict(self._totals)

    def take_new(self) -> dict[Drop, int]:
        """What was counted since the last call: each count is reported once."""
        with self._lock:
            new = {
                reason: total - self._reported.get(reason, 0)
                for reason, total in self._totals.items()
                if total > self._reported.get(reason, 0)
            }
            self._reported = dict(self._totals)
        return new
