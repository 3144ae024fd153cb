"""The alert decision per group, the state machine on a fake clock, window folding and
the notice payloads. Pure: no store, no network."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from factledger.collector.alerts.evaluator import (
    AlertEvent,
    Decision,
    FiringAlert,
    GroupStats,
    decide,
    evaluate,
    step,
)
from factledger.collector.alerts.notifier import retryable
from factledger.collector.alerts.payloads import alert_message, json_payload, slack_payload
from factledger.collector.alerts.rules import AlertRule
from factledger.collector.alerts.stats import fold, hits, windows

RULE = AlertRule(
    name="spikes",
    threshold=0.3,
    baseline_factor=2.0,
    baseline_windows=4,
    min_turns=20,
    min_rate=0.05,
    cooldown=timedelta(minutes=30),
)
T0 = datetime(2026, 3, 2, 9, 0, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("rule", "now", "before", "firing", "limit", "reason"),
    [
        (RULE, GroupStats(40, 20), GroupStats(), True, 0.3, "above threshold"),
        (RULE, GroupStats(40, 12), GroupStats(), False, 0.3, "within threshold"),
        (RULE, GroupStats(40, 13), GroupStats(), True, 0.3, "above threshold"),
        (RULE, GroupStats(3, 3), GroupStats(), False, 0.3, "too few turns (3 < 20)"),
        (RULE, GroupStats(40, 8), GroupStats(100, 5), True, 0.1, "above 2x baseline"),
        (RULE, GroupStats(40, 4), GroupStats(100, 5), False, 0.1, "within 2x baseline"),
        (RULE, GroupStats(40, 8), GroupStats(10, 0), False, 0.3, "within threshold"),
        (RULE, GroupStats(40, 2), GroupStats(100, 0), False, 0.05, "within 2x baseline"),
        (RULE, GroupStats(40, 3), GroupStats(100, 0), True, 0.05, "above 2x baseline"),
        (RULE, GroupStats(40, 16), GroupStats(100, 20), True, 0.3, "above threshold"),
        (
            AlertRule(name="relative", threshold=None, min_turns=20),
            GroupStats(40, 40),
            GroupStats(5, 0),
            False,
            None,
            "no limit applies",
        ),
        (
            AlertRule(name="absolute", baseline_factor=None, min_turns=20),
            GroupStats(40, 8),
            GroupStats(100, 1),
            False,
            0.3,
            "within threshold",
        ),
    ],
    ids=[
        "half the turns rejected fires",
        "30 percent exactly does not fire",
        "just above the threshold fires",
        "three turns never page anyone",
        "twice the baseline fires below the threshold",
        "within twice the baseline is ok",
        "a thin baseline is ignored",
        "a clean baseline needs min_rate to fire",
        "above min_rate over a clean baseline fires",
        "the lower limit wins: threshold under 2x baseline",
        "baseline-only rule without baseline has no limit",
        "threshold-only rule ignores the baseline",
    ],
)
def test_decide(
    rule: AlertRule,
    now: GroupStats,
    before: GroupStats,
    firing: bool,
    limit: float | None,
    reason: str,
) -> None:
    decision = decide(rule, "gpt-4o", now, before)
    assert decision.firing is firing
    assert decision.limit == pytest.approx(limit) if limit is not None else decision.limit is None
    assert decision.reason.startswith(reason)
    assert (decision.turns, decision.hits) == (now.turns, now.hits)
    assert decision.baseline_turns == before.turns


def test_evaluate_decides_every_group_seen_or_named() -> None:
    decisions = evaluate(
        RULE,
        {"a": GroupStats(30, 15)},
        {"b": GroupStats(50, 1)},
        keys=["c"],
    )
    assert [(d.key, d.firing, d.turns) for d in decisions] == [
        ("a", True, 30),
        ("b", False, 0),
        ("c", False, 0),
    ]


# --- the state machine on a fake clock --------------------------------------------------


class FakeClock:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def advance(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now


def ids() -> Iterator[str]:
    n = 0
    while True:
        n += 1
        yield f"alert-{n}"


NO_BASELINE = GroupStats()


def run(
    rule: AlertRule, timeline: list[tuple[float, GroupStats]], baseline: GroupStats = NO_BASELINE
) -> list[tuple[float, str, str]]:
    """Step one group through (minutes after T0, counts); the events as (minute, kind, id)."""
    clock = FakeClock(T0)
    new_id = ids()
    status: FiringAlert | None = None
    seen: list[tuple[float, str, str]] = []
    for minute, counts in timeline:
        clock.now = T0 + timedelta(minutes=minute)
        decision = decide(rule, "m", counts, baseline)
        status, event = step(rule, status, decision, now=clock.now, new_id=lambda: next(new_id))
        if event is not None:
            seen.append((minute, event.kind, event.alert_id))
    return seen


SPIKE = GroupStats(40, 20)
CALM = GroupStats(40, 1)


@pytest.mark.parametrize(
    ("timeline", "expected"),
    [
        ([(0, SPIKE)], [(0, "firing", "alert-1")]),
        ([(0, SPIKE), (1, SPIKE), (29, SPIKE)], [(0, "firing", "alert-1")]),
        (
            [(0, SPIKE), (10, SPIKE), (30, SPIKE), (45, SPIKE), (60, SPIKE)],
            [(0, "firing", "alert-1"), (30, "repeat", "alert-1"), (60, "repeat", "alert-1")],
        ),
        (
            [(0, SPIKE), (5, CALM), (6, CALM)],
            [(0, "firing", "alert-1"), (5, "resolved", "alert-1")],
        ),
        (
            [(0, SPIKE), (5, CALM), (6, SPIKE)],
            [(0, "firing", "alert-1"), (5, "resolved", "alert-1"), (6, "firing", "alert-2")],
        ),
        (
            [(0, SPIKE), (5, GroupStats(3, 3))],
            [(0, "firing", "alert-1"), (5, "resolved", "alert-1")],
        ),
        ([(0, CALM), (1, GroupStats(5, 5)), (2, GroupStats())], []),
    ],
    ids=[
        "a spike fires once",
        "the cool-down holds the second notice",
        "a lasting spike repeats once per cool-down",
        "recovery sends one resolved notice",
        "a new spike after recovery is a new alert",
        "traffic dying away resolves",
        "calm or thin traffic never fires",
    ],
)
def test_state_machine(
    timeline: list[tuple[float, GroupStats]], expected: list[tuple[float, str, str]]
) -> None:
    assert run(RULE, timeline) == expected


def test_events_carry_times_and_the_threshold_they_fired_at() -> None:
    clock = FakeClock(T0)
    fired, first = step(
        RULE, None, decide(RULE, "m", SPIKE, GroupStats()), now=clock.now, new_id=lambda: "a1"
    )
    assert fired == FiringAlert("a1", T0, T0, 0.3)
    assert first is not None and (first.state, first.resolved_at, first.fired_at) == (
        "firing",
        None,
        T0,
    )
    later = clock.advance(minutes=7)
    resolved, last = step(
        RULE, fired, decide(RULE, "m", CALM, GroupStats()), now=later, new_id=lambda: "x"
    )
    assert resolved is None
    assert last is not None
    assert (last.state, last.alert_id, last.fired_at, last.resolved_at) == (
        "resolved",
        "a1",
        T0,
        later,
    )
    assert last.threshold == 0.3


def test_a_restored_alert_is_not_fired_again() -> None:
    restored = FiringAlert("old", T0 - timedelta(minutes=10), T0 - timedelta(minutes=10), 0.3)
    status, event = step(
        RULE, restored, decide(RULE, "m", SPIKE, GroupStats()), now=T0, new_id=lambda: "new"
    )
    assert (status, event) == (restored, None)


# --- windows and folding ----------------------------------------------------------------


def point(minute: datetime, turns: int, rejected: int, flagged: int = 0) -> dict[str, Any]:
    return {"t": minute, "turns": turns, "rejected": rejected, "flagged": flagged}


def test_windows_end_with_the_current_minute() -> None:
    span = windows(RULE, T0)
    assert span.end == datetime(2026, 3, 2, 9, 1, tzinfo=UTC)
    assert span.start == datetime(2026, 3, 2, 8, 46, tzinfo=UTC)
    assert span.baseline_start == datetime(2026, 3, 2, 7, 46, tzinfo=UTC)
    assert windows(RULE, T0.replace(tzinfo=None)) == span


def test_fold_splits_current_and_baseline_minutes() -> None:
    span = windows(RULE, T0)
    series = [
        {
            "key": "gpt-4o",
            "points": [
                point(span.baseline_start - timedelta(minutes=1), 99, 99),
                point(span.baseline_start, 10, 1),
                point(span.start - timedelta(minutes=1), 10, 1),
                point(span.start, 5, 4),
                point(span.end - timedelta(minutes=1), 5, 1),
                point(span.end, 99, 99),
            ],
        },
        {"key": "claude", "points": [point(span.start, 3, 0)]},
    ]
    current, baseline = fold(RULE, series, span)
    assert current == {"gpt-4o": GroupStats(10, 5), "claude": GroupStats(3, 0)}
    assert baseline == {"gpt-4o": GroupStats(20, 2)}


@pytest.mark.parametrize(
    ("verdict", "expected"),
    [("reject", 3), ("flag", 4), ("any", 5)],
    ids=["rejected turns", "flagged turns", "either, never more than the turns"],
)
def test_hits_count_the_rule_verdict(verdict: str, expected: int) -> None:
    rule = AlertRule(name="r", verdict=verdict)  # type: ignore[arg-type]
    assert hits(rule, point(T0, 5, 3, 4)) == expected


# --- notices ----------------------------------------------------------------------------


def event(kind: str, *, rule: AlertRule = RULE, key: str = "gpt-4o") -> AlertEvent:
    decision = Decision(
        key=key,
        firing=kind != "resolved",
        value=0.45 if kind != "resolved" else 0.02,
        turns=60,
        hits=27 if kind != "resolved" else 1,
        limit=0.3,
        baseline=0.05,
        baseline_turns=200,
        reason="",
    )
    at = T0 + timedelta(minutes=40 if kind == "resolved" else 0)
    return AlertEvent(kind, rule.name, key, "a1", T0, at, 0.3, decision)  # type: ignore[arg-type]


def test_the_generic_payload_has_every_field() -> None:
    body = json_payload(RULE, event("firing"), tenant="acme", dashboard_url="http://dash")
    assert body == {
        "alert_id": "a1",
        "tenant": "acme",
        "rule": "spikes",
        "state": "firing",
        "repeat": False,
        "group_by": "model",
        "key": "gpt-4o",
        "verdict": "reject",
        "value": 0.45,
        "threshold": 0.3,
        "baseline": 0.05,
        "baseline_factor": 2.0,
        "turns": 60,
        "hits": 27,
        "window": "15m",
        "window_seconds": 900,
        "fired_at": "2026-03-02T09:00:30+00:00",
        "resolved_at": None,
        "sent_for": "2026-03-02T09:00:30+00:00",
        "message": alert_message(RULE, event("firing")),
        "dashboard_url": "http://dash",
    }
    resolved = json_payload(RULE, event("resolved"), tenant="acme")
    assert resolved["state"] == "resolved"
    assert resolved["resolved_at"] == "2026-03-02T09:40:30+00:00"
    assert "dashboard_url" not in resolved


@pytest.mark.parametrize(
    ("kind", "rule", "key", "words"),
    [
        ("firing", RULE, "gpt-4o", ["FIRING spikes", "model gpt-4o", "45.0% of 60", "15m"]),
        ("repeat", RULE, "gpt-4o", ["STILL FIRING", "firing since 2026-03-02 09:00 UTC"]),
        ("resolved", RULE, "gpt-4o", ["RESOLVED spikes", "back to 2.0%", "fired 2026-03-02"]),
        (
            "firing",
            AlertRule(name="k", group_by="kind", verdict="any"),
            "stall",
            ["kind stall", "had a stall finding", "rejected or flagged"],
        ),
        ("firing", RULE, "", ["model (none)"]),
    ],
    ids=["firing", "repeat", "resolved", "finding kind", "unnamed group"],
)
def test_messages_say_what_and_how_much(
    kind: str, rule: AlertRule, key: str, words: list[str]
) -> None:
    message = alert_message(rule, event(kind, rule=rule, key=key))
    for word in words:
        assert word in message


def test_the_slack_payload_has_text_and_blocks() -> None:
    body = slack_payload(RULE, event("firing"), tenant="acme", dashboard_url="http://dash")
    assert set(body) == {"text", "blocks"}
    assert body["text"].startswith(":rotating_light: FIRING spikes")
    assert [b["type"] for b in body["blocks"]] == ["section", "section", "context"]
    assert "<http://dash|dashboard>" in body["blocks"][2]["elements"][0]["text"]
    assert "tenant `acme`" in body["blocks"][2]["elements"][0]["text"]
    assert slack_payload(RULE, event("resolved"), tenant="acme")["text"].startswith(
        ":white_check_mark:"
    )


@pytest.mark.parametrize(
    ("status", "again"),
    [(0, True), (500, True), (503, True), (429, True), (408, True), (400, False), (404, False)],
    ids=["no answer", "500", "503", "429", "408", "400", "404"],
)
def test_which_answers_are_retried(status: int, again: bool) -> None:
    assert retryable(status) is again
