"""Every dashboard chart compiles to a valid Vega-Lite spec (Altair validates on
`to_dict`) with the encodings a reader relies on."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from factledger.dashboard import charts, figures

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
SERIES = [
    {
        "key": "gpt-4o",
        "points": [
            {"t": T0.isoformat(), "turns": 10, "rejected": 3, "flagged": 1, "rate": 0.3},
            {
                "t": (T0 + timedelta(minutes=1)).isoformat(),
                "turns": 5,
                "rejected": 0,
                "flagged": 2,
                "rate": 0.0,
            },
        ],
    }
]
ROWS = figures.rows(SERIES)
DOMAIN = (T0.isoformat(), (T0 + timedelta(hours=1)).isoformat())
SPANS = [
    {
        "span_id": "a",
        "name": "invoke_agent coder",
        "start_time": "1970-01-01T00:00:00.000000000Z",
        "end_time": "1970-01-01T00:00:00.000000010Z",
        "duration_ms": 1e-5,
        "attributes": {},
        "status_code": "STATUS_CODE_ERROR",
    }
]

CASES: list[tuple[str, Callable[[], Any], str]] = [
    (
        "rate",
        lambda: charts.rate_over_time(ROWS, field="rate", title="reject rate", domain=DOMAIN),
        "line",
    ),
    ("volume", lambda: charts.volume_over_time(figures.stacked(ROWS), domain=DOMAIN), "bar"),
    ("kinds", lambda: charts.kind_breakdown(figures.kind_rows(SERIES, T0)), "bar"),
    (
        "verdicts",
        lambda: charts.verdict_mix(figures.verdict_rows(figures.totals(SERIES))),
        "bar",
    ),
    (
        "rises",
        lambda: charts.rise_chart(
            figures.change_rows(
                [figures.Change("model", "gpt-4o", 0.3, 0.1, turns=10, previous_turns=10)]
            )
        ),
        "bar",
    ),
    ("waterfall", lambda: charts.waterfall(figures.span_rows(SPANS)), "bar"),
]


@pytest.mark.parametrize(("build", "mark"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_chart_compiles_with_inline_data(build: Callable[[], Any], mark: str):
    spec = build().to_dict()
    layers = spec.get("layer", [spec])
    marks = {
        layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"]
        for layer in layers
    }
    assert mark in marks
    # Altair moves inline values into top-level named datasets
    assert any(spec.get("datasets", {}).values()) or spec["data"].get("values")


def test_time_charts_span_the_whole_window_in_utc():
    spec = charts.rate_over_time(ROWS, field="rate", title="r", domain=DOMAIN).to_dict()
    x = spec["layer"][0]["encoding"]["x"]
    assert x["scale"] == {"type": "utc", "domain": list(DOMAIN)}


def test_band_charts_grow_with_their_rows():
    one = charts.kind_breakdown(figures.kind_rows(SERIES, T0)).to_dict()["height"]
    many_rows = [{"kind": f"k{i}", "severity": "reject", "turns": 1, "all": 1} for i in range(20)]
    many = charts.kind_breakdown(many_rows).to_dict()["height"]
    assert many > one
