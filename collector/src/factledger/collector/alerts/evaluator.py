"""Deciding whether a group is spiking, and the alert state machine. Pure: no store,
no clock, no network (times and ids are passed in).

`evaluate` turns one window's counts (and the baseline windows' counts) into a
`Decision` per group. `step` moves one (rule, group) alert along::

    ok ──firing──▶ FIRING ──(still firing, cool-down over)──▶ FIRING (repeat notice)
     ▲                │
     └────resolved────┘   (the decision is no longer firing: too few turns counts too)

Each arrow emits one `AlertEvent`; staying put emits none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from .rules import AlertRule

EventKind = Literal["firing", "repeat", "resolved"]


@dataclass(frozen=True)
class GroupStats:
    """One group's counts over a span of time: its turns, and those that count toward
    the rule's rate (`hits`: rejected, flagged, or either)."""

    turns: int = 0
    hits: int = 0

    @property
    def rate(self) -> float:
        return self.hits / self.turns if self.turns else 0.0


@dataclass(frozen=True)
class Decision:
    """One group's verdict for one evaluation.

    `limit` is the rate above which the group fires now (the lower of the threshold and
    the baseline limit `max(baseline_factor * baseline, min_rate)`), None when no
    condition applies (a baseline-only rule without enough baseline turns). `baseline`
    is None when the baseline windows held fewer than `min_turns` turns.
    """

    key: str
    firing: bool
    value: float
    turns: int
    hits: int
    limit: float | None
    baseline: float | None
    baseline_turns: int
    reason: str


def evaluate(
    rule: AlertRule,
    current: Mapping[str, GroupStats],
    baseline: Mapping[str, GroupStats],
    *,
    keys: Iterable[str] = (),
) -> list[Decision]:
    """A decision for every group in `current`, `baseline` or `keys` (a group without
    turns in the window is decided too, so an alert on it can resolve), sorted by key."""
    decisions = []
    for key in sorted(set(current) | set(baseline) | set(keys)):
        now = current.get(key, GroupStats())
        before = baseline.get(key, GroupStats())
        decisions.append(decide(rule, key, now, before))
    return decisions


def decide(rule: AlertRule, key: str, now: GroupStats, before: GroupStats) -> Decision:
    """The decision for one group (see `evaluate`)."""
    base = before.rate if before.turns >= rule.min_turns else None
    limits: list[tuple[float, str]] = []
    if rule.threshold is not None:
        limits.append((rule.threshold, "threshold"))
    if rule.baseline_factor is not None and base is not None:
        relative = max(rule.baseline_factor * base, rule.min_rate)
        limits.append((relative, f"{rule.baseline_factor:g}x baseline"))
    limit, source = min(limits) if limits else (None, "")
    value = now.rate
    if now.turns < rule.min_turns:
        firing, reason = False, f"too few turns ({now.turns} < {rule.min_turns})"
    elif limit is None:
        firing, reason = False, "no limit applies yet (not enough baseline turns)"
    elif value > limit:
        firing, reason = True, f"above {source} ({value:.1%} > {limit:.1%})"
    else:
        firing, reason = False, f"within {source} ({value:.1%} <= {limit:.1%})"
    return Decision(
        key=key,
        firing=firing,
        value=value,
        turns=now.turns,
        hits=now.hits,
        limit=limit,
        baseline=base,
        baseline_turns=before.turns,
        reason=reason,
    )


@dataclass(frozen=True)
class FiringAlert:
    """The state of a (rule, group) whose alert is firing. Absent (None) means ok."""

    alert_id: str
    fired_at: datetime
    notified_at: datetime
    threshold: float


@dataclass(frozen=True)
class AlertEvent:
    """A notice to record and send: an alert fired, repeats after its cool-down, or
    resolved. `threshold` is the limit in force (for a resolution: the one it fired at)."""

    kind: EventKind
    rule: str
    key: str
    alert_id: str
    fired_at: datetime
    at: datetime
    threshold: float
    decision: Decision

    @property
    def state(self) -> Literal["firing", "resolved"]:
        return "resolved" if self.kind == "resolved" else "firing"

    @property
    def resolved_at(self) -> datetime | None:
        return self.at if self.kind == "resolved" else None


def step(
    rule: AlertRule,
    status: FiringAlert | None,
    decision: Decision,
    *,
    now: datetime,
    new_id: Callable[[], str],
) -> tuple[FiringAlert | None, AlertEvent | None]:
    """The next state of one (rule, group) and the event to emit, if any."""

    def event(kind: EventKind, alert: FiringAlert, threshold: float) -> AlertEvent:
        return AlertEvent(
            kind=kind,
            rule=rule.name,
            key=decision.key,
            alert_id=alert.alert_id,
            fired_at=alert.fired_at,
            at=now,
            threshold=threshold,
            decision=decision,
        )

    if status is None:
        if not decision.firing or decision.limit is None:
            return None, None
        fired = FiringAlert(new_id(), now, now, decision.limit)
        return fired, event("firing", fired, decision.limit)
    if not decision.firing:
        return None, event("resolved", status, status.threshold)
    if now - status.notified_at < rule.cooldown:
        return status, None
    repeated = FiringAlert(status.alert_id, status.fired_at, now, status.threshold)
    return repeated, event("repeat", repeated, decision.limit or status.threshold)
