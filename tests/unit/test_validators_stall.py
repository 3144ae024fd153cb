"""Stalls: a closing promise with no tool call, and the hand-over of a group chat."""

from __future__ import annotations

from typing import Any

import pytest

from factledger.processors.assembly.transcript import turn_from_transcript
from factledger.processors.model import Turn
from factledger.processors.validators.stall import StallValidator
from tests.unit.transcripts import kinds_of

PROMISE = "I'll look up the current ticket prices first. Please hold on while I gather them."


def group_chat(reply: str, *, speaker: str = "Pricing_Expert") -> dict[str, Any]:
    """A group chat as its members' messages carry it: each with the speaker's `name`."""
    return {
        "model": "test-model",
        "tools": [],
        "messages": [
            {"role": "user", "name": "Planner", "content": "Find the museum's ticket prices."},
            {"role": "user", "name": "Budget_Expert", "content": "I'll do the sums after."},
            {"role": "assistant", "name": speaker, "content": reply},
        ],
    }


def single_agent(reply: str, *, name: str | None = None) -> dict[str, Any]:
    reply_message: dict[str, Any] = {"role": "assistant", "content": reply}
    if name:
        reply_message["name"] = name
    return {
        "model": "test-model",
        "tools": [],
        "messages": [{"role": "user", "content": "What do tickets cost?"}, reply_message],
    }


# A promise handed to the group: the next speaker picks it up.
HAND_OVER = [
    pytest.param(group_chat(PROMISE), id="group-chat-member-please-hold-on"),
    pytest.param(
        group_chat("Next, I'll fetch the annual pass prices to compare."),
        id="group-chat-member-next-ill-fetch",
    ),
    pytest.param(
        group_chat("One moment, let me check.", speaker="Budget_Expert"),
        id="group-chat-member-who-spoke-before",
    ),
]

# The same promise where nobody else will pick it up: still a stall.
STILL_A_STALL = [
    pytest.param(single_agent("One moment, let me check."), id="single-agent-one-moment"),
    pytest.param(single_agent(PROMISE, name="Pricing_Expert"), id="named-agent-alone-with-user"),
    pytest.param(
        {
            "model": "test-model",
            "tools": [],
            "messages": [
                {"role": "user", "name": "alice", "content": "What do tickets cost?"},
                {"role": "assistant", "content": PROMISE},
            ],
        },
        id="named-user-unnamed-agent",
    ),
]


@pytest.mark.parametrize("transcript", HAND_OVER)
def test_a_promise_to_the_group_chat_is_a_hand_over(transcript: dict[str, Any]) -> None:
    assert "stall" not in kinds_of(transcript)


@pytest.mark.parametrize("transcript", STILL_A_STALL)
def test_a_promise_nobody_picks_up_is_a_stall(transcript: dict[str, Any]) -> None:
    assert "stall" in kinds_of(transcript)


@pytest.mark.parametrize(
    ("agent", "participants", "stall"),
    [
        ("Pricing_Expert", ("Pricing_Expert", "Budget_Expert"), False),
        ("Pricing_Expert", ("Pricing_Expert",), True),
        ("Pricing_Expert", ("Budget_Expert", "Planner"), True),
        ("", ("Budget_Expert", "Planner"), True),
        ("lead", (), True),
    ],
    ids=[
        "one-of-several-participants",
        "only-participant",
        "agent-not-among-participants",
        "unnamed-agent",
        "participants-unknown",
    ],
)
def test_group_chat_is_decided_by_the_turns_participants(
    agent: str, participants: tuple[str, ...], stall: bool
) -> None:
    turn = Turn(reply=PROMISE, agent=agent, participants=participants)
    assert bool(StallValidator()(turn)) is stall


def test_transcript_names_give_the_agent_and_participants() -> None:
    turn = turn_from_transcript(group_chat(PROMISE))
    assert turn.agent == "Pricing_Expert"
    assert turn.participants == ("Planner", "Budget_Expert", "Pricing_Expert")
    assert turn_from_transcript(single_agent(PROMISE, name="Pricing_Expert")).participants == ()
