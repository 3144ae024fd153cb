"""The Alerts page's rows, from literal GET /alerts and GET /alerts/rules payloads:
rules with their state, the state chart, the history timeline and table."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from factledger.dashboard import charts
from factledger.dashboard.screens import alerts

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
RULE = {
    "name": "reject-rate-per-model",
    "group_by": "model",
    "verdict": "reject",
    "window": "15m",
    "threshold": 0.3,
    "baseline_factor": 2.0,
    "baseline_windows": 4,
    "min_turns": 20,
    "cooldown": "1h",
    "webhooks": [{"url": "https://hooks.example/***", "format": "slack"}],
}
CURRENT: list[dict[str, Any]] = [
    {"rule": "reject-rate-per-model", "key": "gpt-4o", "state": "ok", "value": 0.2, "limit": 0.3},
    {
        "rule": "reject-rate-per-model",
        "group_by": "model",
        "key": "llama",
        "state": "firing",
        "value": 0.45,
        "limit": 0.3,
        "turns": 46,
        "fired_at": "2025-03-01T11:50:00Z",
        "reason": "above threshold",
    },
    {"rule": "reject-rate-per-model", "key": "restored", "state": "firing", "value": None},
]
HISTORY: list[dict[str, Any]] = [
    {
        "rule": "reject-rate-per-model",
        "key": "llama",
        "state": "firing",
        "fired_at": "2025-03-01T11:50:00Z",
        "resolved_at": None,
        "value": 0.45,
        "threshold": 0.3,
        "turns": 46,
        "notices": 1,
        "message": "FIRING",
        "deliveries": [{"ok": 1}, {"ok": 0}],
    },
    {
        "rule": "reject-rate-per-model",
        "key": "gpt-4o",
        "state": "resolved",
        "fired_at": "2025-03-01T10:00:00Z",
        "resolved_at": "2025-03-01T10:30:00Z",
        "value": 0.1,
        "threshold": 0.3,
        "notices": 2,
        "deliveries": [],
    },
]


def test_rule_rows_carry_the_state_of_their_groups():
    (row,) = alerts.rule_rows([RULE], CURRENT)
    assert row["state"] == "firing (2)"
    assert row["threshold"] == "30.0%"
    assert row["baseline"] == "above 2× the rate of the 4 windows before"
    assert row["webhooks"] == 1
    (calm,) = alerts.rule_rows([{**RULE, "baseline_factor": None}], CURRENT[:1])
    assert (calm["state"], calm["baseline"]) == ("ok (1 group)", "–")
    (fresh,) = alerts.rule_rows([RULE], [])
    assert fresh["state"] == "not evaluated yet"


@pytest.mark.parametrize(
    ("factor", "windows", "text"),
    [
        (2.0, 4, "above 2× the rate of the 4 windows before"),
        (1.5, 1, "above 1.5× the rate of the window before"),
        (False, 4, "–"),
        (None, 4, "–"),
    ],
)
def test_the_baseline_reads_as_a_comparison(factor: Any, windows: Any, text: str) -> None:
    assert alerts.baseline_text(factor, windows) == text


def test_state_rows_skip_groups_without_a_value_and_put_firing_first():
    rows = alerts.state_rows(CURRENT)
    assert [(r["group"], r["state"]) for r in rows] == [
        ("reject-rate-per-model · llama", "firing"),
        ("reject-rate-per-model · gpt-4o", "ok"),
    ]


def test_timeline_runs_an_open_alert_until_now():
    rows = alerts.timeline_rows(HISTORY, NOW)
    assert [(r["start"], r["end"]) for r in rows] == [
        ("2025-03-01T11:50:00+00:00", NOW.isoformat()),
        ("2025-03-01T10:00:00+00:00", "2025-03-01T10:30:00+00:00"),
    ]


def test_history_rows_count_deliveries():
    rows = alerts.history_rows(HISTORY)
    assert [r["deliveries"] for r in rows] == ["1 ok, 1 failed", "–"]
    assert rows[1]["resolved"] == "2025-03-01 10:30:00 UTC"
    assert rows[0]["resolved"] == ""


def test_firing_line_escapes_what_the_api_says():
    line = alerts.firing_line({**CURRENT[1], "key": "<b>x</b>"})
    assert "<b>" not in line and "\\<b\\>" in line
    assert "45.0%" in line and "30.0%" in line


@pytest.mark.parametrize(
    ("reason", "names"),
    [
        ("above threshold (45.0% > 30.0%)", " (the threshold)"),
        ("above 2x baseline (45.0% > 30.0%)", " (2× the baseline)"),
        ("restored at start", ""),
    ],
)
def test_a_firing_banner_is_one_sentence_saying_each_figure_once(reason: str, names: str) -> None:
    line = alerts.firing_line({**CURRENT[1], "reason": reason}, window="15m", notice=HISTORY[0])
    assert line == (
        "**reject\\-rate\\-per\\-model** · model llama: 45.0% of 46 turns in the last 15m "
        f"now, above its limit of 30.0%{names}, firing since 2025-03-01 11:50:00 UTC."
    )
    assert line.count("45.0%") == 1 and line.count("30.0%") == 1


def test_a_banner_whose_figures_moved_since_the_notice_says_both_and_which_is_which() -> None:
    now = {**CURRENT[1], "alert_id": "a1", "turns": 168, "value": 0.452}
    notice = {**HISTORY[0], "alert_id": "a1", "turns": 99, "value": 0.40,
              "notified_at": "2025-03-01T11:50:00Z"}  # fmt: skip
    line = alerts.firing_line(now, window="15m", notice=notice)
    assert "45.2% of 168 turns in the last 15m now" in line
    assert line.endswith("; at its last notice (11:50:00 UTC), 40.0% of 99 turns.")
    (row,) = alerts.history_rows([notice])
    assert (row["rate at last notice"], row["turns at last notice"]) == ("40.0%", 99)


def test_alert_charts_compile():
    states = charts.alert_states(alerts.state_rows(CURRENT)).to_dict()
    assert {layer["mark"]["type"] for layer in states["layer"]} == {"bar", "tick"}
    domain = ("2025-03-01T10:00:00+00:00", NOW.isoformat())
    timeline = charts.alert_timeline(alerts.timeline_rows(HISTORY, NOW), domain=domain)
    assert timeline.to_dict()["encoding"]["x"]["scale"]["domain"] == list(domain)


def test_export_line_says_what_each_target_did() -> None:
    line = alerts.export_line(
        {
            "target": "otel",
            "sent": 120,
            "retried": 4,
            "dropped": {"outbox_full": 0, "gave_up": 2, "refused": 1},
            "pending": 3,
            "lag_seconds": 42.4,
        }
    )
    assert line == (
        "**otel**: 120 sent, 4 retried, 3 dropped (gave\\_up 2, refused 1), 3 pending,"
        " oldest waiting 42 s"
    )


def test_export_line_of_a_quiet_target() -> None:
    quiet = {"target": "otel", "sent": 0, "retried": 0, "dropped": {}, "pending": 0}
    line = alerts.export_line({**quiet, "lag_seconds": 0.0})  # type: ignore[typeddict-item]
    assert line == "**otel**: 0 sent, 0 retried, 0 dropped, 0 pending"


def test_the_timeline_spans_the_alerts_not_the_time_since() -> None:
    now = datetime(2025, 3, 8, 12, 0, tzinfo=UTC)
    week_ago = [
        {"start": "2025-03-01T10:00:00+00:00", "end": "2025-03-01T14:00:00+00:00"},
        {"start": "2025-03-01T11:00:00+00:00", "end": "2025-03-01T12:00:00+00:00"},
    ]
    start, end = alerts.timeline_domain(week_ago, now)
    assert start == datetime(2025, 3, 1, 9, 48, tzinfo=UTC)
    assert end == datetime(2025, 3, 1, 14, 12, tzinfo=UTC)
    short = [{"start": "2025-03-01T10:00:00+00:00", "end": "2025-03-01T10:20:00+00:00"}]
    assert alerts.timeline_domain(short, now) == (
        datetime(2025, 3, 1, 9, 40, tzinfo=UTC),
        datetime(2025, 3, 1, 10, 40, tzinfo=UTC),
    )
    fresh = [{"start": "2025-03-08T11:59:00+00:00", "end": now.isoformat()}]
    assert alerts.timeline_domain(fresh, now) == (now - alerts.TIMELINE_MIN, now)
    assert alerts.timeline_domain([], now) == (now - alerts.TIMELINE_MIN, now)
