"""The in-loop guard on the pages: the Overview's "Guard in the loop" table, and on a
turn's page what the guard did, with the attempts of a nudged turn (`guard_story`)."""

from __future__ import annotations

import html
from datetime import datetime

import streamlit as st

from factledger.dashboard.client import ApiClient, NotFound, Turn
from factledger.dashboard.guard_story import (
    GUARD_MEANING,
    attempts,
    guard_sentence,
    table_rows,
)


def guard_table(api: ApiClient, since: datetime, until: datetime) -> None:
    """The guard's counts per model and agent in the window; nothing at all when no turn
    of the window was guarded (or the service does not count them)."""
    try:
        summary = api.guard_summary(since=since, until=until)
    except NotFound:  # a service older than the guard counts
        return
    rows = table_rows(summary)
    if not rows:
        return
    st.subheader("Guard in the loop")
    st.caption(GUARD_MEANING)
    st.dataframe(rows, hide_index=True, key="guard_in_the_loop")


def guard_block(turn: Turn) -> None:
    """What the guard did in this turn; for a nudged turn, each reply it sent back with
    its nudge, then the reply it kept. Nothing for an unguarded turn."""
    guard = turn.get("guard")
    sentence = guard_sentence(guard)
    if guard is None or sentence is None:
        return
    st.html(f'<div class="fl-guard" data-guard="{html.escape(guard["result"])}">'
            f"{html.escape(sentence)}</div>")  # fmt: skip
    if not guard["nudges"]:
        return
    tried = attempts(turn["spans"])
    if not tried:
        return
    with st.expander(f"Attempts ({len(tried) + 1})", expanded=guard["result"] == "corrected"):
        for number, attempt in enumerate(tried, start=1):
            st.markdown(f"**Attempt {number}: sent back**")
            st.code(attempt.reply or "(no text)", language=None, wrap_lines=True)
            st.caption("The guard's nudge")
            st.code(attempt.nudge, language=None, wrap_lines=True)
        kept = "corrected reply" if guard["result"] == "corrected" else "reply it kept"
        st.markdown(f"**Attempt {len(tried) + 1}: the {kept}**")
        st.code(turn["reply"] or "(empty reply)", language=None, wrap_lines=True)
