"""The reply window a turn list shows: its start when the flagged token is near it, else
from a whole word at most LEAD_CHARS before the token, led by an ellipsis."""

from __future__ import annotations

import pytest

from factledger.collector.store.preview import LEAD_CHARS, WINDOW_CHARS, flagged_window

LONG = "word " * 60 + "the call send_email succeeded" + " and more" * 30


def test_a_token_near_the_start_keeps_the_reply_start() -> None:
    reply = "Sent it: OPS-1 " + "x" * 300
    assert flagged_window(reply, 9, 14) == reply[:WINDOW_CHARS]


def test_a_late_token_is_shown_with_its_lead() -> None:
    start = LONG.index("send_email")
    window = flagged_window(LONG, start, start + len("send_email"))
    assert window.startswith("…word ")  # a whole word after the ellipsis
    assert "send_email" in window and window.index("send_email") <= LEAD_CHARS + 1
    assert len(window) <= WINDOW_CHARS


def test_a_cut_inside_a_word_starts_after_it() -> None:
    reply = "a" * 100 + " bb" + "c" * 30 + " TOKEN_X end"
    start = reply.index("TOKEN_X")
    window = flagged_window(reply, start, start + 7)
    assert window.startswith("…") and not window.startswith("…a")
    assert "TOKEN_X" in window


def test_a_token_without_spaces_before_it_starts_the_window() -> None:
    reply = "z" * 300 + "TOKEN"
    start = reply.index("TOKEN")
    assert flagged_window(reply, start, start + 5) == "…TOKEN"


@pytest.mark.parametrize("span", [(-1, 3), (5, 5), (10, 10_000)], ids=str)
def test_offsets_outside_the_reply_give_its_start(span: tuple[int, int]) -> None:
    assert flagged_window(LONG, *span) == LONG[:WINDOW_CHARS]
