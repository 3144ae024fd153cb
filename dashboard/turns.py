"""Turns: a filterable table of flagged and rejected turns; selecting one (or opening
`?turn_id=...`) shows the turn next to its tool trace."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import streamlit as st

from factledger.dashboard import turn_view
from factledger.dashboard.client import ApiClient, NotFound, TurnQuery
from factledger.dashboard.figures import parse_time
from factledger.processors.kinds import Kind

VERDICTS: dict[str, tuple[str, ...]] = {
    "rejected or flagged": ("reject", "flag"),
    "rejected": ("reject",),
    "flagged": ("flag",),
    "passed": ("pass",),
    "any": (),
}
PERIODS: dict[str, timedelta | None] = {
    "last hour": timedelta(hours=1),
    "last 24 hours": timedelta(days=1),
    "last 7 days": timedelta(days=7),
    "last 30 days": timedelta(days=30),
    "any time": None,
}
PAGE_ROWS = 200
ANY = "(any)"
_KEYS_WINDOW = timedelta(days=30)


def render(api: ApiClient) -> None:
    turn_id = st.query_params.get("turn_id", "")
    if turn_id:
        if st.button("← All turns", type="tertiary"):
            del st.query_params["turn_id"]
            st.rerun()
        try:
            turn = api.turn(turn_id)
        except NotFound:
            st.warning(
                f"No turn `{turn_id}` in the store (it may have expired).",
                icon=":material/search_off:",
            )
            return
        turn_view.render_turn(turn)
        return
    _table(api)


def _table(api: ApiClient) -> None:
    st.title("Turns")
    models, agents = _known_keys(api)
    top = st.columns([2, 2, 2, 3], vertical_alignment="bottom")
    verdict = top[0].selectbox("Verdict", list(VERDICTS), key="turns_verdict")
    period = top[1].selectbox("Time", list(PERIODS), index=1, key="turns_period")
    kind = top[2].selectbox("Finding kind", [ANY, *(k.value for k in Kind)], key="turns_kind")
    text = top[3].text_input(
        "Search in replies", key="turns_q", placeholder="a SHA, a ticket key, a phrase…"
    )
    second = st.columns([2, 2, 5])
    model = second[0].selectbox("Model", [ANY, *models], key="turns_model")
    agent = second[1].selectbox("Agent", [ANY, *agents], key="turns_agent")

    span = PERIODS[period]
    query = TurnQuery(
        verdicts=VERDICTS[verdict],
        model="" if model == ANY else model,
        agent="" if agent == ANY else agent,
        kind="" if kind == ANY else kind,
        q=text,
        since=None if span is None else datetime.now(UTC) - span,
        limit=PAGE_ROWS,
    )
    page = api.turns(query)
    if not page["turns"]:
        if not models and not agents:
            st.info(
                "**The store has no turns yet.** Send traces to the service's `/v1/traces`, "
                "or demo traffic with `factledger demo`.",
                icon=":material/inbox:",
            )
        elif verdict == "rejected or flagged" and not (text or kind != ANY):
            st.success(
                f"**No flagged or rejected turns** ({period}, these filters): every turn passed.",
                icon=":material/check_circle:",
            )
        else:
            st.info("No turn matches these filters.", icon=":material/search_off:")
        return

    shown = len(page["turns"])
    st.caption(
        f"{page['total']:,} turns match; showing the newest {shown}. Select a row to open the turn."
    )
    table = [
        {
            "time": parse_time(turn["started_at"]),
            "verdict": turn["verdict"],
            "model": turn["model"],
            "agent": turn["agent"],
            "kinds": ", ".join(turn["kinds"]),
            "reply": turn["reply_preview"],
            "turn": turn["turn_id"],
        }
        for turn in page["turns"]
    ]
    event: Any = st.dataframe(
        table,
        hide_index=True,
        on_select="rerun",
        selection_mode="single-row",
        key="turns_table",
        column_config={
            "time": st.column_config.DatetimeColumn("time", format="YYYY-MM-DD HH:mm:ss"),
            "verdict": st.column_config.TextColumn("verdict", width="small"),
            "kinds": st.column_config.TextColumn("finding kinds", width="medium"),
            "reply": st.column_config.TextColumn("reply", width="large"),
            "turn": st.column_config.TextColumn("turn id", width="small"),
        },
    )
    selected = event.selection.rows if event is not None else []
    if selected:
        st.query_params["turn_id"] = table[selected[0]]["turn"]
        st.rerun()


def _known_keys(api: ApiClient) -> tuple[list[str], list[str]]:
    """Models and agents with turns in the last 30 days (for the filter choices)."""
    now = datetime.now(UTC)
    since = now - _KEYS_WINDOW
    models = api.reject_rate(group_by="model", bucket="1d", since=since, until=now)
    agents = api.reject_rate(group_by="agent", bucket="1d", since=since, until=now)
    return [s["key"] for s in models], [s["key"] for s in agents]
