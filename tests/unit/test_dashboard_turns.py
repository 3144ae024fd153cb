"""The Turns table's rows: coloured verdicts, classes, readable kinds, the reason for a
verdict, plain text cut on whole words, the reply around its flagged token, names that
never break mid-word, the pages past the first, and the Overview's default window."""

from __future__ import annotations

from typing import Any

import pytest

from factledger.dashboard import figures
from factledger.dashboard.screens import turns

LONG_REPLY = (
    "## Summary of changes - src/app/config.py now builds the path with pathlib.Path - "
    "the os import is gone and load_config reads the YAML file through yaml.safe_load, "
    "which the tests in tests/test_config.py cover alre"
)


def summary(**overrides: Any) -> dict[str, Any]:
    turn = {
        "turn_id": "a1b2",
        "started_at": "2025-03-01T12:00:05Z",
        "verdict": "reject",
        "agent": "coder",
        "model": "gpt-4o",
        "kinds": ["fabricated_identifier", "summary_without_action"],
        "reply_preview": "The commit 4f2a9c1 is on main.",
        "why": "4f2a9c1 is in no tool result",
    }
    return {**turn, **overrides}


@pytest.mark.parametrize(
    ("text", "limit", "cut", "expected"),
    [
        pytest.param("short and whole", 80, False, "short and whole", id="short-stays-whole"),
        pytest.param("a  reply\nover\tlines", 80, False, "a reply over lines", id="one-line"),
        pytest.param(
            "the turn ends with a promise to act", 19, False, "the turn ends with…", id="on-a-word"
        ),
        pytest.param("the turn ends, then", 15, False, "the turn ends…", id="no-dangling-comma"),
        pytest.param("abcdefghijklmnop", 5, False, "abcde…", id="one-long-word-is-cut"),
        pytest.param(
            "I sent the e-mail to Far", 80, True, "I sent the e-mail to…", id="a-cut-preview"
        ),
        pytest.param("", 80, False, "", id="empty"),
    ],
)
def test_clip_words(text: str, limit: int, cut: bool, expected: str) -> None:
    assert turns.clip_words(text, limit, cut=cut) == expected


def test_a_clipped_reply_never_ends_inside_a_word() -> None:
    for limit in range(10, len(LONG_REPLY)):
        shown = turns.clip_words(LONG_REPLY, limit, cut=True)
        kept = shown.removesuffix("…")
        assert shown.endswith("…") and len(kept) <= limit
        assert LONG_REPLY.startswith(kept)
        assert LONG_REPLY[len(kept)] in " ,;:-", (limit, shown)


def test_table_rows_give_the_verdict_pill_readable_kinds_and_the_reason() -> None:
    (row,) = turns.table_rows([summary()])
    assert row["verdict"] == ["reject"]
    assert row["class"] == "1, 4"
    assert row["kinds"] == "fabricated identifier, summary without action"
    assert row["why"] == "4f2a9c1 is in no tool result"
    assert row["reply"] == "The commit 4f2a9c1 is on main."
    assert row["turn"] == "a1b2"
    assert row["time"].isoformat() == "2025-03-01T12:00:05+00:00"


def test_table_rows_cut_a_full_preview_on_a_word_and_take_a_missing_reason_as_none() -> None:
    preview = (LONG_REPLY + " " * turns.PREVIEW_CHARS)[: turns.PREVIEW_CHARS]
    turn = summary(reply_preview=preview)
    del turn["why"]  # a service from before the field
    (row,) = turns.table_rows([turn])
    assert row["why"] == ""
    chars = turns.line_chars(turns.column_widths([row])["reply"])
    assert row["reply"].endswith("…")
    assert turns.wrapped_lines(row["reply"], chars) <= turns.CELL_LINES
    plain = turns.plain_text(LONG_REPLY)
    assert plain.startswith(row["reply"].removesuffix("…") + " ")


@pytest.mark.parametrize(
    ("text", "chars", "lines"),
    [
        pytest.param("", 17, 0, id="empty"),
        pytest.param("one line", 17, 1, id="one-line"),
        pytest.param("seventeen chars x", 17, 1, id="exactly-a-line"),
        pytest.param("seventeen chars xy", 17, 2, id="one-over"),
        pytest.param("tests/test_cache_eviction.py is", 17, 2, id="a-word-over-a-line"),
        pytest.param("a" * 34 + " b", 17, 3, id="a-word-of-two-whole-lines"),
    ],
)
def test_wrapped_lines(text: str, chars: int, lines: int) -> None:
    assert turns.wrapped_lines(text, chars) == lines


REASONS = [
    "key OPS-2925 appears in no tool result of this turn and nowhere in the conversation",
    "tests/test_cache_eviction.py is one of 4 names presented as existing that no tool shows",
    "send_email argument to='dana.ops@acme.example' appears nowhere in the request",
    "the reply says retry_with_backoff does not exist, but a tool result of this turn shows it",
    "short",
]


@pytest.mark.parametrize("chars", [12, 17, 20, 25, 40])
@pytest.mark.parametrize("text", REASONS)
def test_a_cell_holds_whole_words_in_its_lines(text: str, chars: int) -> None:
    shown = turns.fit_lines(text, chars, turns.CELL_LINES)
    assert turns.wrapped_lines(shown, chars) <= turns.CELL_LINES
    kept = shown.removesuffix("…")
    assert text.startswith(kept)
    assert len(kept) == len(text) or text[len(kept)] in " ,;:-", shown
    if shown == text:
        return
    # The longest such prefix: one more word would not fit.
    more = kept + " " + text[len(kept) :].split()[0] + "…"
    assert turns.wrapped_lines(more, chars) > turns.CELL_LINES, shown


def test_every_verdict_has_a_pill_colour_apart_from_the_others() -> None:
    assert set(turns.VERDICT_COLOURS) == {"reject", "flag", "pass"}
    assert len(set(turns.VERDICT_COLOURS.values())) == 3


@pytest.mark.parametrize(
    ("total", "size", "pages"),
    [(0, 50, 1), (1, 50, 1), (50, 50, 1), (51, 50, 2), (1234, 100, 13), (10_000, 1000, 10)],
)
def test_page_count(total: int, size: int, pages: int) -> None:
    assert turns.page_count(total, size) == pages


def test_page_caption_names_the_rows_shown() -> None:
    assert turns.page_caption(1234, 3, 100, 100) == (
        "1,234 turns match; showing 201–300, newest first. Select a row to open the turn."
    )
    assert turns.page_caption(150, 3, 50, 50).startswith("150 turns match; showing 101–150,")


def test_page_sizes_reach_the_apis_largest_page() -> None:
    assert turns.DEFAULT_PAGE_SIZE in turns.PAGE_SIZES
    assert max(turns.PAGE_SIZES) == 1000
    assert turns.ROW_HEIGHT > 64  # the grid wraps text only in rows taller than 4rem


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        pytest.param(
            "the reply says `retry_with_backoff` does not exist",
            "the reply says retry_with_backoff does not exist",
            id="code-marks-go-identifiers-stay-exact",
        ),
        pytest.param("## Summary of changes", "Summary of changes", id="heading-marker"),
        pytest.param("- src/app/config.py now", "src/app/config.py now", id="list-marker"),
        pytest.param("**done** for __init__.py", "done for __init__.py", id="bold-not-dunder"),
        pytest.param("a * b - c", "a * b - c", id="operators-mid-line-stay"),
    ],
)
def test_cells_are_plain_text(text: str, shown: str) -> None:
    assert turns.plain_text(text) == shown


def test_the_reply_cell_shows_the_window_around_the_flagged_token() -> None:
    window = "…the call send_email failed, but the reply says it was sent to Dana."
    (row,) = turns.table_rows([summary(reply_preview="Hello " * 40, flagged_preview=window)])
    assert row["reply"].startswith("…the call send_email failed")


def test_class_column_names_each_class_once_and_a_dash_for_none() -> None:
    assert turns.classes_of(["fabricated_identifier", "ungrounded_quantity"]) == "1"
    assert turns.classes_of(["validator_error"]) == "–"
    assert turns.classes_of(["not_a_kind"]) == "–"


def test_a_name_column_is_as_wide_as_its_longest_name() -> None:
    narrow = turns.name_width(["coder", "support"], "agent")
    wide = turns.name_width(["research-assistant-v2"], "agent")
    assert len("support") * turns.NAME_PX_PER_CHAR <= narrow < wide
    assert wide >= len("research-assistant-v2") * turns.NAME_PX_PER_CHAR
    assert turns.name_width(["x" * 500], "agent") == turns.MAX_NAME_WIDTH


def test_why_and_reply_share_what_the_name_columns_leave() -> None:
    rows = turns.table_rows([summary(agent="support", model="llama-3.1-70b")])
    widths = turns.column_widths(rows)
    assert widths["model"] >= len("llama-3.1-70b") * turns.NAME_PX_PER_CHAR
    assert widths["why"] == widths["reply"] >= turns.COLUMN_WIDTHS["why"]
    assert sum(widths.values()) <= turns.GRID_WIDTH
    crowded = turns.column_widths([{"agent": "a" * 40, "model": "m" * 40, "class": "c" * 40}])
    assert crowded["why"] == crowded["reply"] >= turns.SHARED_MIN
    assert sum(crowded.values()) <= turns.GRID_WIDTH  # the long names give width back
    for column in turns.FITTED:
        assert crowded[column] >= turns.COLUMN_WIDTHS[column]


OPENED = list(figures.WINDOWS)[list(figures.WINDOWS).index(figures.DEFAULT_WINDOW) :]
"""The windows a first visit of the Overview may open (`figures.fitting_window`)."""


@pytest.mark.parametrize("window", OPENED)
def test_every_window_the_overview_opens_is_a_turns_period_of_the_same_span(window: str) -> None:
    assert turns.PERIODS[turns.period_name(window)] == figures.WINDOWS[window]
