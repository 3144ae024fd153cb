"""The Turns table's rows: coloured verdicts, readable kinds, the reason for a verdict,
text cut on whole words, and the pages past the first."""

from __future__ import annotations

from typing import Any

import pytest

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
    assert row["reply"].endswith("…") and len(row["reply"]) <= turns.CELL_CHARS + 1
    assert LONG_REPLY.startswith(row["reply"].removesuffix("…") + " ")


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
