"""Altair charts of the dashboard, built from the plain rows of `figures`. Data goes in
inline (`alt.Data(values=...)`), so every field names its type explicitly.

Red and amber mean reject and flag on every page, so the series of a model, agent or
service are drawn from SERIES_COLOURS, which has neither; legends sit outside the plot.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import altair as alt

from factledger.dashboard import palette
from factledger.dashboard.figures import MIN_TURNS_PER_POINT

VERDICT_COLOURS = {"reject": palette.REJECT, "flag": palette.FLAG, "pass": "#cbd5e0"}
SEVERITY_COLOURS = {"reject": palette.REJECT, "flag": palette.FLAG}
OPERATION_COLOURS = {
    "invoke_agent": "#805ad5",
    "chat": "#3182ce",
    "execute_tool": "#38a169",
}
SERIES_COLOURS = (
    "#3b6fb6",
    "#2a9d8f",
    "#8e6cc0",
    "#4e9a3a",
    "#1d3f6e",
    "#56b4d3",
    "#6b5b95",
    "#8aa83a",
    "#5f6b7a",
    "#9bb3d9",
)
"""Series colours: blues, teals, violets, greens and slate, never the verdicts' red or
amber (a model drawn red would read as "rejects")."""
HEIGHT = 260
RATE_HEIGHT = 220
AXIS_ROOM = 56
POINT_SIZES = (30, 260)
"""Area range of a rate's point, from the fewest to the most turns in one bucket."""
FEW_OPACITY = 0.3
STATE_TEXT = {
    "settled": "",
    "few": f"under {MIN_TURNS_PER_POINT} turns, not a trend",
    "filling": "bucket still filling",
}

# What altair's composition returns: `+` gives a LayerChart, whose `properties` may be
# typed as a FacetChart.
Chart = alt.Chart | alt.LayerChart | alt.FacetChart


def _band_height(rows: int, per_row: int) -> int:
    # Streamlit fits the whole chart, axes included, into the height the spec gives, so
    # a chart with one bar per row needs room for its rows plus the x axis.
    return max(rows, 2) * per_row + AXIS_ROOM


def _data(rows: Sequence[dict[str, Any]]) -> alt.InlineData:
    return alt.InlineData(values=list(rows))


def _time_axis(field: str, domain: tuple[str, str] | None, time_format: str) -> alt.X:
    # UTC throughout, like every timestamp the tables show; the domain is the window
    # fitted to its data (`figures.fitted_domain`), so a quiet stretch shows as a gap.
    scale = alt.Scale(type="utc", domain=list(domain)) if domain else alt.Scale(type="utc")
    return alt.X(
        field,
        title="UTC",
        scale=scale,
        axis=alt.Axis(format=time_format, labelOverlap=True, grid=False),
    )


def _series_colour(
    rows: Sequence[Mapping[str, Any]], group: str, labels: Mapping[str, str] | None
) -> alt.Color:
    # Keys in sorted order get SERIES_COLOURS in order, the same in every chart built
    # from the same rows; `labels` replaces a key by its label in the legend only.
    keys = sorted({str(r["key"]) for r in rows})
    colours = [SERIES_COLOURS[i % len(SERIES_COLOURS)] for i in range(len(keys))]
    legend = alt.Legend(orient="right", labelLimit=320, symbolType="circle", symbolOpacity=1)
    if labels:
        lookup = json.dumps({k: labels.get(k, k) for k in keys})
        legend = alt.Legend(
            orient="right",
            labelLimit=320,
            symbolType="circle",
            symbolOpacity=1,
            labelExpr=f"{lookup}[datum.label] || datum.label",
        )
    return alt.Color(
        "key:N", title=group, scale=alt.Scale(domain=keys, range=colours), legend=legend
    )


def rate_over_time(
    rows: Sequence[dict[str, Any]],
    *,
    field: str,
    title: str,
    group: str = "model",
    domain: tuple[str, str] | None = None,
    time_format: str = "%H:%M",
    labels: Mapping[str, str] | None = None,
) -> Chart:
    """One line per group of `field` (a 0..1 rate: `rate` or `flag_rate`) over the
    buckets, drawn at each bucket's middle so that a point's trust shows.

    Point area grows with the bucket's turns; only `settled` buckets are on the line; a
    `few` bucket is a faint dot; a `filling` bucket (still open) is a hollow, dashed
    ring. Each mark's description (its aria-label in the SVG) names its state.
    `domain` is the axis (start, end), ISO 8601; `labels` the legend's label per key."""
    low, high = ("rate_low", "rate_high") if field == "rate" else ("flag_low", "flag_high")
    state_text = json.dumps(STATE_TEXT)
    base = (
        alt.Chart(_data(rows))
        .transform_calculate(
            note=f"{state_text}[datum.state] || ''",
            description=(
                f"datum.key + ', ' + utcFormat(toDate(datum.t), '%H:%M:%S') + ' UTC: '"
                f" + format(datum.{field}, '.1%') + ' of ' + datum.turns + ' turns'"
                " + (datum.state == 'settled' ? '' : ', ' + "
                f"{state_text}[datum.state])"
            ),
        )
        .encode(
            x=_time_axis("t_mid:T", domain, time_format),
            y=alt.Y(
                f"{field}:Q",
                title=title,
                axis=alt.Axis(format="%"),
                scale=alt.Scale(domain=[0, 1], zero=True, nice=False),
            ),
            color=_series_colour(rows, group, labels),
            description=alt.Description("description:N"),
            tooltip=[
                alt.Tooltip("key:N", title=group),
                alt.Tooltip("t:T", title="bucket from", format="%Y-%m-%d %H:%M UTC"),
                alt.Tooltip(f"{field}:Q", title=title, format=".1%"),
                alt.Tooltip(f"{low}:Q", title="95% interval from", format=".0%"),
                alt.Tooltip(f"{high}:Q", title="95% interval to", format=".0%"),
                alt.Tooltip("turns:Q", title="turns"),
                alt.Tooltip("rejected:Q", title="rejected"),
                alt.Tooltip("flagged:Q", title="flagged"),
                alt.Tooltip("note:N", title="note"),
            ],
        )
    )
    most = max([int(r["turns"]) for r in rows] + [1])
    size = alt.Size(
        "turns:Q",
        title="turns per bucket",
        scale=alt.Scale(type="sqrt", domain=[0, most], range=list(POINT_SIZES)),
        legend=alt.Legend(
            orient="right",
            direction="horizontal",
            symbolFillColor="#718096",
            symbolStrokeWidth=0,
            tickCount=3,
        ),
    )
    line = base.transform_filter("datum.state == 'settled'").mark_line(strokeWidth=2)
    settled = (
        base.transform_filter("datum.state == 'settled'")
        .mark_point(filled=True, opacity=1, ariaRoleDescription="settled bucket")
        .encode(size=size)
    )
    few = (
        base.transform_filter("datum.state == 'few'")
        .mark_point(filled=True, opacity=FEW_OPACITY, ariaRoleDescription="bucket with few turns")
        .encode(size=size)
    )
    filling = (
        base.transform_filter("datum.state == 'filling'")
        .mark_point(
            filled=False,
            strokeWidth=2,
            strokeDash=[3, 2],
            opacity=1,
            ariaRoleDescription="bucket still filling",
        )
        .encode(size=size)
    )
    chart: Chart = (line + few + settled + filling).properties(height=RATE_HEIGHT)
    return chart


def volume_over_time(
    rows: Sequence[dict[str, Any]],
    *,
    group: str = "model",
    domain: tuple[str, str] | None = None,
    time_format: str = "%H:%M",
    labels: Mapping[str, str] | None = None,
) -> Chart:
    """Turns per bucket, stacked by group; each bar spans its bucket (t to t_end, which
    stops at now while the bucket fills; such a bar is pale) and its stack segment (y0 to
    y1, from `figures.stacked`: Vega-Lite does not stack bars that have a ranged x)."""
    chart: Chart = (
        alt.Chart(_data(rows))
        .transform_calculate(
            description=(
                "datum.key + ', ' + utcFormat(toDate(datum.t), '%H:%M:%S') + ' UTC: '"
                " + datum.turns + ' turns' + (datum.partial ? ', bucket still filling' : '')"
            )
        )
        .mark_bar(stroke="white", strokeWidth=0.5)
        .encode(
            x=_time_axis("t:T", domain, time_format),
            x2="t_end:T",
            y=alt.Y("y0:Q", title="turns"),
            y2="y1:Q",
            color=_series_colour(rows, group, labels),
            opacity=alt.condition("datum.partial", alt.value(0.45), alt.value(1.0)),
            description=alt.Description("description:N"),
            tooltip=[
                alt.Tooltip("key:N", title=group),
                alt.Tooltip("t:T", title="bucket from", format="%Y-%m-%d %H:%M UTC"),
                alt.Tooltip("turns:Q", title="turns"),
                alt.Tooltip("partial:N", title="still filling"),
            ],
        )
        .properties(height=HEIGHT)
    )
    return chart


def kind_breakdown(rows: Sequence[dict[str, Any]]) -> Chart:
    """Turns per finding kind (by its readable `label`), split by the severity the kind
    had (horizontal bars)."""
    chart: Chart = (
        alt.Chart(_data(rows))
        .mark_bar()
        .encode(
            y=alt.Y(
                "label:N",
                title=None,
                sort=alt.EncodingSortField("all", order="descending"),
                axis=alt.Axis(labelLimit=260),
            ),
            x=alt.X("sum(turns):Q", title="turns with this finding"),
            color=alt.Color(
                "severity:N",
                title="severity",
                scale=alt.Scale(
                    domain=list(SEVERITY_COLOURS), range=list(SEVERITY_COLOURS.values())
                ),
            ),
            tooltip=[
                alt.Tooltip("label:N", title="kind"),
                alt.Tooltip("severity:N"),
                alt.Tooltip("turns:Q", title="turns"),
            ],
        )
        .properties(height=_band_height(len({r["kind"] for r in rows}), 26))
    )
    return chart


def verdict_mix(rows: Sequence[dict[str, Any]], *, group: str = "agent") -> Chart:
    """Per group, its turns as rejected, flagged and passed (horizontal stacked bars)."""
    order = list(VERDICT_COLOURS)
    chart: Chart = (
        alt.Chart(_data(rows))
        .transform_calculate(order=f"indexof({order!r}, datum.verdict)")
        .mark_bar()
        .encode(
            y=alt.Y("key:N", title=None, axis=alt.Axis(labelLimit=200)),
            x=alt.X("turns:Q", title="turns", stack="zero"),
            color=alt.Color(
                "verdict:N",
                title="verdict",
                scale=alt.Scale(domain=order, range=list(VERDICT_COLOURS.values())),
                sort=order,
            ),
            order=alt.Order("order:Q"),
            tooltip=[
                alt.Tooltip("key:N", title=group),
                alt.Tooltip("verdict:N"),
                alt.Tooltip("turns:Q"),
                alt.Tooltip("share:Q", format=".1%"),
            ],
        )
        .properties(height=_band_height(len({r["key"] for r in rows}), 40))
    )
    return chart


def rise_chart(rows: Sequence[dict[str, Any]]) -> Chart:
    """Each group's change in reject rate against its previous window, in percentage
    points: rises red, falls green."""
    chart: Chart = (
        alt.Chart(_data(rows))
        .mark_bar()
        .encode(
            y=alt.Y(
                "label:N",
                title=None,
                sort=alt.EncodingSortField("delta", order="descending"),
                axis=alt.Axis(labelLimit=260),
            ),
            x=alt.X("delta:Q", title="reject rate change", axis=alt.Axis(format="+%")),
            color=alt.Color(
                "direction:N",
                title=None,
                scale=alt.Scale(
                    domain=["rose", "fell", "same"], range=["#e53e3e", "#38a169", "#a0aec0"]
                ),
                legend=None,
            ),
            tooltip=[
                alt.Tooltip("label:N", title="group"),
                alt.Tooltip("rate:Q", title="now", format=".1%"),
                alt.Tooltip("previous:Q", title="previous window", format=".1%"),
                alt.Tooltip("turns:Q", title="turns now"),
                alt.Tooltip("previous_turns:Q", title="turns before"),
            ],
        )
        .properties(height=_band_height(len(rows), 30))
    )
    return chart


def waterfall(rows: Sequence[dict[str, Any]]) -> Chart:
    """A turn's spans as bars from start to end (ms after the first span started), one
    row per span in start order; failed spans outlined red."""
    operations = sorted({str(r["operation"]) for r in rows})
    chart: Chart = (
        alt.Chart(_data(rows))
        .mark_bar(cornerRadius=2, height=16)
        .encode(
            y=alt.Y("label:N", title=None, sort=None, axis=alt.Axis(labelLimit=320)),
            x=alt.X("start_ms:Q", title="ms after the turn started"),
            x2="end_ms:Q",
            color=alt.Color(
                "operation:N",
                title="operation",
                scale=alt.Scale(
                    domain=operations,
                    range=[OPERATION_COLOURS.get(op, "#718096") for op in operations],
                ),
            ),
            stroke=alt.condition(
                "datum.error", alt.value(palette.NEUTRAL_TEXT), alt.value(None)
            ),  # a failed call is no verdict: slate, not the reject red
            strokeWidth=alt.value(2),
            tooltip=[
                alt.Tooltip("label:N", title="span"),
                alt.Tooltip("start_ms:Q", title="start (ms)", format=".3f"),
                alt.Tooltip("duration_ms:Q", title="duration (ms)", format=".3f"),
                alt.Tooltip("error:N", title="error"),
            ],
        )
        .properties(height=_band_height(len(rows), 28))
    )
    return chart


ALERT_COLOURS = {"firing": "#e53e3e", "ok": "#38a169", "resolved": "#a0aec0"}


def alert_states(rows: Sequence[dict[str, Any]]) -> Chart:
    """Each evaluated (rule, group): its rate as a bar coloured by state, its limit as a
    tick."""
    base = alt.Chart(_data(rows)).encode(
        y=alt.Y("group:N", title=None, sort=None, axis=alt.Axis(labelLimit=320, labelOverlap=False))
    )
    bars = base.mark_bar().encode(
        x=alt.X("value:Q", title="rate over the window", axis=alt.Axis(format="%")),
        color=alt.Color(
            "state:N",
            title="state",
            scale=alt.Scale(domain=["firing", "ok"], range=[ALERT_COLOURS["firing"], "#9ae6b4"]),
        ),
        tooltip=[
            alt.Tooltip("group:N"),
            alt.Tooltip("state:N"),
            alt.Tooltip("value:Q", title="rate", format=".1%"),
            alt.Tooltip("limit:Q", title="limit", format=".1%"),
            alt.Tooltip("turns:Q"),
        ],
    )
    ticks = base.mark_tick(color="#1a202c", thickness=2, size=18).encode(x="limit:Q")
    chart: Chart = (bars + ticks).properties(height=_band_height(len(rows), 30))
    return chart


def alert_timeline(
    rows: Sequence[dict[str, Any]], *, domain: tuple[str, str], time_format: str = "%H:%M"
) -> Chart:
    """Alerts as bars from firing to resolution (or now), one row per rule and group,
    over `domain` (ISO 8601 start and end)."""
    chart: Chart = (
        alt.Chart(_data(rows))
        .mark_bar(cornerRadius=2, height=14)
        .encode(
            y=alt.Y("group:N", title=None, axis=alt.Axis(labelLimit=320, labelOverlap=False)),
            x=_time_axis("start:T", domain, time_format),
            x2="end:T",
            color=alt.Color(
                "state:N",
                title="state",
                scale=alt.Scale(
                    domain=["firing", "resolved"],
                    range=[ALERT_COLOURS["firing"], ALERT_COLOURS["resolved"]],
                ),
            ),
            tooltip=[
                alt.Tooltip("group:N"),
                alt.Tooltip("state:N"),
                alt.Tooltip("start:T", title="fired", format="%Y-%m-%d %H:%M UTC"),
                alt.Tooltip("end:T", title="until", format="%Y-%m-%d %H:%M UTC"),
                alt.Tooltip("message:N"),
            ],
        )
        .properties(height=_band_height(len({r["group"] for r in rows}), 30))
    )
    return chart
