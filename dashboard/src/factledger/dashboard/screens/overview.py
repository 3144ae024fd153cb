"""Overview: reject and flagged rates per model over time, turn volume, findings by kind,
verdicts by agent, the models and agents whose reject rate rose most, how the sources
of truth answered per finding kind, and what the in-loop guard did per model and agent."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

import streamlit as st

from factledger.dashboard import charts, figures
from factledger.dashboard.client import ApiClient, GroupBy, NotFound
from factledger.dashboard.screens.guard_views import guard_table
from factledger.dashboard.ui import percent
from factledger.dashboard.verification import summary_rows

SPLITS: dict[str, GroupBy] = {"model": "model", "agent": "agent", "service": "service"}
RATES: tuple[tuple[Literal["rate", "flag_rate"], str], ...] = (
    ("rate", "reject rate"),
    ("flag_rate", "flagged rate"),
)


def render(api: ApiClient) -> None:
    st.title("Overview")
    now = datetime.now(UTC)
    if "overview_window" not in st.session_state:
        # First visit: the shortest window from an hour up that holds the newest turn,
        # rather than an hour that may be empty while yesterday had traffic.
        st.session_state["overview_window"] = first_window(api, now)
    controls = st.columns([3, 1, 1], vertical_alignment="bottom")
    window_name = controls[0].segmented_control(
        "Window", list(figures.WINDOWS), required=True, key="overview_window"
    )
    window = figures.WINDOWS[window_name or figures.DEFAULT_WINDOW]
    choices = figures.buckets_for(window)
    bucket = controls[1].selectbox(
        "Bucket",
        choices,
        index=choices.index(figures.default_bucket(window)),
        key=f"overview_bucket_{window_name}",
    )
    group = SPLITS[controls[2].selectbox("Split by", list(SPLITS), key="overview_split")]

    bounds = figures.window_bounds(now, window, bucket)
    by_group = api.reject_rate(group_by=group, bucket=bucket, since=bounds.start, until=now)
    current = figures.overall(by_group, bounds.split, bounds.end)
    previous = figures.overall(by_group, bounds.start, bounds.split)
    if current.turns == 0:
        if previous.turns == 0:
            st.info(
                f"**No turns in the last {window_name}.** Point an instrumented agent at the "
                "service's OTLP endpoint (`/v1/traces`), or send demo traffic with "
                "`factledger demo`. Pick a longer window to see older turns.",
                icon=":material/inbox:",
            )
        else:
            st.info(
                f"**No turns in the last {window_name}**; the {window_name} before had "
                f"{previous.turns}. Pick a longer window to see them.",
                icon=":material/inbox:",
            )
        return

    queued = api.review_queue_page(limit=1)["total"]  # the whole queue, not a page of it
    _headline(current, previous, queued)

    rows = figures.rows(by_group, since=bounds.split, bucket=bucket, now=now)
    start, end = figures.fitted_domain(rows, bounds, bucket)
    domain = (start.isoformat(), end.isoformat())
    axis_format = figures.time_format(end - start)
    parts = [p for p in figures.totals(by_group, bounds.split, bounds.end) if p.turns]
    for field, title in RATES:
        st.subheader(f"{title.capitalize()} per {group}")
        st.altair_chart(
            charts.rate_over_time(
                rows,
                field=field,
                title=title,
                group=group,
                domain=domain,
                time_format=axis_format,
                labels=figures.series_labels(parts, field),
            ),
            width="stretch",
        )
    st.caption(_reading_note(rows, bucket, group, start, bounds))

    st.subheader(f"Turn volume per {group}")
    st.altair_chart(
        charts.volume_over_time(
            figures.stacked(rows),
            group=group,
            domain=domain,
            time_format=axis_format,
            labels=figures.series_labels(parts, "turns"),
        ),
        width="stretch",
    )

    by_agent = (
        by_group
        if group == "agent"
        else api.reject_rate(group_by="agent", bucket=bucket, since=bounds.start, until=now)
    )
    by_model = (
        by_group
        if group == "model"
        else api.reject_rate(group_by="model", bucket=bucket, since=bounds.start, until=now)
    )
    by_kind = api.reject_rate(group_by="kind", bucket=bucket, since=bounds.split, until=now)
    kinds = figures.kind_rows(by_kind, bounds.split)
    left, right = st.columns(2, gap="large")
    with left:
        st.subheader("Findings by kind")
        if kinds:
            st.altair_chart(charts.kind_breakdown(kinds), width="stretch")
        else:
            st.success("No turn in this window has a rejecting or flagging finding.")
    with right:
        st.subheader("Biggest rises against the previous window")
        changes = figures.rises("model", by_model, bounds) + figures.rises(
            "agent", by_agent, bounds
        )
        changes.sort(key=lambda c: (-c.delta, c.group, c.key))
        if changes:
            st.altair_chart(charts.rise_chart(figures.change_rows(changes)), width="stretch")
            top = changes[0]
            st.caption(
                f"Reject rate now against the {window_name} before it "
                f"({figures.MIN_TURNS_FOR_RISE}+ turns in each). Largest change: {top.group} "
                f"**{top.key}**, {percent(top.previous)} → {percent(top.rate)}."
            )
        else:
            st.info(
                f"Nothing to compare yet: a model or agent needs {figures.MIN_TURNS_FOR_RISE}"
                f" turns in this {window_name} and in the {window_name} before it.",
                icon=":material/hourglass_empty:",
            )
        st.subheader("Verdicts by agent")
        agents = figures.totals(by_agent, bounds.split, bounds.end)
        st.altair_chart(
            charts.verdict_mix(figures.verdict_rows(a for a in agents if a.turns)),
            width="stretch",
        )
    _verification(api, bounds.split, now, window_name or figures.DEFAULT_WINDOW)
    guard_table(api, bounds.split, now)


def _verification(api: ApiClient, since: datetime, until: datetime, window_name: str) -> None:
    """The sources of truth's answers per finding kind in the window."""
    st.subheader("Verification: confirmed / refuted / unverifiable per kind")
    try:
        summary = api.verification_summary(since=since, until=until)
    except NotFound:  # a service from before verification
        st.caption("This service does not verify findings.")
        return
    rows = summary_rows(summary)
    if not rows:
        st.info(
            f"**No verification answers in the last {window_name}.** Findings that name a "
            "commit, path, function, link or record are checked against the configured "
            "sources once judged; their answers appear here.",
            icon=":material/fact_check:",
        )
        return
    total = summary["total"]
    st.caption(
        f"{total['confirmed']} confirmed (hallucination proven at the source), "
        f"{total['refuted']} refuted (the finding withdrawn), {total['unverifiable']} "
        "unverifiable (no source could settle it), in the latest verdict of each turn."
    )
    st.dataframe(
        rows,
        hide_index=True,
        column_config={
            "kind": st.column_config.TextColumn("finding kind", width="medium"),
            "settled": st.column_config.ProgressColumn(
                "settled", format="percent", min_value=0.0, max_value=1.0
            ),
        },
    )


def first_window(api: ApiClient, now: datetime) -> str:
    """The window a first visit opens, the Overview's and the Turns page's alike: the
    shortest from an hour up that holds the newest turn (`figures.fitting_window`)."""
    longest = max(figures.WINDOWS.values())
    series = api.reject_rate(group_by="service", bucket="1h", since=now - longest, until=now)
    return figures.fitting_window(figures.newest_bucket(series), now)


def _reading_note(
    rows: list[dict[str, Any]], bucket: str, group: str, start: datetime, bounds: figures.Window
) -> str:
    """How to read the rate charts: what a point is and which points to trust."""
    note = (
        f"Each point is one {bucket} bucket, drawn at its middle; its area grows with its "
        f"turns; the legend gives each {group}'s rate over the whole window. Faint "
        f"points have fewer than {figures.MIN_TURNS_PER_POINT} turns and a hollow dashed "
        "ring is the bucket still filling: neither is joined to the line."
    )
    filling = sorted({r["t"] for r in rows if r["partial"]})
    if filling:
        note += f" The bucket from {figures.parse_time(filling[0]):%H:%M} UTC is still filling."
    if start > bounds.split:
        note += f" The axis starts at the first turn in this window ({start:%H:%M} UTC)."
    return note


def _headline(current: figures.Totals, previous: figures.Totals, queued: int) -> None:
    cells = st.columns(4)
    cells[0].metric(
        "Turns",
        f"{current.turns:,}",
        delta=f"{current.turns - previous.turns:+,}" if previous.turns else None,
        delta_color="off",
        border=True,
    )
    cells[1].metric(
        "Reject rate",
        percent(current.rate),
        delta=_points(current.rate - previous.rate) if previous.turns else None,
        delta_color="inverse",
        border=True,
    )
    cells[2].metric(
        "Flagged rate",
        percent(current.flag_rate),
        delta=_points(current.flag_rate - previous.flag_rate) if previous.turns else None,
        delta_color="inverse",
        border=True,
    )
    cells[3].metric(
        "Awaiting review",
        f"{queued:,}",
        border=True,
        help="Flagged turns nobody has labelled yet (see Verify).",
    )


def _points(delta: float) -> str:
    return f"{delta * 100:+.1f} pp"
