"""The overview's numbers: windows and buckets, chart rows, totals, rises against the
previous window, stacks, and the span waterfall rows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from factledger.collector.api.views import rfc3339_ns
from factledger.dashboard import figures
from factledger.dashboard.figures import Totals, Window

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def point(minute: int, turns: int, rejected: int = 0, flagged: int = 0) -> dict[str, Any]:
    t = T0 + timedelta(minutes=minute)
    return {
        "t": t.isoformat().replace("+00:00", "Z"),
        "turns": turns,
        "rejected": rejected,
        "flagged": flagged,
        "rate": rejected / turns if turns else 0.0,
    }


def series(key: str, *points: dict[str, Any]) -> dict[str, Any]:
    return {"key": key, "points": list(points)}


@pytest.mark.parametrize(
    ("window", "buckets", "default"),
    [
        (timedelta(minutes=15), ["1m", "5m"], "1m"),
        (timedelta(hours=1), ["1m", "5m"], "1m"),
        (timedelta(hours=6), ["1m", "5m", "1h"], "5m"),
        (timedelta(days=1), ["5m", "1h"], "1h"),
        (timedelta(days=7), ["1h", "1d"], "1h"),
        (timedelta(days=30), ["1h", "1d"], "1d"),
    ],
    ids=lambda v: str(v),
)
def test_buckets_keep_a_window_between_2_and_720_points(window, buckets, default):
    assert figures.buckets_for(window) == buckets
    assert figures.default_bucket(window) == default


def test_window_bounds_align_the_split_to_the_bucket():
    now = T0 + timedelta(minutes=61, seconds=30)
    bounds = figures.window_bounds(now, timedelta(hours=1), "5m")
    assert bounds.split == T0
    assert bounds.end == now
    assert bounds.start == T0 - (now - T0)


@pytest.mark.parametrize(
    ("window", "fmt"),
    [
        (timedelta(minutes=2), "%H:%M:%S"),
        (timedelta(minutes=5), "%H:%M:%S"),
        (timedelta(hours=1), "%H:%M"),
        (timedelta(days=1), "%a %H:%M"),
        (timedelta(days=7), "%b %d"),
    ],
    ids=["a-couple-of-minutes", "five-minutes", "hours", "days-of-week", "dates"],
)
def test_time_format(window, fmt):
    assert figures.time_format(window) == fmt


def test_rows_flatten_series_from_since_with_bucket_ends_and_flag_rates():
    data = [series("gpt-4o", point(0, 10, 2, 1), point(5, 4, 0, 2)), series("llama", point(5, 0))]
    flat = figures.rows(data, since=T0 + timedelta(minutes=1), bucket="5m")
    assert [(r["key"], r["turns"], r["flag_rate"]) for r in flat] == [
        ("gpt-4o", 4, 0.5),
        ("llama", 0, 0.0),
    ]
    assert figures.parse_time(flat[0]["t_end"]) - figures.parse_time(flat[0]["t"]) == timedelta(
        minutes=5
    )


@pytest.mark.parametrize(
    ("points", "now", "states"),
    [
        pytest.param(
            [point(0, 12, 3), point(1, 12, 3)],
            T0 + timedelta(minutes=2),
            ["settled", "settled"],
            id="finished-buckets-are-settled",
        ),
        pytest.param(
            [point(0, 12, 3), point(1, 2, 2)],
            T0 + timedelta(minutes=3),
            ["settled", "few"],
            id="two-turns-are-few",
        ),
        pytest.param(
            [point(0, 12, 3), point(1, 40, 40)],
            T0 + timedelta(minutes=1, seconds=20),
            ["settled", "filling"],
            id="the-open-bucket-is-filling-however-many-turns",
        ),
    ],
)
def test_rows_say_how_far_each_point_can_be_trusted(points, now, states):
    flat = figures.rows([series("gpt-4o", *points)], bucket="1m", now=now)
    assert [r["state"] for r in flat] == states
    assert [r["partial"] for r in flat] == [s == "filling" for s in states]


def test_a_filling_bucket_ends_now_and_is_drawn_at_the_middle_of_its_elapsed_part():
    now = T0 + timedelta(minutes=1, seconds=20)
    _, filling = figures.rows([series("m", point(0, 9), point(1, 9))], bucket="1m", now=now)
    assert figures.parse_time(filling["t_end"]) == now
    assert figures.parse_time(filling["t_mid"]) == T0 + timedelta(minutes=1, seconds=10)


def test_rows_carry_each_rates_95_percent_interval():
    (row,) = figures.rows([series("m", point(0, 2, 2, 0))])
    assert row["rate"] == 1.0
    assert row["rate_high"] == 1.0 and row["rate_low"] == pytest.approx(0.342, abs=0.001)
    assert row["flag_low"] == 0.0 and row["flag_high"] == pytest.approx(0.658, abs=0.001)


@pytest.mark.parametrize(
    ("hits", "turns", "low", "high"),
    [
        (0, 0, 0.0, 1.0),
        (2, 2, 0.342, 1.0),
        (0, 10, 0.0, 0.278),
        (50, 100, 0.404, 0.596),
        (300, 1000, 0.272, 0.329),
    ],
    ids=["no-turns", "two-of-two", "none-of-ten", "half-of-100", "30pct-of-1000"],
)
def test_wilson_interval(hits, turns, low, high):
    got_low, got_high = figures.wilson_interval(hits, turns)
    assert got_low == pytest.approx(low, abs=0.001)
    assert got_high == pytest.approx(high, abs=0.001)


HOUR = Window(start=T0 - timedelta(hours=1), split=T0, end=T0 + timedelta(hours=1))


@pytest.mark.parametrize(
    ("points", "bucket", "domain"),
    [
        pytest.param(
            [point(58, 30), point(59, 4)],
            "1m",
            (T0 + timedelta(minutes=58), T0 + timedelta(hours=1)),
            id="a-minute-of-data-is-the-axis-not-an-edge-of-the-hour",
        ),
        pytest.param(
            [point(0, 0), point(59, 4)],
            "1m",
            (T0 + timedelta(minutes=59), T0 + timedelta(hours=1)),
            id="empty-buckets-do-not-stretch-it",
        ),
        pytest.param(
            [point(3, 5), point(50, 5)],
            "1m",
            (T0 + timedelta(minutes=3), T0 + timedelta(hours=1)),
            id="a-quiet-stretch-later-stays-on-the-axis",
        ),
        pytest.param([], "5m", (T0, T0 + timedelta(hours=1)), id="no-data-the-whole-window"),
    ],
)
def test_fitted_domain_starts_at_the_first_bucket_with_turns(points, bucket, domain):
    flat = figures.rows([series("m", *points)], since=HOUR.split, bucket=bucket)
    assert figures.fitted_domain(flat, HOUR, bucket) == domain


def test_fitted_domain_spans_at_least_one_bucket():
    just_started = Window(start=T0 - timedelta(seconds=5), split=T0, end=T0 + timedelta(seconds=5))
    flat = figures.rows([series("m", point(0, 3))], since=T0, bucket="1m")
    assert figures.fitted_domain(flat, just_started, "1m") == (T0, T0 + timedelta(minutes=1))


@pytest.mark.parametrize(
    ("age", "window"),
    [
        (None, "1 hour"),
        (timedelta(minutes=1), "1 hour"),
        (timedelta(minutes=59), "1 hour"),
        (timedelta(hours=3), "6 hours"),
        (timedelta(hours=20), "24 hours"),
        (timedelta(days=3), "7 days"),
        (timedelta(days=20), "30 days"),
        (timedelta(days=90), "30 days"),
    ],
    ids=lambda v: str(v),
)
def test_fitting_window_is_the_shortest_holding_the_newest_turn(age, window):
    now = T0 + timedelta(days=100)
    assert figures.fitting_window(None if age is None else now - age, now) == window


def test_newest_bucket_skips_empty_buckets():
    data = [series("a", point(0, 3), point(5, 0)), series("b", point(2, 1))]
    assert figures.newest_bucket(data) == T0 + timedelta(minutes=2)
    assert figures.newest_bucket([series("a", point(0, 0))]) is None


def test_series_labels_give_the_figure_and_the_turns_behind_it():
    parts = [Totals("gpt-4o", 48, 13, 5), Totals("solo", 1, 1, 0)]
    assert figures.series_labels(parts, "rate") == {
        "gpt-4o": "gpt-4o · 27.1% of 48 turns",
        "solo": "solo · 100.0% of 1 turn",
    }
    assert figures.series_labels(parts, "flag_rate")["gpt-4o"] == "gpt-4o · 10.4% of 48 turns"
    assert figures.series_labels(parts, "turns")["gpt-4o"] == "gpt-4o · 48 turns"


def test_totals_sum_a_half_open_range_per_key():
    data = [series("b", point(0, 10, 5), point(10, 10, 1)), series("a", point(10, 4, 2, 1))]
    got = figures.totals(data, since=T0 + timedelta(minutes=5), until=T0 + timedelta(minutes=11))
    assert got == [Totals("a", 4, 2, 1), Totals("b", 10, 1, 0)]
    assert got[0].rate == 0.5 and got[0].flag_rate == 0.25
    assert Totals("x", 0, 0, 0).rate == 0.0


def test_overall_adds_the_groups():
    data = [series("a", point(0, 10, 5, 1)), series("b", point(0, 30, 5, 3))]
    total = figures.overall(data, T0, T0 + timedelta(hours=1))
    assert (total.turns, total.rejected, total.flagged) == (40, 10, 4)


WINDOW = Window(start=T0, split=T0 + timedelta(minutes=10), end=T0 + timedelta(minutes=20))


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(
            [
                series("calm", point(0, 10, 2), point(10, 10, 2)),
                series("worse", point(0, 10, 1), point(10, 10, 6)),
                series("better", point(0, 10, 5), point(10, 10, 0)),
            ],
            [("worse", 0.5), ("calm", 0.0), ("better", -0.5)],
            id="largest-rise-first-falls-last",
        ),
        pytest.param(
            [series("new", point(10, 50, 40)), series("old", point(0, 10, 1), point(10, 10, 2))],
            [("old", pytest.approx(0.1))],
            id="no-baseline-no-rise",
        ),
        pytest.param(
            [series("few", point(0, 10, 0), point(10, 4, 4))],
            [],
            id="too-few-turns-now-are-not-ranked",
        ),
    ],
)
def test_rises(data, expected):
    changes = figures.rises("model", data, WINDOW)
    assert [(c.key, c.delta) for c in changes] == expected
    assert all(c.group == "model" for c in changes)


def test_change_rows_name_the_direction():
    data = [
        series("up", point(0, 10, 1), point(10, 10, 5)),
        series("flat", point(0, 10, 1), point(10, 10, 1)),
    ]
    rows = figures.change_rows(figures.rises("agent", data, WINDOW))
    assert [(r["label"], r["direction"]) for r in rows] == [
        ("agent up", "rose"),
        ("agent flat", "same"),
    ]


def test_kind_rows_split_by_severity_and_skip_zero_counts():
    data = [series("stall", point(0, 10, 3, 0)), series("confabulated", point(0, 10, 0, 2))]
    assert figures.kind_rows(data, T0) == [
        {"kind": "confabulated", "label": "confabulated", "severity": "flag", "turns": 2, "all": 2},
        {"kind": "stall", "label": "stall", "severity": "reject", "turns": 3, "all": 3},
    ]


def test_kind_rows_label_kinds_the_way_the_page_reads_them():
    data = [series("fabricated_identifier", point(0, 10, 3))]
    assert [r["label"] for r in figures.kind_rows(data, T0)] == ["fabricated identifier"]


def test_verdict_rows_never_go_negative():
    rows = figures.verdict_rows([Totals("coder", 10, 3, 2), Totals("odd", 2, 2, 1)])
    by = {(r["key"], r["verdict"]): r["turns"] for r in rows}
    assert by == {
        ("coder", "reject"): 3,
        ("coder", "flag"): 2,
        ("coder", "pass"): 5,
        ("odd", "reject"): 2,
        ("odd", "flag"): 1,
        ("odd", "pass"): 0,
    }


def test_stacked_piles_each_bucket_in_key_order():
    flat = [
        {"key": "b", "t": "1", "turns": 3},
        {"key": "a", "t": "1", "turns": 2},
        {"key": "a", "t": "2", "turns": 5},
    ]
    assert [(r["key"], r["t"], r["y0"], r["y1"]) for r in figures.stacked(flat)] == [
        ("a", "1", 0, 2),
        ("b", "1", 2, 5),
        ("a", "2", 0, 5),
    ]


def span(span_id: str, name: str, start: int, end: int, **extra: Any) -> dict[str, Any]:
    return {
        "span_id": span_id,
        "name": name,
        "start_time": rfc3339_ns(start),
        "end_time": rfc3339_ns(end),
        "duration_ms": (end - start) / 1e6,
        "attributes": extra.get("attributes", {}),
        "status_code": extra.get("status", "STATUS_CODE_UNSET"),
    }


def test_span_rows_order_by_start_relative_to_the_first_span():
    spans = [
        span("b", "execute_tool get_order", 3_000_000, 5_000_000, status="STATUS_CODE_ERROR"),
        span("a", "invoke_agent support", 1_000_000, 11_000_000),
        span(
            "c", "chat gpt-4o", 6_000_000, 6_000_000, attributes={"gen_ai.operation.name": "chat"}
        ),
    ]
    rows = figures.span_rows(spans)
    assert [r["label"] for r in rows] == [
        "1. invoke_agent support",
        "2. execute_tool get_order",
        "3. chat gpt-4o",
    ]
    assert [r["operation"] for r in rows] == ["invoke_agent", "execute_tool", "chat"]
    assert rows[0]["start_ms"] == 0 and rows[0]["end_ms"] == 10
    assert rows[1]["error"] and not rows[0]["error"]
    # a zero-length span keeps its true duration but gets a visible sliver
    assert rows[2]["duration_ms"] == 0 and rows[2]["end_ms"] == pytest.approx(5.05)
    assert figures.span_rows([]) == []


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2025-03-01T12:00:00Z", T0),
        ("2025-03-01T13:00:00+01:00", T0),
        ("2025-03-01T12:00:00", T0),
        (T0.replace(tzinfo=None), T0),
    ],
    ids=["zulu", "offset", "naive-string-is-utc", "naive-datetime-is-utc"],
)
def test_parse_time(value, expected):
    assert figures.parse_time(value) == expected
