"""Every dashboard chart compiles to a valid Vega-Lite spec (Altair validates on
`to_dict`) with the encodings a reader relies on."""

from __future__ import annotations

import colorsys
import json
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


NOW = T0 + timedelta(minutes=2, seconds=20)
TRUST_ROWS = figures.rows(
    [
        {
            "key": "gpt-4o",
            "points": [
                {"t": T0.isoformat(), "turns": 10, "rejected": 3, "flagged": 1, "rate": 0.3},
                {
                    "t": (T0 + timedelta(minutes=1)).isoformat(),
                    "turns": 2,
                    "rejected": 2,
                    "flagged": 0,
                    "rate": 1.0,
                },
                {
                    "t": (T0 + timedelta(minutes=2)).isoformat(),
                    "turns": 4,
                    "rejected": 1,
                    "flagged": 0,
                    "rate": 0.25,
                },
            ],
        },
        {
            "key": "llama",
            "points": [
                {"t": T0.isoformat(), "turns": 6, "rejected": 1, "flagged": 0, "rate": 1 / 6}
            ],
        },
    ],
    bucket="1m",
    now=NOW,
)


def layers_by_role(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        layer["mark"].get("ariaRoleDescription", layer["mark"]["type"]): layer
        for layer in spec["layer"]
    }


def test_rate_chart_keeps_few_turns_and_the_filling_bucket_off_the_line():
    spec = charts.rate_over_time(TRUST_ROWS, field="rate", title="reject rate").to_dict()
    layers = layers_by_role(spec)
    assert set(layers) == {
        "line",
        "settled bucket",
        "bucket with few turns",
        "bucket still filling",
    }
    filters = {role: layer["transform"][-1]["filter"] for role, layer in layers.items()}
    assert filters == {
        "line": "datum.state == 'settled'",
        "settled bucket": "datum.state == 'settled'",
        "bucket with few turns": "datum.state == 'few'",
        "bucket still filling": "datum.state == 'filling'",
    }
    filling = layers["bucket still filling"]["mark"]
    assert filling["filled"] is False and filling["strokeDash"]
    assert layers["settled bucket"]["mark"]["filled"] is True
    assert layers["bucket with few turns"]["mark"]["opacity"] == charts.FEW_OPACITY < 0.5
    # A point's area grows with its turns; it is drawn at the middle of its bucket.
    for role in ("settled bucket", "bucket with few turns", "bucket still filling"):
        encoding = layers[role]["encoding"]
        assert encoding["size"]["field"] == "turns"
        assert encoding["x"]["field"] == "t_mid"
    assert [r["state"] for r in TRUST_ROWS] == ["settled", "few", "filling", "settled"]


def test_rate_chart_describes_each_mark_with_its_state_for_readers_and_tests():
    spec = charts.rate_over_time(TRUST_ROWS, field="flag_rate", title="flagged rate").to_dict()
    base = spec["layer"][0]
    calculated = {t["as"]: t["calculate"] for t in base["transform"] if "calculate" in t}
    assert "bucket still filling" in calculated["description"]
    assert "datum.flag_rate" in calculated["description"]
    assert base["encoding"]["description"]["field"] == "description"
    tooltips = {t["field"] for t in base["encoding"]["tooltip"]}
    assert {"flag_low", "flag_high", "turns", "note"} <= tooltips


def test_rate_chart_is_a_fixed_zero_to_one_scale():
    spec = charts.rate_over_time(TRUST_ROWS, field="rate", title="r").to_dict()
    assert spec["layer"][0]["encoding"]["y"]["scale"]["domain"] == [0, 1]


def hue_saturation(colour: str) -> tuple[float, float]:
    red, green, blue = (int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
    hue, _, saturation = colorsys.rgb_to_hls(red, green, blue)
    return hue * 360, saturation


@pytest.mark.parametrize("colour", charts.SERIES_COLOURS)
def test_series_colours_are_neither_the_reject_red_nor_the_flag_amber(colour: str):
    hue, saturation = hue_saturation(colour)
    for verdict in (charts.VERDICT_COLOURS["reject"], charts.VERDICT_COLOURS["flag"]):
        verdict_hue, _ = hue_saturation(verdict)
        distance = min(abs(hue - verdict_hue), 360 - abs(hue - verdict_hue))
        assert distance >= 30 or saturation < 0.15, (colour, verdict)
    assert colour not in charts.VERDICT_COLOURS.values()


def test_series_keep_their_colour_in_every_chart_and_their_legend_beside_the_plot():
    labels = {"gpt-4o": "gpt-4o · 31% of 16 turns", "llama": "llama · 17% of 6 turns"}
    rate = charts.rate_over_time(TRUST_ROWS, field="rate", title="r", labels=labels).to_dict()
    volume = charts.volume_over_time(figures.stacked(TRUST_ROWS), labels=labels).to_dict()
    colour = rate["layer"][0]["encoding"]["color"]
    assert colour["scale"] == {
        "domain": ["gpt-4o", "llama"],
        "range": list(charts.SERIES_COLOURS[:2]),
    }
    assert volume["encoding"]["color"]["scale"] == colour["scale"]
    assert colour["legend"]["orient"] == "right"
    lookup, fallback = colour["legend"]["labelExpr"].split("[datum.label]")
    assert json.loads(lookup) == labels  # a Vega object literal, escaped as JSON
    assert fallback == " || datum.label"


def test_a_filling_bucket_is_a_pale_bar_up_to_now():
    spec = charts.volume_over_time(figures.stacked(TRUST_ROWS)).to_dict()
    assert spec["encoding"]["opacity"]["condition"]["test"] == "datum.partial"
    filling = [r for r in figures.stacked(TRUST_ROWS) if r["partial"]]
    assert [figures.parse_time(r["t_end"]) for r in filling] == [NOW]


def test_kind_breakdown_reads_kind_labels():
    spec = charts.kind_breakdown(figures.kind_rows(SERIES_KINDS, T0)).to_dict()
    assert spec["encoding"]["y"]["field"] == "label"
    values = next(iter(spec["datasets"].values()))
    assert {v["label"] for v in values} == {"fabricated identifier"}


SERIES_KINDS = [
    {
        "key": "fabricated_identifier",
        "points": [{"t": T0.isoformat(), "turns": 10, "rejected": 3, "flagged": 0, "rate": 0.3}],
    }
]
