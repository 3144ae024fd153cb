"""Verify: the human verification queue, one item at a time (class-5 suspicions first, by
score, then other flags), filtered by finding kind, model, agent and what verification
answered (all, not verified, verification could not settle). Near-duplicate
suspicions (the same reply pattern from the same agent) are one item, and one label
covers them all. The label bar sits above the evidence, so it is on screen without
scrolling, and the keys H, N, S and U label, skip and undo (`labeling`). Each item says
what the sources of truth answered of it. Below, how often reviewers confirmed each kind
of finding."""

from __future__ import annotations

import html

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from factledger.dashboard import labeling
from factledger.dashboard.client import (
    ApiClient,
    QueueFacets,
    QueueGroup,
    QueueVerification,
    review_groups,
)
from factledger.dashboard.finding_evidence import finding_evidence
from factledger.dashboard.highlight import kind_severities, label_html
from factledger.dashboard.safe_text import turn_link
from factledger.dashboard.screens import turn_view
from factledger.dashboard.ui import percent, when
from factledger.dashboard.verification import QUEUE_FILTERS, queue_line

QUEUE_LIMIT = 500
"""Queue items gathered into groups per page load; the rest follow as these are labelled."""
MEMBERS_SHOWN = 20
"""Turns of a group listed by name; the rest are counted."""
ANY = "(any)"
_SKIPPED = "verify_skipped"
_FILTERS = (("kind", "Finding kind"), ("model", "Model"), ("agent", "Agent"))
_IDENTIFIER_KINDS = frozenset(
    {
        "fabricated_identifier",
        "borrowed_identifier",
        "confabulated_identifier_set",
        "negated_existing_identifier",
        "unfetched_citation",
    }
)
"""Kinds whose token is an identifier (a SHA, a key, a path, a URL) the reviewer looks up."""


def render(api: ApiClient) -> None:
    st.title("Verify")
    labeling.show_notice()
    top = st.columns([2, 2, 2, 2, 3], vertical_alignment="bottom")
    labeling.reviewer_input(top[0])
    chosen = _chosen()
    verified = _verification_filter(top[4])
    queue = review_groups(api, limit=QUEUE_LIMIT, verification=verified, **chosen)
    _filters(top[1:4], queue["facets"], chosen)
    groups = _ordered(queue["groups"])
    if not groups:
        labeling.keyboard("verify:empty")
        if queue["facets"]["total"]:
            st.info("No queue item matches these filters.", icon=":material/search_off:")
        else:
            reviewed = api.review_precision()["turns"]["reviewed"]
            st.success(empty_queue_notice(reviewed), icon=":material/check_circle:")
        labeling.undo_bar(api)
    else:
        more = "+" if queue["turns"] >= QUEUE_LIMIT else ""
        skipped = sum(1 for g in groups if g["group_id"] in _skipped())
        st.caption(
            f"{queue['turns']}{more} flagged turns await a label, in {len(groups)} "
            f"{'item' if len(groups) == 1 else 'items'} "
            f"(near-duplicates together){f', {skipped} skipped' if skipped else ''}. "
            "Keys: **H** hallucination · **N** not a hallucination · **S** skip · **U** undo."
        )
        _item(api, groups[0])
    _precision(api)


def empty_queue_notice(reviewed: int) -> str:
    """What an empty queue says: nothing to review yet when no turn was ever labelled (a
    fresh store, or traffic without flags), else that every flagged turn has a label."""
    if not reviewed:
        return (
            "**Nothing to review yet.** No flagged turn waits for a label; flagged turns "
            "appear here as they arrive."
        )
    return (
        "**The verification queue is empty.** Every flagged turn has a label; new flags "
        "appear here as they arrive."
    )


def _chosen() -> dict[str, str]:
    """The kind, model and agent chosen ("" for any): the filter fields' values, or on a
    first visit the URL's (`?kind=...&model=...&agent=...`)."""
    chosen: dict[str, str] = {}
    for name, _ in _FILTERS:
        key = f"verify_{name}"
        if key not in st.session_state:
            st.session_state[key] = st.query_params.get(name, "") or ANY
        value = str(st.session_state[key])
        chosen[name] = "" if value == ANY else value
    return chosen


def _filters(columns: list[DeltaGenerator], facets: QueueFacets, chosen: dict[str, str]) -> None:
    """The filter fields, offering what the whole queue holds; a choice goes to the URL."""
    options = {"kind": facets["kinds"], "model": facets["models"], "agent": facets["agents"]}
    for column, (name, text) in zip(columns, _FILTERS, strict=True):
        values = [ANY, *options[name]]
        if chosen[name] and chosen[name] not in values:
            values.append(chosen[name])  # every item of that choice is labelled by now
        column.selectbox(
            text, values, key=f"verify_{name}", on_change=_filter_changed, args=(name,)
        )


_VERIFICATION_KEY = "verify_verification"
_VERIFICATION_WORDS = dict(QUEUE_FILTERS)
_VERIFICATION_VALUES: dict[str, QueueVerification] = {value: value for value, _ in QUEUE_FILTERS}


def _verification_filter(column: DeltaGenerator) -> QueueVerification:
    """The verification filter (from the URL's `?verification=` on a first visit)."""
    if _VERIFICATION_KEY not in st.session_state:
        asked = st.query_params.get("verification", "any")
        st.session_state[_VERIFICATION_KEY] = _VERIFICATION_VALUES.get(asked, "any")
    chosen = column.selectbox(
        "Verification",
        list(_VERIFICATION_WORDS),
        format_func=_VERIFICATION_WORDS.__getitem__,
        key=_VERIFICATION_KEY,
        on_change=_verification_changed,
    )
    return _VERIFICATION_VALUES.get(str(chosen), "any")


def _verification_changed() -> None:
    value = st.session_state.get(_VERIFICATION_KEY, "any")
    if value == "any":
        st.query_params.pop("verification", None)
    else:
        st.query_params["verification"] = value


def _filter_changed(name: str) -> None:
    value = st.session_state.get(f"verify_{name}", ANY)
    if value == ANY:
        st.query_params.pop(name, None)
    else:
        st.query_params[name] = value


def _skipped() -> list[str]:
    skipped: list[str] = st.session_state.setdefault(_SKIPPED, [])
    return skipped


def _ordered(groups: list[QueueGroup]) -> list[QueueGroup]:
    """The queue's groups in the order shown: the one whose label was just undone first,
    then the queue's order, skipped ones last (in the order they were skipped)."""
    focus = labeling.focus()
    skipped = _skipped()
    first = [g for g in groups if focus and any(t["turn_id"] == focus for t in g["turns"])]
    if focus and not first:
        labeling.clear_focus()  # labelled again meanwhile, or filtered out
    rest = [g for g in groups if g not in first]
    waiting = [g for g in rest if g["group_id"] not in skipped]
    later = sorted(
        (g for g in rest if g["group_id"] in skipped),
        key=lambda g: skipped.index(g["group_id"]),
    )
    return first + waiting + later


def _skip(group_id: str) -> None:
    skipped = _skipped()
    if group_id in skipped:
        skipped.remove(group_id)
    skipped.append(group_id)
    labeling.clear_focus()


def _item(api: ApiClient, group: QueueGroup) -> None:
    head = group["turns"][0]
    turn = api.turn(head["turn_id"])
    turn_ids = [t["turn_id"] for t in group["turns"]]
    labeling.keyboard(f"group:{group['group_id']}:{len(turn_ids)}")
    with st.container(border=True, key=f"queue_{head['turn_id']}"):
        score = head.get("max_score")
        suspicion = (
            f"class-5 suspicion · score {score:.2f}"
            if head["has_class5"] and score is not None
            else "flag"
        )
        severities = kind_severities(turn["findings"])
        kinds = "".join(
            label_html(kind, severities.get(kind, "flag")) + " " for kind in group["kinds"]
        )
        covers = (
            f'<span class="fl-verdict fl-verdict-flag">one label covers {len(turn_ids)} '
            "near-duplicate turns</span>"
            if len(turn_ids) > 1
            else ""
        )
        link = turn_link(head["turn_id"])
        st.html(
            f'<span class="fl-verdict fl-verdict-flag">{html.escape(suspicion)}</span>{covers}'
            f"{kinds}"
            f'<span class="fl-meta">{html.escape(head["model"])} · agent '
            f"{html.escape(head['agent'] or '–')} · {when(head['started_at'])} · "
            f'<a href="{link}" target="_self">open the turn</a></span>'
            f'<div class="fl-meta fl-queue-verification">'
            f"{html.escape(queue_line(head.get('verification')))}</div>"
        )
        labeling.question_block(turn["findings"])
        labeling.label_bar(
            api,
            turn_ids,
            note_key=f"fl_note_{group['group_id']}",
            on_skip=lambda: _skip(group["group_id"]),
            on_labelled=labeling.clear_focus,
        )
        if len(turn_ids) > 1:
            _members(group)
        found = finding_evidence(
            turn["findings"], turn["tool_calls"], turn["user_message"], turn["spans"]
        )
        left, right = st.columns([3, 2], gap="large")
        with left:
            turn_view.request_block(turn["user_message"], compact=True)
            turn_view.reply_block(turn["reply"], turn["findings"], compact=True)
            identifiers = _IDENTIFIER_KINDS & set(group["kinds"])
            st.markdown(
                "**Suspicious identifiers**" if identifiers else "**What the findings rest on**"
            )
            turn_view.evidence_block(
                turn["findings"], turn["tool_calls"], turn["user_message"], found=found
            )
        with right:
            st.markdown("**Checked against these tool results**")
            turn_view.tool_calls_block(turn["tool_calls"], found)


def _members(group: QueueGroup) -> None:
    """The turns one label covers: same agent, kinds and reply pattern."""
    lines = [
        f'<li><a href="{turn_link(t["turn_id"])}" '
        f'target="_self"><code>{html.escape(t["turn_id"][:12])}</code></a> '
        f"{html.escape(t['model'])} · {when(t['started_at'])} · "
        f"{html.escape(t['reply_preview'][:120])}</li>"
        for t in group["turns"][:MEMBERS_SHOWN]
    ]
    more = len(group["turns"]) - MEMBERS_SHOWN
    tail = f"<li>and {more} more</li>" if more > 0 else ""
    with st.expander(f"The {len(group['turns'])} turns this label covers"):
        st.html(
            f'<div class="fl-meta">Same agent ({html.escape(group["agent"] or "–")}), same '
            f"finding kinds, same reply pattern: <code>{html.escape(group['pattern'][:300])}"
            f'</code></div><ul class="fl-meta">{"".join(lines)}{tail}</ul>'
        )


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
        "every kind of finding it has. `factledger reviews export` writes the labels as "
        "`factledger eval` cases."
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
