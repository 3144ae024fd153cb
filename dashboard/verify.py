"""Verify: the human verification queue (class-5 suspicions first, by score, then other
flags). A label goes to POST /turns/{id}/reviews and the turn leaves the queue. Below,
how often reviewers confirmed each kind of finding."""

from __future__ import annotations

import html

import streamlit as st

from factledger.dashboard import evidence, turn_view
from factledger.dashboard.client import ApiClient, ApiError, Label, QueueItem
from factledger.dashboard.highlight import mark_tokens
from factledger.dashboard.ui import percent, when

SHOWN = 5
"""Queue items on the page at once; labelling one brings the next."""
QUEUE_LIMIT = 200
_DONE = "verify_done"
_REVIEWER = "verify_reviewer"


def render(api: ApiClient) -> None:
    st.title("Verify")
    done = st.session_state.pop(_DONE, None)
    if done:
        st.toast(done, icon=":material/check_circle:")
    st.text_input("Your name (stored with your labels)", key=_REVIEWER, max_chars=200)
    queue = api.review_queue(limit=QUEUE_LIMIT)
    if not queue:
        st.success(
            "**The verification queue is empty.** Every flagged turn has a label; new flags "
            "appear here as they arrive.",
            icon=":material/check_circle:",
        )
    else:
        class5 = sum(1 for item in queue if item["has_class5"])
        more = "+" if len(queue) >= QUEUE_LIMIT else ""
        st.caption(
            f"{len(queue)}{more} flagged turns await a label ({class5} class-5 suspicions "
            "first, by score). Is what the reply asserts backed by the tool results?"
        )
        for item in queue[:SHOWN]:
            _item(api, item)
    _precision(api)


def _item(api: ApiClient, item: QueueItem) -> None:
    turn = api.turn(item["turn_id"])
    with st.container(border=True, key=f"queue_{item['turn_id']}"):
        suspicion = (
            f"class-5 suspicion · score {item['max_score']:.2f}" if item["has_class5"] else "flag"
        )
        link = f"turns?turn_id={html.escape(item['turn_id'], quote=True)}"
        st.html(
            f'<span class="fl-verdict fl-verdict-flag">{html.escape(suspicion)}</span>'
            f'<span class="fl-meta">{html.escape(item["model"])} · agent '
            f"{html.escape(item['agent'] or '–')} · {when(item['started_at'])} · "
            f'<a href="{link}" target="_self">open the turn</a></span>'
        )
        left, right = st.columns([3, 2], gap="large")
        with left:
            turn_view.request_block(turn["user_message"], compact=True)
            turn_view.reply_block(turn["reply"], turn["findings"], compact=True)
            tokens = evidence.suspicious_tokens(turn["findings"])
            st.markdown("**Suspicious identifiers**")
            if tokens:
                turn_view.evidence_block(
                    [f for f in turn["findings"] if f.get("token") in tokens],
                    turn["tool_calls"],
                    turn["user_message"],
                )
            else:
                st.caption("The findings name no identifier; judge the reply as a whole.")
        with right:
            st.markdown("**Checked against these tool results**")
            calls = evidence.checked_calls(turn["findings"], turn["tool_calls"])
            if not calls:
                st.info("No tool was called in this turn.")
            for index, call in enumerate(calls):
                st.html(
                    f"<b>{html.escape(evidence.call_label(call, index))}</b>"
                    + mark_tokens(
                        evidence.pretty(call.get("result")) or "(no result recorded)",
                        evidence.search_texts(turn["findings"]),
                        error=not call.get("ok", True),
                    )
                )
        row = st.columns([4, 1, 1], vertical_alignment="bottom")
        row[0].text_input(
            "Note (optional)",
            key=_note_key(item["turn_id"]),
            placeholder="why you decided so",
            max_chars=10_000,
        )
        for column, label, text, kind in (
            (row[1], "hallucination", "Hallucination", "primary"),
            (row[2], "not_hallucination", "Not a hallucination", "secondary"),
        ):
            column.button(
                text,
                key=f"{label}_{item['turn_id']}",
                type=kind,  # type: ignore[arg-type]
                on_click=_label,
                args=(api, item["turn_id"], label),
                width="stretch",
            )


def _note_key(turn_id: str) -> str:
    return f"note_{turn_id}"


def _label(api: ApiClient, turn_id: str, label: Label) -> None:
    # A button callback runs before the page reruns, so the labelled turn is already out
    # of the queue when the page is drawn again. The note and the name are read now, not
    # bound when the button was drawn: a note typed just before the click counts.
    note = str(st.session_state.get(_note_key(turn_id), ""))
    reviewer = str(st.session_state.get(_REVIEWER, ""))
    try:
        api.add_review(turn_id, label, note=note, reviewer=reviewer)
    except ApiError as exc:
        st.session_state[_DONE] = f"Could not store the label: {exc}"
        return
    st.session_state[_DONE] = f"Labelled {turn_id[:12]} as {label.replace('_', ' ')}."


def _precision(api: ApiClient) -> None:
    st.subheader("Precision per finding kind")
    precision = api.review_precision()
    overall = precision["turns"]
    if not overall["reviewed"]:
        st.info("No labels yet: precision appears once reviewers label turns.")
        return
    st.caption(
        f"From {overall['reviewed']} reviewed turns (each turn's latest label): "
        f"{percent(overall['precision'])} confirmed as hallucinations. A turn counts under "
        "every kind of finding it has."
    )
    rows = [
        {
            "kind": k["kind"],
            "reviewed": k["reviewed"],
            "confirmed": k["confirmed"],
            "not a hallucination": k["reviewed"] - k["confirmed"],
            "precision": k["precision"],
        }
        for k in precision["kinds"]
    ]
    st.dataframe(
        rows,
        hide_index=True,
        column_config={
            "kind": st.column_config.TextColumn("finding kind", width="medium"),
            "precision": st.column_config.ProgressColumn(
                "precision", format="percent", min_value=0.0, max_value=1.0, width="large"
            ),
        },
    )
