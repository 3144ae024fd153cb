"""When a turn's own times cannot be right: agents whose clocks are hours off.

Charts and alerts bucket turns by `StartedAt`, the agent's own clock. A clock hours ahead
or behind puts its turns outside every current window, so they would be stored and never
charted or alerted on. The evidence is each span's receive lag: the time the service
received it (its own clock, the span's `IngestedAt`) minus the span's own end. A correct
clock's lags are the export delay, seconds; a skewed clock shifts every span's lag by the
skew. A late span of an old turn, or a turn read back after an outage, has lags as large
only for the spans that came late (the others were received, and stored, when they ended),
so the rule asks of the median: at least half the turn's spans, rounding towards "not
skewed", must lie beyond `SKEW_BOUND_SECONDS` on the same side.

A skewed turn is bucketed at the time it was received minus its own duration; its own
start and the skew (agent clock minus the service's, seconds: positive when ahead) are
stored beside it. Spans whose receive time is unknown are left out; a turn with none is
never skewed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from factledger.processors.assembly.assembler import AssembledTurn

SKEW_BOUND_SECONDS = 2 * 3600.0
"""How far a turn's spans may end from when they were received before its own times are
taken for a skewed clock. Beyond any export retry and any ordinary queue in front of the
service (those keep a turn's own times), and shorter than the hours that a wrong time zone
or an unset clock makes; charts and alerts look at minutes to hours."""


@dataclass(frozen=True)
class TurnTimes:
    """When a turn is counted (`started_at_ns`, its bucket time), its own start, and the
    skew its clock showed (0.0 when its own times hold)."""

    started_at_ns: int
    agent_started_at_ns: int
    skew_seconds: float = 0.0

    @property
    def skewed(self) -> bool:
        return self.skew_seconds != 0.0


def receive_skew_ns(receive_lags_ns: Sequence[int], bound_seconds: float) -> int:
    """The skew (agent clock minus the service's, ns) that the sorted per-span receive
    lags show, or 0 when at least half of them lie within `bound_seconds`: the lower
    median beyond the bound behind, the upper median beyond it ahead."""
    if not receive_lags_ns:
        return 0
    bound = int(bound_seconds * 1e9)
    count = len(receive_lags_ns)
    low, high = receive_lags_ns[(count - 1) // 2], receive_lags_ns[count // 2]
    if low > bound:
        return -low  # every span ended long before it arrived: the clock is behind
    if high < -bound:
        return -high  # the spans end after they arrived: the clock is ahead
    return 0


def turn_times(assembled: AssembledTurn, bound_seconds: float = SKEW_BOUND_SECONDS) -> TurnTimes:
    """When `assembled` counts: its own start, or for a skewed clock its latest receive
    time minus its own duration."""
    own = assembled.started_at_ns
    skew = receive_skew_ns(assembled.receive_lags_ns, bound_seconds)
    if not skew or not assembled.received_at_ns:
        return TurnTimes(own, own)
    duration = max(0, assembled.ended_at_ns - own) if own else 0
    return TurnTimes(assembled.received_at_ns - duration, own, skew / 1e9)
