"""Invented inputs (class 4b, `ungrounded_tool_argument`): one table per rule of what
grounds an argument and what is no input at all."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.transcripts import Call, chat, kinds_of, tool

KIND = "ungrounded_tool_argument"


def _long_session(first_user: str, filler: int = 12) -> list[dict[str, Any]]:
    """A first user message, then `filler` user/assistant exchanges about other things."""
    history: list[dict[str, Any]] = [
        {"role": "user", "content": first_user},
        {"role": "assistant", "content": "Noted."},
    ]
    for i in range(filler):
        history.append({"role": "user", "content": f"Also, what does step {i} of the guide say?"})
        history.append({"role": "assistant", "content": "It says to check the cable."})
    return history


WHOLE_CONVERSATION = [
    pytest.param(
        chat(
            "",
            history=_long_session("My order number is 7719304, the blue kettle."),
            user="Okay, now cancel that order please.",
            calls=[Call("cancel_order", {"order_id": "7719304"})],
        ),
        False,
        id="user-value-beyond-the-ten-message-window-grounds",
    ),
    pytest.param(
        chat(
            "",
            history=_long_session("Hi, I have a question about my kettle."),
            user="Okay, now cancel that order please.",
            calls=[Call("cancel_order", {"order_id": "7719304"})],
        ),
        True,
        id="value-nobody-gave-in-a-long-session-still-flagged",
    ),
]


@pytest.mark.parametrize(("transcript", "flagged"), WHOLE_CONVERSATION)
def test_user_values_anywhere_in_the_conversation(
    transcript: dict[str, Any], flagged: bool
) -> None:
    assert (KIND in kinds_of(transcript)) is flagged
