"""Turns: a filterable table of flagged and rejected turns; selecting one (or opening
`?turn_id=...`) shows the turn next to its tool trace. The first visit opens the same
window the Overview opens (`figures.fitting_window`): one default for both pages."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import streamlit as st

from factledger.dashboard import figures, palette
from factledger.dashboard.client import ApiClient, NotFound, TurnQuery
from factledger.dashboard.figures import parse_time
from factledger.dashboard.highlight import kind_label
from factledger.dashboard.safe_text import markdown_text
from factledger.dashboard.screens import overview, turn_view
from factledger.processors.kinds import KIND_INFO, Kind

VERDICTS: dict[str, tuple[str, ...]] = {
    "rejected or flagged": ("reject", "flag"),
    "rejected": ("reject",),
    "flagged": ("flag",),
    "passed": ("pass",),
    "any": (),
}


def period_name(window: str) -> str:
    """The Turns period of an Overview window: `1 hour` -> `last hour`."""
    return "last " + window.removeprefix("1 ")


PERIODS: dict[str, timedelta | None] = {
    **{
        period_name(name): span
        for name, span in figures.WINDOWS.items()
        if span >= figures.WINDOWS[figures.DEFAULT_WINDOW]
    },
    "any time": None,
}
"""The Overview's windows from its default up, and any time."""
PAGE_SIZES = (50, 100, 200, 500, 1000)
"""Rows per page; the API answers at most 1,000 turns per call."""
DEFAULT_PAGE_SIZE = 100
ROW_HEIGHT = 88
"""Four lines of text: the grid wraps a cell's text only in rows taller than 4rem (64 px)."""
HEADER_HEIGHT = 38
ROWS_IN_VIEW = 12
"""The grid is as tall as this many rows (fewer when the page has fewer): about a
screen, scrolling inside for the rest of the page."""
PREVIEW_CHARS = 200
"""The API's reply_preview holds a reply's first 200 characters, cut anywhere."""
CELL_LINES = 4
"""Lines of why and reply per cell: what `ROW_HEIGHT` shows whole."""
CELL_PX_PER_CHAR = 7.5
"""A generous width of one character of the grid's font (wider than its average, so a
text measured with it wraps into no more lines in the grid than counted here)."""
CELL_PADDING = 16
"""The grid's padding inside a cell, both sides."""
COLUMN_WIDTHS = {
    "time": 130,
    "verdict": 62,
    "class": 50,
    "agent": 64,
    "model": 90,
    "kinds": 112,
    "why": 170,
    "reply": 170,
}
"""Starting (and least) widths in pixels, in column order; `column_widths` fits the name
columns to their names and gives why and reply the rest of GRID_WIDTH."""
FITTED = ("class", "agent", "model")
"""Columns of names, as wide as their longest: the grid breaks a word that does not fit."""
SHARED = ("why", "reply")
SHARED_MIN = 140
"""The least width of why and reply (four lines of about 20 characters each)."""
GRID_WIDTH = 910
"""The columns' width on a 1440-pixel screen (the grid's own row-selection column aside);
wider screens stretch them, narrower ones scroll."""
NAME_PX_PER_CHAR = 7
"""About the width of one character of the grid's font, to fit a column to its names."""
NAME_PADDING = 18
MAX_NAME_WIDTH = 180
ANY = "(any)"
VERDICT_COLOURS = {
    "reject": palette.REJECT_BACKGROUND,
    "flag": palette.FLAG_BACKGROUND,
    "pass": palette.NEUTRAL_BACKGROUND,
}
"""The pill colours of the verdict column, as on the turn page (`ui.verdict_html`)."""
_KEYS_WINDOW = timedelta(days=30)


def missing_turn_notice(turn_id: str) -> str:
    """The notice for a `?turn_id=` the store does not hold; the address is anyone's to
    write, so the id is shown as plain text."""
    return f"No turn {markdown_text(turn_id)} in the store (it may have expired)."


def render(api: ApiClient) -> None:
    turn_id = st.query_params.get("turn_id", "")
    if turn_id:
        if st.button("← All turns", type="tertiary"):
            del st.query_params["turn_id"]
            st.rerun()
        try:
            turn = api.turn(turn_id)
        except NotFound:
            st.info(missing_turn_notice(turn_id), icon=":material/search_off:")
            return
        turn_view.render_turn(turn)
        return
    _table(api)


def _table(api: ApiClient) -> None:
    st.title("Turns")
    models, agents, services = _known_keys(api)
    top = st.columns([2.4, 2, 2.6, 2, 2, 2], vertical_alignment="bottom")
    verdict = top[0].selectbox("Verdict", list(VERDICTS), key="turns_verdict")
    if "turns_period" not in st.session_state:
        now = datetime.now(UTC)
        st.session_state["turns_period"] = period_name(overview.first_window(api, now))
    period = top[1].selectbox("Time", list(PERIODS), key="turns_period")
    kind = top[2].selectbox(
        "Finding kind",
        [ANY, *(k.value for k in Kind)],
        format_func=lambda value: value if value == ANY else kind_label(value),
        key="turns_kind",
    )
    model = top[3].selectbox("Model", [ANY, *models], key="turns_model")
    agent = top[4].selectbox("Agent", [ANY, *agents], key="turns_agent")
    service = top[5].selectbox(
        "Service", [ANY, *services], key="turns_service", help="the spans' service.name"
    )
    second = st.columns([6, 2, 2], vertical_alignment="bottom")
    text = second[0].text_input(
        "Search in replies", key="turns_q", placeholder="a SHA, a ticket key, a phrase…"
    )
    size = second[1].selectbox(
        "Rows per page",
        PAGE_SIZES,
        index=PAGE_SIZES.index(DEFAULT_PAGE_SIZE),
        format_func=lambda n: f"{n:,}",
        key="turns_page_size",
    )

    span = PERIODS[period]
    query = TurnQuery(
        verdicts=VERDICTS[verdict],
        model="" if model == ANY else model,
        agent="" if agent == ANY else agent,
        service="" if service == ANY else service,
        kind="" if kind == ANY else kind,
        q=text,
        since=None if span is None else datetime.now(UTC) - span,
        limit=size,
    )
    # One page number per set of filters: changing a filter starts again at page 1.
    page_key = "turns_page_" + _filters_key(query, period)
    number = max(1, int(st.session_state.get(page_key, 1)))
    page = api.turns(replace(query, offset=(number - 1) * size))
    pages = page_count(page["total"], size)
    if number > pages:  # the turns matching shrank (a filter's period moved on)
        number = pages
        st.session_state[page_key] = number
        page = api.turns(replace(query, offset=(number - 1) * size))
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

    second[2].number_input(
        f"Page (of {pages:,})", min_value=1, max_value=pages, step=1, key=page_key
    )
    st.caption(page_caption(page["total"], number, size, len(page["turns"])))
    table = table_rows(page["turns"])
    widths = column_widths(table)
    event: Any = st.dataframe(
        table,
        hide_index=True,
        on_select="rerun",
        selection_mode="single-row",
        key="turns_table",
        row_height=ROW_HEIGHT,
        height=HEADER_HEIGHT + min(len(table), ROWS_IN_VIEW) * ROW_HEIGHT,
        column_order=tuple(COLUMN_WIDTHS),
        # Widths fitted to this page's names; see `column_widths`.
        column_config={
            "time": st.column_config.DatetimeColumn(
                "time (UTC)", format="YYYY-MM-DD HH:mm:ss", width=widths["time"]
            ),
            "verdict": st.column_config.MultiselectColumn(
                "verdict",
                options=list(VERDICT_COLOURS),
                color=list(VERDICT_COLOURS.values()),
                width=widths["verdict"],
            ),
            "class": st.column_config.TextColumn(
                "class",
                width=widths["class"],
                help="The hallucination classes of the turn's findings (docs/validators.md)",
            ),
            "agent": st.column_config.TextColumn("agent", width=widths["agent"]),
            "model": st.column_config.TextColumn("model", width=widths["model"]),
            "kinds": st.column_config.TextColumn("finding kinds", width=widths["kinds"]),
            "why": st.column_config.TextColumn(
                "why", width=widths["why"], help="The finding that decides the verdict"
            ),
            "reply": st.column_config.TextColumn(
                "reply", width=widths["reply"], help="Around the first flagged token"
            ),
        },
    )
    selected = event.selection.rows if event is not None else []
    if selected:
        st.query_params["turn_id"] = table[selected[0]]["turn"]
        st.rerun()


def table_rows(turns: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The grid's rows: time, verdict (a one-item list, for the coloured pill), class
    (the findings' hallucination classes), agent, model, kinds (readable,
    comma-separated), why (the deciding finding's message), reply (the window around its
    first flagged token, else its start; whole words only) and turn (the id a selected
    row opens). Cells are plain text: Markdown's code and emphasis marks are dropped,
    the identifiers inside them kept exactly."""
    rows = [
        {
            "time": parse_time(turn["started_at"]),
            "verdict": [turn["verdict"]],
            "class": classes_of(turn["kinds"]),
            "agent": turn["agent"],
            "model": turn["model"],
            "kinds": ", ".join(kind_label(k) for k in turn["kinds"]),
            "turn": turn["turn_id"],
        }
        for turn in turns
    ]
    widths = column_widths(rows)  # the name columns decide what why and reply get
    why_chars, reply_chars = (line_chars(widths[c]) for c in ("why", "reply"))
    for row, turn in zip(rows, turns, strict=True):
        preview = str(turn.get("flagged_preview") or turn["reply_preview"])
        why = plain_text(str(turn.get("why") or ""))
        row["why"] = fit_lines(why, why_chars, CELL_LINES)
        cut = len(preview) >= PREVIEW_CHARS
        row["reply"] = fit_lines(plain_text(preview), reply_chars, CELL_LINES, cut=cut)
    return rows


def line_chars(width_px: int) -> int:
    """The characters one line of a column `width_px` wide surely holds."""
    return max(1, int((width_px - CELL_PADDING) / CELL_PX_PER_CHAR))


def fit_lines(text: str, chars: int, lines: int, *, cut: bool = False) -> str:
    """`text` as `clip_words` shortens it, to the longest that wraps (word by word, at
    `chars` characters a line, a longer word taking the lines it needs) into `lines`
    lines, its `…` included: the grid then shows every word of a cell whole."""
    limit = len(" ".join(text.split()))
    shown = clip_words(text, limit, cut=cut)
    while limit > 0 and wrapped_lines(shown, chars) > lines:
        limit = len(shown.removesuffix("…")) - 1
        shown = clip_words(text, limit, cut=cut)
    return shown


def wrapped_lines(text: str, chars: int) -> int:
    """How many lines `text` takes when wrapped word by word at `chars` characters."""
    count, used = 0, 0
    for word in text.split():
        if used and used + 1 + len(word) <= chars:
            used += 1 + len(word)
            continue
        whole, rest = divmod(len(word), chars)
        count += whole + (1 if rest else 0)
        used = rest if rest else chars
    return count


_KINDS = {kind.value: kind for kind in Kind}
# Inline code (`x`), strong emphasis (**x**) and a heading's or list item's marker at a
# line's start. Single `_` and `*` are left alone: they are part of identifiers.
_MARKUP = re.compile(r"`+|\*\*|^\s{0,3}(?:#{1,6}|[-*+])\s+", re.MULTILINE)


def plain_text(text: str) -> str:
    """`text` without the Markdown marks a grid cell would show raw."""
    return _MARKUP.sub("", text)


def classes_of(kinds: Sequence[str]) -> str:
    """The distinct hallucination classes of `kinds`, in their order (`-` for none)."""
    found = [KIND_INFO[_KINDS[kind]].hallucination_class for kind in kinds if kind in _KINDS]
    shown = [c for c in dict.fromkeys(found) if c != "-"]
    return ", ".join(shown) or "–"


def name_width(names: Sequence[str], header: str) -> int:
    """A column as wide as its longest name (so none breaks mid-word), within bounds."""
    longest = max((len(name) for name in [*names, header]), default=0)
    fitted = longest * NAME_PX_PER_CHAR + NAME_PADDING
    return min(MAX_NAME_WIDTH, max(COLUMN_WIDTHS.get(header, 0), fitted))


def column_widths(rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Each column's width: the name columns fitted to this page's longest name, why and
    reply sharing what GRID_WIDTH leaves. Where that is less than `SHARED_MIN` each, the
    widest name columns give width back first (down to their starting widths: a long
    name then wraps), so the grid fits GRID_WIDTH without a horizontal scroll."""
    widths = dict(COLUMN_WIDTHS)
    for column in FITTED:
        widths[column] = name_width([str(row.get(column, "")) for row in rows], column)
    over = sum(w for c, w in widths.items() if c not in SHARED) + SHARED_MIN * len(SHARED)
    over -= GRID_WIDTH
    while over > 0:
        column = max(FITTED, key=lambda c: widths[c] - COLUMN_WIDTHS[c])
        spare = widths[column] - COLUMN_WIDTHS[column]
        if spare <= 0:
            break
        given = min(spare, over)
        widths[column] -= given
        over -= given
    rest = GRID_WIDTH - sum(w for c, w in widths.items() if c not in SHARED)
    for column in SHARED:
        widths[column] = max(SHARED_MIN, rest // len(SHARED))
    return widths


def clip_words(text: str, limit: int, *, cut: bool = False) -> str:
    """`text` on one line (whitespace runs become one space), at most `limit` characters
    and ending on a whole word with `…` when shortened. `cut`: the text was already cut
    somewhere (an API preview), so its last word may be partial and is dropped too."""
    flat = " ".join(text.split())
    if cut:
        head, space, _ = flat.rpartition(" ")
        flat = head if space else flat
    if len(flat) > limit:
        head, space, _ = flat[: limit + 1].rpartition(" ")
        flat = head if space and head else flat[:limit]
        cut = True
    return flat.rstrip(" ,;:-") + "…" if cut else flat


def page_count(total: int, size: int) -> int:
    """Pages of `size` rows that `total` matches fill (at least one)."""
    return max(1, -(-total // size))


def page_caption(total: int, number: int, size: int, shown: int) -> str:
    """`1,234 turns match; showing 101–200, newest first. Select a row to open the turn.`"""
    first = (number - 1) * size + 1
    return (
        f"{total:,} turns match; showing {first:,}–{first + shown - 1:,}, newest first. "
        "Select a row to open the turn."
    )


def _filters_key(query: TurnQuery, period: str) -> str:
    # The period by name: its start moves with the clock on every rerun.
    kept = (
        query.verdicts,
        query.model,
        query.agent,
        query.service,
        query.kind,
        query.q.strip(),
        period,
    )
    return hashlib.sha1(repr((kept, query.limit)).encode(), usedforsecurity=False).hexdigest()[:12]


def _known_keys(api: ApiClient) -> tuple[list[str], list[str], list[str]]:
    """Models, agents and services with turns in the last 30 days (the filter choices)."""
    now = datetime.now(UTC)
    since = now - _KEYS_WINDOW
    keys = [
        [s["key"] for s in api.reject_rate(group_by=group, bucket="1d", since=since, until=now)]
        for group in ("model", "agent", "service")
    ]
    return keys[0], keys[1], keys[2]
