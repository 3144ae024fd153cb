"""Window counts for a rule, folded from the store's per-minute reject-rate series.

Windows are whole minutes and end with the minute that holds `now` (that minute is still
filling up: counting it makes a spike visible sooner). The baseline is the
`baseline_windows` windows just before the current one, counted together.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from ..store import Store
from .evaluator import GroupStats
from .rules import AlertRule

_MINUTE = timedelta(minutes=1)


@dataclass(frozen=True)
class Windows:
    """[baseline_start, start) is the baseline, [start, end) the current window."""

    baseline_start: datetime
    start: datetime
    end: datetime


def windows(rule: AlertRule, now: datetime) -> Windows:
    """The rule's windows at `now` (naive datetimes are read as UTC)."""
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    end = now.astimezone(UTC).replace(second=0, microsecond=0) + _MINUTE
    start = end - rule.window
    return Windows(start - rule.window * rule.baseline_windows, start, end)


def hits(rule: AlertRule, point: Mapping[str, Any]) -> int:
    """Turns of one series point that count toward the rule's rate."""
    rejected, flagged = int(point["rejected"]), int(point["flagged"])
    if rule.verdict == "reject":
        return rejected
    if rule.verdict == "flag":
        return flagged
    # A re-judged turn may count as both: never more hits than turns.
    return min(int(point["turns"]), rejected + flagged)


def fold(
    rule: AlertRule, series: Sequence[Mapping[str, Any]], span: Windows
) -> tuple[dict[str, GroupStats], dict[str, GroupStats]]:
    """Per-group counts of the current window and of the baseline, from series shaped like
    `Store.reject_rate`'s (`[{key, points: [{t, turns, rejected, flagged}]}]`)."""
    current: dict[str, list[int]] = {}
    baseline: dict[str, list[int]] = {}
    for entry in series:
        key = str(entry["key"])
        for point in entry["points"]:
            t: datetime = point["t"]
            if span.start <= t < span.end:
                into = current
            elif span.baseline_start <= t < span.start:
                into = baseline
            else:
                continue
            counts = into.setdefault(key, [0, 0])
            counts[0] += int(point["turns"])
            counts[1] += hits(rule, point)
    return (
        {k: GroupStats(turns, n) for k, (turns, n) in current.items()},
        {k: GroupStats(turns, n) for k, (turns, n) in baseline.items()},
    )


def window_stats(
    store: Store, tenant: str, rule: AlertRule, now: datetime
) -> tuple[dict[str, GroupStats], dict[str, GroupStats]]:
    """The rule's current and baseline counts per group at `now`, read from the store.
    Raises StoreError."""
    span = windows(rule, now)
    series = store.reject_rate(
        tenant, group_by=rule.group_by, bucket="1m", since=span.baseline_start, until=span.end
    )
    return fold(rule, series, span)
