"""Labelling at the speed of a keyboard, shared by the Verify queue and the turn page.

A label bar asks the question that fits the turn's finding (`review_questions`), and
offers Hallucination (H), Not a hallucination (N), Skip (S, the queue only) and Undo (U)
with an optional note. One label may cover several turns (a group of near-duplicates):
it stores one review per turn. Undo withdraws every review of the last label given in
this browser session, on whichever page it was given, so those turns return to the queue
(or to the label they had before).

Streamlit has no key bindings, so a small script in the page maps the keys to the bar's
buttons: a key clicks the button of the item on screen when it was pressed, once the app
is idle; a key pressed for an item that has meanwhile left the screen is dropped, so a
label never lands on a turn the reviewer did not see. Keys typed into a text field are
left alone (Escape leaves the field).
"""

from __future__ import annotations

import html
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from factledger.dashboard import ui
from factledger.dashboard.client import (
    ApiClient,
    ApiError,
    Label,
    Turn,
    add_labels,
    withdraw_review,
)
from factledger.dashboard.review_questions import question_for
from factledger.dashboard.safe_text import code_html, markdown_text
from factledger.dashboard.ui import when

REVIEWER_ENV = "FACTLEDGER_REVIEWER"
"""The reviewer name labels carry until one is typed in the dashboard (read from the
dashboard process's environment)."""
REVIEWER_WIDGET = "verify_reviewer"
"""The name field's widget key (Streamlit drops a widget's value on pages without it)."""
_REVIEWER = "fl_reviewer"
_HISTORY = "fl_label_history"
_ACTIONS = "fl_label_actions"
_NOTICE = "fl_label_notice"
_FOCUS = "fl_label_focus"
MAX_HISTORY = 200
"""Labels of this session that Undo can take back, newest last."""

KEYS: tuple[tuple[str, str, str], ...] = (
    ("h", "hallucination", "Hallucination"),
    ("n", "not_hallucination", "Not a hallucination"),
    ("s", "skip", "Skip"),
    ("u", "undo", "Undo"),
)
"""(key, action, button text): the script clicks the button keyed `fl_<action>`."""

_KEYBOARD_SCRIPT = """
<script>
(() => {
  if (window.__factledgerLabelKeys) return;
  window.__factledgerLabelKeys = true;
  const ACTIONS = {h: "hallucination", n: "not_hallucination", s: "skip", u: "undo"};
  const idle = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    return !app || app.getAttribute("data-test-script-state") === "notRunning";
  };
  const shown = () => {
    const marker = document.querySelector("[data-fl-item]");
    return marker ? marker.getAttribute("data-fl-item") : null;
  };
  let done = null;
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
    const target = event.target;
    if (target instanceof HTMLElement && (target.isContentEditable
        || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))) {
      if (event.key === "Escape") target.blur();
      return;
    }
    const action = ACTIONS[(event.key || "").toLowerCase()];
    const item = shown();
    if (!action || item === null) return;
    event.preventDefault();
    const pressed = Date.now();
    const later = () => { if (Date.now() - pressed < 15000) setTimeout(attempt, 30); };
    const attempt = () => {
      if (!idle()) return later();
      // The item on screen changed: this key was meant for one that is gone.
      if (shown() !== item || done === item) return;
      // A button being drawn again (or not yet enabled) is waited for, not a lost key.
      const button = document.querySelector(`.st-key-fl_${action} button`);
      if (!button || button.disabled) return later();
      done = item;
      button.click();
    };
    attempt();
  }, true);
})();
</script>
"""

_CSS = """
<style>
.fl-question { font-size: 1.05rem; margin: 0.2rem 0 0.1rem 0; }
.fl-question code { font-size: 0.95rem; }
.fl-answers { color: #4a5568; font-size: 0.85rem; }
.fl-key { display: inline-block; min-width: 1.1rem; text-align: center; font-size: 0.75rem;
  font-weight: 600; border: 1px solid #a0aec0; border-radius: 0.25rem; padding: 0 0.25rem;
  margin-right: 0.2rem; background: #f7fafc; color: #2d3748; }
</style>
"""


@dataclass(frozen=True)
class Labelled:
    """One label given in this session: what Undo takes back."""

    turn_ids: tuple[str, ...]
    review_ids: tuple[str, ...]
    label: Label


def session_client() -> ApiClient:
    """The dashboard's client reading the tenant chosen in the sidebar (for pages that
    are not handed one)."""
    api = ui.client()
    tenant = st.session_state.get("fl-tenant")
    return api.with_tenant(str(tenant)) if tenant else api


def keyboard(item: str) -> None:
    """The key bindings, and the marker naming the item on screen (`item`, unique per
    page state: it changes whenever a label, undo or skip changes what is shown)."""
    marker = html.escape(f"{item}:{st.session_state.get(_ACTIONS, 0)}", quote=True)
    st.html(
        _CSS + _KEYBOARD_SCRIPT + f'<span data-fl-item="{marker}"></span>',
        unsafe_allow_javascript=True,
    )


def show_notice() -> None:
    """The outcome of the last label, undo or skip, once."""
    notice = st.session_state.pop(_NOTICE, None)
    if notice:
        st.toast(notice, icon=":material/check_circle:")


def default_reviewer(env: Mapping[str, str] | None = None) -> str:
    """The name labels carry before one is typed: FACTLEDGER_REVIEWER, else empty."""
    return (os.environ if env is None else env).get(REVIEWER_ENV, "").strip()[:200]


def reviewer_input(where: Any = st) -> None:
    """The reviewer's name field; the name is kept for the session across pages, and
    starts as FACTLEDGER_REVIEWER."""
    if REVIEWER_WIDGET not in st.session_state:
        st.session_state[REVIEWER_WIDGET] = st.session_state.get(_REVIEWER, default_reviewer())
    where.text_input(
        "Your name (stored with your labels)",
        key=REVIEWER_WIDGET,
        max_chars=200,
        on_change=_keep_reviewer,
    )


def question_block(findings: Sequence[Mapping[str, Any]]) -> None:
    """The question that fits the turn's finding, and what each answer means."""
    question = question_for(findings)
    ask = code_html(question.ask)
    st.html(
        f'<div class="fl-question"><b>{ask}</b></div>'
        f'<div class="fl-answers"><span class="fl-key">H</span> hallucination: '
        f'{html.escape(question.yes)} · <span class="fl-key">N</span> not a hallucination: '
        f"{html.escape(question.no)}</div>"
    )


def label_bar(
    api: ApiClient,
    turn_ids: Sequence[str],
    *,
    note_key: str,
    on_skip: Callable[[], None] | None = None,
    on_labelled: Callable[[], None] | None = None,
) -> None:
    """Buttons for a label covering `turn_ids`, Skip when `on_skip` is given, Undo, and
    the note field. The keys H, N, S and U press these buttons."""
    widths = [1.3, 1.7, 0.8, 0.8, 4.0] if on_skip else [1.3, 1.7, 0.8, 4.8]
    row = st.columns(widths, vertical_alignment="bottom")
    size = len(turn_ids)
    for column, (key, action, text) in zip(row[:2], KEYS[:2], strict=True):
        column.button(
            text,
            key=f"fl_{action}",
            type="primary" if action == "hallucination" else "secondary",
            help=f"key {key.upper()}" + (f": labels all {size} turns" if size > 1 else ""),
            on_click=_label,
            args=(api, tuple(turn_ids), action, note_key, on_labelled),
            width="stretch",
        )
    rest = row[2:]
    if on_skip is not None:
        rest[0].button(
            "Skip", key="fl_skip", help="key S", on_click=_skip, args=(on_skip,), width="stretch"
        )
        rest = rest[1:]
    _undo_button(rest[0], api)
    rest[1].text_input(
        "Note (optional)", key=note_key, placeholder="why you decided so", max_chars=10_000
    )


def _undo_button(column: Any, api: ApiClient) -> None:
    column.button(
        "Undo",
        key="fl_undo",
        help="key U: takes back the last label you gave",
        on_click=undo,
        args=(api,),
        disabled=not st.session_state.get(_HISTORY),
        width="stretch",
    )


def undo_bar(api: ApiClient) -> None:
    """Undo alone, for a page with nothing left to label."""
    left, _ = st.columns([0.8, 8.2])
    _undo_button(left, api)


def turn_labels(turn: Turn) -> None:
    """The turn page's label bar: the turn's current label, the question, the buttons."""
    api = session_client()
    reviews = turn.get("reviews") or []
    keyboard(f"turn:{turn['turn_id']}:{len(reviews)}")
    show_notice()
    with st.container(border=True, key="fl_turn_labels"):
        if reviews:
            st.caption(label_caption(reviews[-1]))
        question_block(turn["findings"])
        reviewer_input(st.columns([2, 6])[0])
        label_bar(api, [turn["turn_id"]], note_key=f"fl_note_{turn['turn_id']}")


def label_caption(review: Mapping[str, Any]) -> str:
    """The turn's current label as a Markdown line, its reviewer's name as plain text."""
    by = f" by {markdown_text(review['reviewer'])}" if review["reviewer"] else ""
    label = markdown_text(str(review["label"]).replace("_", " "))
    return f"Labelled **{label}**{by} ({when(review['created_at'])}); a new label replaces it."


def focus() -> str | None:
    """The turn whose group the queue shows first (one whose label was just undone)."""
    value = st.session_state.get(_FOCUS)
    return str(value) if value else None


def clear_focus() -> None:
    st.session_state.pop(_FOCUS, None)


def undo(api: ApiClient) -> None:
    """Withdraw every review of the last label given in this session."""
    history: list[Labelled] = st.session_state.get(_HISTORY) or []
    if not history:
        _notify("Nothing to undo.")
        return
    last = history.pop()
    reviewer = _reviewer()
    try:
        for review_id in last.review_ids:
            withdraw_review(api, review_id, reviewer=reviewer)
    except ApiError as exc:
        history.append(last)  # withdrawing again is harmless: Undo can be retried
        _notify(f"Could not undo: {exc}")
        return
    st.session_state[_FOCUS] = last.turn_ids[0]
    _notify(f"Undid the label of {_turns(len(last.turn_ids))}: back to where it was.")


def _label(
    api: ApiClient,
    turn_ids: tuple[str, ...],
    label: Label,
    note_key: str,
    on_labelled: Callable[[], None] | None,
) -> None:
    # A button callback runs before the page reruns, so the labelled turns are already
    # out of the queue when it is drawn again. The note and the name are read now, not
    # when the button was drawn: a note typed just before the click counts.
    note = str(st.session_state.get(note_key, ""))
    try:
        review_ids = add_labels(api, turn_ids, label, note=note, reviewer=_reviewer())
    except ApiError as exc:
        _notify(f"Could not store the label: {exc}")
        return
    history: list[Labelled] = st.session_state.setdefault(_HISTORY, [])
    history.append(Labelled(turn_ids, tuple(review_ids), label))
    del history[:-MAX_HISTORY]
    if on_labelled is not None:
        on_labelled()
    _notify(f"Labelled {_turns(len(turn_ids))} as {label.replace('_', ' ')}. U undoes it.")


def _skip(on_skip: Callable[[], None]) -> None:
    on_skip()
    _notify("Skipped: it comes back after the rest.")


def _notify(text: str) -> None:
    st.session_state[_NOTICE] = text
    st.session_state[_ACTIONS] = int(st.session_state.get(_ACTIONS, 0)) + 1


def _keep_reviewer() -> None:
    st.session_state[_REVIEWER] = st.session_state.get(REVIEWER_WIDGET, "")


def _reviewer() -> str:
    # The field's value, else the name kept from another page, else the default: a page
    # without the field (or a field left empty) still labels as someone.
    return str(
        st.session_state.get(REVIEWER_WIDGET)
        or st.session_state.get(_REVIEWER)
        or default_reviewer()
    )


def _turns(count: int) -> str:
    return "1 turn" if count == 1 else f"{count} turns"
