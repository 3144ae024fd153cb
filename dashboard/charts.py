"""Altair charts of the dashboard, built from the plain rows of `figures`. Data goes in
inline (`alt.Data(values=...)`), so every field names its type explicitly."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import altair as alt

VERDICT_COLOURS = {"reject": "#e53e3e", "flag": "#dd8a1f", "pass": "#cbd5e0"}
SEVERITY_COLOURS = {"reject": "#e53e3e", "flag": "#dd8a1f"}
OPERATION_COLOURS = {
    "invoke_agent": "#805ad5",
    "chat": "#3182ce",
    "execute_tool": "#38a169",
}
HEIGHT = 260
AXIS_ROOM = 56

Chart = alt.Chart | alt.LayerChart


def _band_height(rows: int, per_row: int) -> int:
    # Streamlit fits the whole chart, axes included, into the height the spec gives, so
    # a chart with one bar per row needs room for its rows plus the x axis.
    return max(rows, 2) * per_row + AXIS_ROOM


def _data(rows: Sequence[dict[str, Any]]) -> alt.InlineData:
    return alt.InlineData(values=list(rows))


def _time_axis(field: str, domain: tuple[str, str] | None, time_format: str) -> alt.X:
    # UTC throughout, like every timestamp the tables show; the domain is the whole
    # window, so a quiet hour shows as a gap rather than the chart shrinking to the data.
    scale = alt.Scale(type="utc", domain=list(domain)) if domain else alt.Scale(type="utc")
    return alt.X(
        field,
        title="UTC",
        scale=scale,
        axis=alt.Axis(format=time_format, labelOverlap=True, grid=False),
    )


def rate_over_time(
    rows: Sequence[dict[str, Any]],
    *,
    field: str,
    title: str,
    group: str = "model",
    domain: tuple[str, str] | None = None,
    time_format: str = "%H:%M",
) -> Chart:
    """One line per group of `field` (a 0..1 rate) over the buckets, with points so a
    single bucket still shows. `domain` is the window's (start, end), ISO 8601."""
    base = alt.Chart(_data(rows)).encode(
        x=_time_axis("t:T", domain, time_format),
        y=alt.Y(f"{field}:Q", title=title, axis=alt.Axis(format="%"), scale=alt.Scale(zero=True)),
        color=alt.Color("key:N", title=group, scale=alt.Scale(scheme="tableau10")),
        tooltip=[
            alt.Tooltip("key:N", title=group),
            alt.Tooltip("t:T", title="bucket", format="%Y-%m-%d %H:%M UTC"),
            alt.Tooltip(f"{field}:Q", title=title, format=".1%"),
            alt.Tooltip("turns:Q", title="turns"),
            alt.Tooltip("rejected:Q", title="rejected"),
            alt.Tooltip("flagged:Q", title="flagged"),
        ],
    )
    chart: Chart = (
        base.mark_line(strokeWidth=2) + base.mark_point(filled=True, size=60)
    ).properties(height=HEIGHT)
    return chart


def volume_over_time(
    rows: Sequence[dict[str, Any]],
    *,
    group: str = "model",
    domain: tuple[str, str] | None = None,
    time_format: str = "%H:%M",
) -> Chart:
    """Turns per bucket, stacked by group; each bar spans its bucket (t to t_end) and
    its stack segment (y0 to y1, from `figures.stacked`: Vega-Lite does not stack bars
    that have a ranged x)."""
    chart: Chart = (
        alt.Chart(_data(rows))
        .mark_bar(stroke="white", strokeWidth=0.5)
        .encode(
            x=_time_axis("t:T", domain, time_format),
            x2="t_end:T",
            y=alt.Y("y0:Q", title="turns"),
            y2="y1:Q",
            color=alt.Color("key:N", title=group, scale=alt.Scale(scheme="tableau10")),
            tooltip=[
                alt.Tooltip("key:N", title=group),
                alt.Tooltip("t:T", title="bucket", format="%Y-%m-%d %H:%M UTC"),
                alt.Tooltip("turns:Q", title="turns"),
            ],
        )
        .properties(height=HEIGHT)
    )
    return chart


def kind_breakdown(rows: Sequence[dict[str, Any]]) -> Chart:
    """Turns per finding kind, split by the severity the kind had (horizontal bars)."""
    chart: Chart = (
        alt.Chart(_data(rows))
        .mark_bar()
        .encode(
            y=alt.Y(
                "kind:N",
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
                alt.Tooltip("kind:N"),
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
            stroke=alt.condition("datum.error", alt.value("#c53030"), alt.value(None)),
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
